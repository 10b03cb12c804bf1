"""Parallel provers on Ray: theorems per hour with 1 and with N workers (``--num-workers``).

    uv run python tools/bench/prove_workers.py                       # 1 vs 2 workers
    uv run python tools/bench/prove_workers.py --theorems 40 --latency 0.1 --workers 1 2 4

In real runs Lean, not the generator, is the bottleneck; here the replay backend (the traced
proofs of ``--data``, default LB4's mathlib sample) is given a simulated Lean latency: each
tactic waits ``--latency`` seconds and each theorem's start ``--startup`` seconds (a sleep: Lean
working in its own process). The generator is an oracle over the traced tactics (one wrong
tactic first, then the traced ones of the state), waiting ``--gen-latency`` + ``--gen-per-state``
× states per call, so every worker count proves the same theorems with the same searches. One
worker is ``leantrain prove``'s in-process path (no Ray); N workers run on a local Ray instance
started once before the runs, and their theorems per hour are given both over the proving time
(``generation_service.proving_s``: the workers ready, to the last row) and end to end (the
actors' start-up included). The shared generator's batch fill is states per call over the most a
call can hold (workers × expansion batch). Prints a Markdown table; ``--json FILE`` writes it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from leantrain.prover import Prover, ReplayBackend
from leantrain.prover.replay import ReplaySession
from leantrain.prover.theorems import load_split

ROOT = Path(__file__).resolve().parents[2]


class SlowReplay(ReplayBackend):
    """Replay with a simulated Lean latency (the bench's, not the product's)."""

    def __init__(self, latency: float, startup: float) -> None:
        self.latency, self.startup = latency, startup

    def start(self, theorem):
        time.sleep(self.startup)
        return SlowSession(theorem, self.latency)


class SlowSession(ReplaySession):
    def __init__(self, theorem, latency: float) -> None:
        super().__init__(theorem)
        self.latency = latency

    def run(self, state, tactic):
        time.sleep(self.latency)
        return super().run(state, tactic)


class Oracle:
    """A wrong tactic, then the traced tactics of the state; a simulated generation time."""

    def __init__(self, theorems, base: float, per_state: float) -> None:
        self.table: dict[str, list[tuple[str, float]]] = {}
        for t in theorems:
            for tt in t.traced_tactics:
                self.table.setdefault(tt.state_before, []).append((tt.tactic, -0.5))
        self.base, self.per_state = base, per_state

    def propose(self, states, k):
        time.sleep(self.base + self.per_state * len(states))
        return [[("nonsense", -0.1), *self.table.get(s, [])][:k] for s in states]


def run(args: argparse.Namespace, workers: int, theorems, out: Path) -> dict:
    t0 = time.monotonic()
    summary = Prover(
        tactic_generator=Oracle(theorems, args.gen_latency, args.gen_per_state),
        lean_backend=SlowReplay(args.latency, args.startup),
        data=str(args.data),
        max_theorems=args.theorems,
        max_expansions=args.max_expansions,
        num_sampled_tactics=args.k,
        output_dir=str(out),
        progress_bar=False,
        num_workers=workers,
    ).evaluate()
    wall = time.monotonic() - t0
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    service = summary.get("generation_service", {})
    proving = service.get("proving_s", wall)
    n = summary["attempted"]
    return {
        "workers": workers,
        "theorems": n,
        "proved": summary["proved"],
        "proved_set": sorted(r["full_name"] for r in rows if r["proved"]),
        "lean_calls": summary["ledger"]["lean_calls"],
        "expansions": summary["ledger"]["expansions"],
        "wall_s": round(wall, 2),
        "proving_s": round(proving, 2),
        "theorems_per_hour": round(3600 * n / proving, 1),
        "theorems_per_hour_end_to_end": round(3600 * n / wall, 1),
        "generator_calls": service.get("generator_calls"),
        "states_per_call": service.get("states_per_call"),
        "batch_fill": service.get("batch_fill"),
        "load_before_after": None,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=ROOT / "../shared/data/mathlib-sample/test.json")
    p.add_argument("--theorems", type=int, default=24)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--latency", type=float, default=0.05, help="simulated seconds per tactic")
    p.add_argument("--startup", type=float, default=0.2, help="simulated seconds per start")
    p.add_argument("--gen-latency", type=float, default=0.005)
    p.add_argument("--gen-per-state", type=float, default=0.001)
    p.add_argument("--max-expansions", type=int, default=20)
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    args.data = args.data.resolve()
    if not args.data.exists():
        sys.exit(f"error: --data {args.data} does not exist (the shared Lean data)")
    theorems = load_split(args.data, "test", limit=args.theorems)
    if max(args.workers) > 1:
        import ray

        ray.init(
            num_cpus=max(max(args.workers), os.cpu_count() or 1),
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": str(Path(__file__).resolve().parent)}},
        )
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for w in args.workers:
            before = os.getloadavg()[0]
            r = run(args, w, theorems, Path(tmp) / f"w{w}")
            r["load_before_after"] = [round(before, 1), round(os.getloadavg()[0], 1)]
            results.append(r)
    base = results[0]
    print(
        f"{args.theorems} theorems of {args.data.name}, latency {args.latency} s/tactic, "
        f"start {args.startup} s, k {args.k}, ≤ {args.max_expansions} expansions, "
        f"{os.cpu_count()} cores\n"
    )
    print("| workers | proved | Lean calls | proving s | theorems/h | × 1 worker | end to end s | theorems/h e2e | generator calls | states/call | batch fill | same proved set | load |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for r in results:
        fill = "" if r["batch_fill"] is None else f"{r['batch_fill']:.2f}"
        spc = "" if r["states_per_call"] is None else f"{r['states_per_call']:.2f}"
        print(
            f"| {r['workers']} | {r['proved']}/{r['theorems']} | {r['lean_calls']} | "
            f"{r['proving_s']} | {r['theorems_per_hour']} | "
            f"{r['theorems_per_hour'] / base['theorems_per_hour']:.2f}× | {r['wall_s']} | "
            f"{r['theorems_per_hour_end_to_end']} | {r['generator_calls'] or ''} | {spc} | "
            f"{fill} | {r['proved_set'] == base['proved_set']} | "
            f"{r['load_before_after'][0]} → {r['load_before_after'][1]} |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
