"""Prover benchmark: best-first search speed on CPU (batched generation over the frontier vs one
state at a time) and the replay proof rate on the LB4 head test theorems.

Data: the LB4 head export (``leantrain export import`` / ``export merge`` of
``../shared/data/leandojo-benchmark-4-head``, made here by ``quality.make_exports`` unless
``--data`` names one); the generator is SmolLM2-135M-Instruct (``quality.fetch_smollm2``),
untrained and SFT-trained (``--sft RUN``, else ``leantrain sft`` is run here).

* throughput — the same theorems, generator, k and expansion budget, searched twice in the same
  process, alternating which mode goes first per theorem: ``--expansion-batch 1`` (one state per
  ``generate`` call) and ``--expansion-batch B`` with generation batch ``B`` (the ``B`` best open
  states in one call). The backend is synthetic so that the frontier grows: every tactic
  succeeds and leads to a real LB4 proof state chosen by a hash of (state, tactic) from the
  export's train states, never to a proof, so each search runs exactly its expansion budget.
  Expansions and tactics generated (distinct, non-empty candidates the generator returned) per
  second of search wall time, and the ratio batched / one.
* proof-rate — ``Prover`` with the ``replay`` backend on the first N test theorems (random split)
  that have a traced proof (the replay backend can start no other), for the untrained and the
  SFT generator, each without and with a progress model (``--progress RUN``, else
  ``leantrain progress train --model tiny`` on the export, as ``quality.run_progress``), and the
  retriever when the prover has a ``retriever`` setting and ``--retriever`` is given. The
  **replay proof rate** counts a tactic only when it equals a traced one (whitespace
  normalised): a lower bound on the real proof rate. The replay ceiling — the traced tactics
  themselves proposed as the generator — at the same budget. Results per configuration are
  written under ``WORK/proofs/<config>`` (rerunning resumes).

    uv run python tools/bench/prover.py --work /tmp/leantrain-prover [--data EXPORT]
        [--sft RUN] [--progress RUN] [--sections throughput,proof-rate] [--json results.json]
    uv run python tools/bench/prover.py --render results.json [more.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality import fetch_smollm2, load_state, machine, make_exports, run_progress


def log(msg: str) -> None:
    print(f"[prover {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def uptime() -> str:
    """``uptime``'s line (the machine is shared: its load is part of every figure)."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return f"loadavg {os.getloadavg()}"


def git_commit(path: Path) -> str:
    """The commit checked out where ``path`` is (the code the figures were measured with)."""
    res = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return res.stdout.strip() or "unknown"


LABELS = {
    "ceiling": "replay ceiling (the traced tactics fed back as the generator)",
    "untrained": "SmolLM2-135M-Instruct, untrained",
    "sft": "SmolLM2-135M-Instruct, SFT",
}


def label(config: str) -> str:
    """``"sft+progress"`` -> ``"SmolLM2-135M-Instruct, SFT + progress model"``."""
    head, *extras = [p.strip() for p in config.split("+")]
    names = {"progress": "progress model", "retriever": "retriever"}
    return " + ".join([LABELS.get(head, head), *(names.get(e, e) for e in extras)])


# -- pure helpers (tools/tests/test_bench_prover.py) ----------------------------------------------
def with_traced_proof(theorems: Iterable[Any]) -> list[Any]:
    """The theorems that have a traced tactic (the only ones the replay backend can start)."""
    return [t for t in theorems if any(x.tactic.strip() for x in t.traced_tactics)]


def state_pool(theorems: Iterable[Any]) -> list[str]:
    """The distinct proof states before the traced tactics of ``theorems``, sorted (no
    ``no goals``)."""
    return sorted(
        {
            x.state_before
            for t in theorems
            for x in t.traced_tactics
            if x.state_before.strip() and x.state_before.strip() != "no goals"
        }
    )


class EveryTacticSession:
    """Every tactic succeeds; the state after is ``pool[hash(state, tactic)]`` (never a proof)."""

    def __init__(self, initial: str, pool: Sequence[str]) -> None:
        from leantrain.prover.backend import State

        self.initial_state = State(initial)
        self.pool = pool

    def run(self, state: Any, tactic: str) -> Any:
        from leantrain.core.lean_text import normalize_tactic
        from leantrain.prover.backend import Outcome, State

        digest = hashlib.sha256(f"{state.pp}\0{normalize_tactic(tactic)}".encode()).digest()
        return Outcome(
            "state", State(self.pool[int.from_bytes(digest[:8], "big") % len(self.pool)])
        )

    def close(self) -> None:
        """Nothing to release."""


class EveryTacticBackend:
    """Synthetic backend of the throughput section: the frontier grows by k states per
    expansion, all of them real proof states (``pool``), so every search uses its whole budget."""

    name = "every-tactic (synthetic)"
    metric = "none (throughput only)"

    def __init__(self, pool: Sequence[str]) -> None:
        if not pool:
            raise ValueError("an empty state pool")
        self.pool = list(pool)

    def start(self, theorem: Any) -> EveryTacticSession:
        first = next(x.state_before for x in theorem.traced_tactics if x.tactic.strip())
        return EveryTacticSession(first, self.pool)


class TracedTacticsGenerator:
    """The replay ceiling's generator: for a state, the traced tactics of ``theorems`` from that
    state (whitespace-normalised match), in trace order, each with log-probability 0."""

    def __init__(self, theorems: Iterable[Any]) -> None:
        from leantrain.core.lean_text import normalize_tactic, normalize_whitespace

        self._norm = normalize_whitespace
        self.by_state: dict[str, list[str]] = {}
        for t in theorems:
            for x in t.traced_tactics:
                if not x.tactic.strip():
                    continue
                tactics = self.by_state.setdefault(normalize_whitespace(x.state_before), [])
                if all(normalize_tactic(x.tactic) != normalize_tactic(y) for y in tactics):
                    tactics.append(x.tactic)

    def propose(self, states: Sequence[str], k: int) -> list[list[tuple[str, float]]]:
        return [[(t, 0.0) for t in self.by_state.get(self._norm(s), [])[:k]] for s in states]


class CountingGenerator:
    """Wraps a generator; counts calls, states, tactics returned, prompt characters and time."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = self.states = self.tactics = self.prompt_chars = 0
        self.seconds = 0.0

    def propose(
        self, states: Sequence[str], k: int, premises: Sequence[Sequence[str]] | None = None
    ) -> list[list[tuple[str, float]]]:
        t = time.perf_counter()
        if premises is None:
            out = self.inner.propose(states, k)
        else:
            out = self.inner.propose(states, k, premises=premises)
        self.seconds += time.perf_counter() - t
        self.calls += 1
        self.states += len(states)
        self.tactics += sum(len(x) for x in out)
        self.prompt_chars += sum(len(s) for s in states)
        return list(out)


def speed(rows: Sequence[dict], counter: CountingGenerator) -> dict:
    """Throughput of one mode from its result rows and its generator's counts."""
    wall = sum(r["time_s"] for r in rows)
    expansions = sum(r["expansions"] for r in rows)
    return {
        "theorems": len(rows),
        "expansions": expansions,
        "tactics_generated": counter.tactics,
        "tactics_tried": sum(r["tactics_tried"] for r in rows),
        "generate_calls": counter.calls,
        "search_wall_s": round(wall, 2),
        "generator_s": round(counter.seconds, 2),
        "expansions_per_s": expansions / wall if wall else 0.0,
        "tactics_per_s": counter.tactics / wall if wall else 0.0,
        "mean_prompt_chars": counter.prompt_chars / counter.states if counter.states else 0.0,
    }


def slug(name: str) -> str:
    """``"SFT + progress"`` -> ``"sft-progress"`` (a configuration's output directory)."""
    out = "".join(c if c.isalnum() else "-" for c in name.lower())
    return "-".join(p for p in out.split("-") if p)


# -- throughput -----------------------------------------------------------------------------------
def run_throughput(
    generator: str, data: Path, n: int, expansions: int, batch: int, k: int, max_new_tokens: int
) -> dict:
    """One state at a time vs ``batch`` states per call, interleaved theorem by theorem."""
    from leantrain.prover import Prover
    from leantrain.prover.generator import HFGenerator
    from leantrain.prover.theorems import load_split

    theorems = with_traced_proof(load_split(data, "test"))[:n]
    pool = state_pool(load_split(data, "train"))
    backend = EveryTacticBackend(pool)
    log(f"throughput: loading {generator}")
    hf = HFGenerator.from_pretrained(
        generator, device="cpu", max_new_tokens=max_new_tokens, batch_size=batch
    )
    hf.propose([backend.start(theorems[0]).initial_state.pp], k)  # warm-up, not timed
    modes = {"one": 1, "batched": batch}
    counters = {m: CountingGenerator(hf) for m in modes}
    provers = {
        m: Prover(
            {
                "generator": generator,
                "num_sampled_tactics": k,
                "max_expansions": expansions,
                "timeout": 3600.0,
                "expansion_batch": b,
                "generation_batch_size": batch,
                "max_new_tokens": max_new_tokens,
                "device": "cpu",
                "progress_bar": False,
            },
            tactic_generator=counters[m],
            lean_backend=backend,
        )
        for m, b in modes.items()
    }
    rows: dict[str, list[dict]] = {m: [] for m in modes}
    loads = [load_state()]
    for i, theorem in enumerate(theorems):
        order = list(modes) if i % 2 == 0 else list(modes)[::-1]
        for m in order:
            row = provers[m].prove(theorem, "test")
            rows[m].append(row)
            log(
                f"throughput {m}: {theorem.full_name}: {row['expansions']} expansions, "
                f"{row['tactics_tried']} tactics in {row['time_s']:.1f}s"
            )
        loads.append(load_state())
    res = {m: speed(rows[m], counters[m]) for m in modes}
    one, batched = res["one"], res["batched"]
    return {
        "modes": res,
        "ratio_expansions_per_s": batched["expansions_per_s"] / one["expansions_per_s"]
        if one["expansions_per_s"]
        else None,
        "ratio_tactics_per_s": batched["tactics_per_s"] / one["tactics_per_s"]
        if one["tactics_per_s"]
        else None,
        "config": {
            "generator": generator,
            "theorems": [t.full_name for t in theorems],
            "k": k,
            "max_expansions": expansions,
            "expansion_batch": batch,
            "generation_batch_size": batch,
            "decoding": "beam",
            "max_new_tokens": max_new_tokens,
            "state_pool": len(pool),
            "backend": EveryTacticBackend.name,
        },
        "loads": loads,
        "uptime_end": uptime(),
    }


# -- proof rate -----------------------------------------------------------------------------------
def train_sft(base: Path, data: Path, out: Path, steps: int) -> Path:
    """``leantrain sft`` of ``base`` on ``data`` (batch 8, lr 5e-5, seed 0), once."""
    from quality import leantrain

    if not (out / ".leantrain").exists():
        leantrain(
            "sft", "--model", str(base), "--data", str(data), "--output-dir", str(out),
            "--max-steps", str(steps), "--per_device_train_batch_size", "8",
            "--learning_rate", "5e-5", "--evaluate_each_repo", "false", "--seed", "0",
        )  # fmt: skip
    return out


def progress_model(data: Path, work: Path, steps: int) -> tuple[Path, dict | None]:
    """A progress run trained on ``data`` by ``quality.run_progress`` (kept in
    ``work/progress-run``; reused when already there)."""
    out, scores = work / "progress-run", work / "progress-quality.json"
    if (out / ".leantrain").exists() and (out / "manifest.json").is_file():
        log(f"progress: reusing {out}")
        return out, json.loads(scores.read_text(encoding="utf-8")) if scores.is_file() else None
    log("progress: training leantrain progress train --model tiny")
    trained = run_progress(data, steps, work)
    scores.write_text(json.dumps(trained, indent=2) + "\n", encoding="utf-8")
    return out, trained


def zero_shot_retriever(work: Path) -> Path:
    """all-MiniLM-L6-v2 untrained (``quality.fetch_minilm``), saved as a premise retriever with
    the quality bench's encoding settings (``quality.RETRIEVAL``), once."""
    from quality import RETRIEVAL, fetch_minilm

    out = work / "minilm-retriever"
    if not (out / "retriever.json").is_file():
        from leantrain.retrieval import PremiseRetriever

        log(f"retriever: saving zero-shot MiniLM to {out}")
        PremiseRetriever.from_pretrained(fetch_minilm(work), **RETRIEVAL).save_pretrained(out)
    return out


def run_config(
    name: str,
    theorems: list,
    settings: dict,
    out: Path,
    generator: Any,
    progress: Any,
    cap_s: float,
    report_only: bool = False,
) -> dict:
    """One configuration through ``Prover.evaluate`` theorem by theorem (resumable in ``out``),
    stopping before a theorem once ``cap_s`` seconds have passed; ``report_only``: no search,
    the rows already in ``out`` are summarised."""
    from leantrain.prover.replay import REPLAY_METRIC
    from leantrain.prover.summary import summarize
    from leantrain.prover.theorems import theorem_id

    t0 = time.perf_counter()
    load_before, up_before = load_state(), uptime()
    if not report_only:
        from leantrain.prover import Prover

        prover = Prover(settings, tactic_generator=generator, progress_model=progress)
        for theorem in theorems:
            if time.perf_counter() - t0 > cap_s:
                log(f"{name}: wall cap {cap_s:.0f}s reached")
                break
            prover.evaluate([theorem])
    wall = time.perf_counter() - t0
    wanted = {theorem_id(t) for t in theorems}
    results = out / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines() if results.is_file() else []
    rows = [json.loads(line) for line in lines if line.strip()]
    rows = [r for r in rows if r["id"] in wanted]
    summary = summarize(rows, REPLAY_METRIC)
    log(f"{name}: {summary['proved']}/{summary['attempted']} proved, {wall:.0f}s")
    return {
        "proved": summary["proved"],
        "attempted": summary["attempted"],
        "metric": summary["metric"],
        "statuses": summary["statuses"],
        "mean_expansions": round(summary["mean_expansions"], 2),
        "mean_tactics_tried": round(summary["mean_tactics_tried"], 2),
        "mean_time_s": round(summary["mean_time_s"], 2),
        "search_s": round(sum(r["time_s"] for r in rows), 1),
        "proofs": {r["full_name"]: r["proof"] for r in rows if r["proved"]},
        "wall_s": round(wall, 1),
        "load_before": load_before,
        "load_after": load_state(),
        "uptime": [up_before, uptime()],
        "output_dir": str(out),
    }


def run_proof_rate(
    args: argparse.Namespace, data: Path, work: Path, untrained: Path, checkpoint: Any = None
) -> dict:
    """The configurations of ``args.configs`` on the first ``args.theorems`` test theorems with a
    traced proof; ``checkpoint(res)`` after each."""
    from dataclasses import fields

    from leantrain.prover.generator import HFGenerator
    from leantrain.prover.prover_config import ProverConfig
    from leantrain.prover.theorems import load_split

    all_test = load_split(data, "test")
    traced = with_traced_proof(all_test)
    theorems = traced[: args.theorems]
    budget = {
        "num_sampled_tactics": args.k,
        "max_expansions": args.max_expansions,
        "timeout": args.timeout,
        "max_new_tokens": args.max_new_tokens,
        "decoding": "beam",
        "expansion_batch": 1,
        "progress_weight": args.progress_weight,
    }
    base = {
        **budget,
        "data": str(data),
        "split": "test",
        "backend": "replay",
        "device": "cpu",
        "progress_bar": False,
    }
    has_retriever = "retriever" in {f.name for f in fields(ProverConfig)}
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    res: dict = {
        "test_theorems": len(all_test),
        "test_theorems_with_traced_proof": len(traced),
        "theorems": [t.full_name for t in theorems],
        "budget": budget,
        "prover_has_retriever": has_retriever,
        "configs": {},
    }
    progress_dir = None
    if any("progress" in c for c in configs):
        if args.progress:
            progress_dir = Path(args.progress)
        elif args.report_only:
            progress_dir = work / "progress-run"
            scores = work / "progress-quality.json"
            if scores.is_file():
                res["progress_model"] = json.loads(scores.read_text(encoding="utf-8"))
        else:
            progress_dir, trained = progress_model(data, work, args.progress_steps)
            if trained is not None:
                res["progress_model"] = trained
        res["progress_run"] = str(progress_dir)
    progress = None
    if progress_dir is not None and not args.report_only:
        from leantrain.prover.prover import load_progress

        progress = load_progress(str(progress_dir), "cpu")
    sft = None
    if any(c.startswith("sft") for c in configs):
        sft = Path(args.sft) if args.sft else train_sft(untrained, data, work / "sft", 24)
    generators = {"untrained": str(untrained), "sft": str(sft) if sft else None}
    loaded: dict[str, Any] = {}
    for config in configs:
        gen_key, *extras = [p.strip() for p in config.split("+")]
        name = config
        settings = {**base, "output_dir": str(work / "proofs" / slug(config))}
        if gen_key == "ceiling":
            generator: Any = TracedTacticsGenerator(theorems)
            settings["generator"] = "traced tactics (replay ceiling)"
        else:
            path = generators[gen_key]
            if path is None:
                raise SystemExit(f"{config}: no generator for '{gen_key}'")
            if args.report_only:
                pass
            elif gen_key not in loaded:
                loaded.clear()  # one 135M model in memory at a time
                log(f"loading {path}")
                loaded[gen_key] = HFGenerator.from_pretrained(
                    path, device="cpu", max_new_tokens=args.max_new_tokens, batch_size=1
                )
            generator = loaded.get(gen_key)
            settings["generator"] = path
        use_progress = None
        if "progress" in extras:
            settings["progress"] = str(progress_dir)
            use_progress = progress
        if "retriever" in extras:
            if not has_retriever:
                log(f"{config}: skipped (this prover has no retriever setting)")
                continue
            if not args.retriever:
                args.retriever = str(
                    work / "minilm-retriever" if args.report_only else zero_shot_retriever(work)
                )
            settings["retriever"] = args.retriever
            res["retriever"] = args.retriever
            if gen_key == "sft":  # trained without premises: asked with them on purpose
                settings["prompt_override"] = True
        log(f"{name}: {len(theorems)} theorems, {uptime()}")
        res["configs"][name] = run_config(
            name,
            theorems,
            settings,
            Path(settings["output_dir"]),
            generator,
            use_progress,
            args.config_cap,
            args.report_only,
        )
        res["configs"][name]["generator"] = settings["generator"]
        res["configs"][name]["progress"] = settings.get("progress")
        if checkpoint is not None:
            checkpoint(res)
    return res


# -- report ---------------------------------------------------------------------------------------
def render(res: dict) -> str:
    lines: list[str] = []
    if "throughput" in res:
        t = res["throughput"]
        c = t["config"]
        lines += [
            "### Prover throughput on CPU: batched generation over the frontier vs one state at a time",
            "",
            f"{len(c['theorems'])} LB4 head test theorems, generator `{c['generator']}`, k = {c['k']} "
            f"tactics per expansion ({c['decoding']} search, ≤ {c['max_new_tokens']} new tokens), "
            f"{c['max_expansions']} expansions per theorem; backend: {c['backend']} (every tactic "
            f"leads to one of {c['state_pool']} real LB4 train proof states, so the frontier grows "
            f"and every search spends its budget). Batched: `--expansion-batch "
            f"{c['expansion_batch']} --generation-batch-size {c['generation_batch_size']}`.",
            "",
            "| mode | theorems | expansions | generate calls | tactics generated | search wall s | generator s | expansions/s | tactics/s | mean prompt chars |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for mode, mode_label in (
            ("one", "one state at a time (`--expansion-batch 1`)"),
            ("batched", f"batched ({c['expansion_batch']} states per call)"),
        ):
            m = t["modes"][mode]
            lines.append(
                f"| {mode_label} | {m['theorems']} | {m['expansions']} | {m['generate_calls']} | "
                f"{m['tactics_generated']} | {m['search_wall_s']:.1f} | {m['generator_s']:.1f} | "
                f"{m['expansions_per_s']:.3f} | {m['tactics_per_s']:.2f} | "
                f"{m['mean_prompt_chars']:.0f} |"
            )
        r1, r2 = t.get("ratio_expansions_per_s"), t.get("ratio_tactics_per_s")
        lines += [
            "",
            f"Ratio batched / one: expansions/s {r1:.2f}x, tactics/s {r2:.2f}x."
            if r1 and r2
            else "Ratio: n/a.",
            "",
        ]
    if "proof_rate" in res:
        p = res["proof_rate"]
        b = p["budget"]
        lines += [
            "### Replay proof rate (LB4 head, random test split)",
            "",
            f"The first {len(p['theorems'])} of the {p['test_theorems_with_traced_proof']} test "
            f"theorems with a traced proof ({p['test_theorems']} in the split). Budget per theorem: "
            f"k = {b['num_sampled_tactics']} tactics per expansion ({b['decoding']} search, ≤ "
            f"{b['max_new_tokens']} new tokens), at most {b['max_expansions']} expansions, "
            f"{b['timeout']:g} s timeout; progress weight {b['progress_weight']:g}. Replay backend: "
            "a tactic counts only when it equals a traced one after whitespace normalisation, so "
            "the replay proof rate is a lower bound on the real proof rate.",
            "",
            "| configuration | replay proof rate | proved / attempted | statuses | mean expansions | mean tactics tried | mean s per theorem | search s (all theorems) |",
            "|---|---:|---:|---|---:|---:|---:|---:|",
        ]
        for name, c in p["configs"].items():
            if not c["attempted"]:
                lines.append(f"| {label(name)} | not run | 0 / 0 | | | | | |")
                continue
            rate = c["proved"] / c["attempted"]
            statuses = ", ".join(f"{k} {v}" for k, v in c["statuses"].items())
            lines.append(
                f"| {label(name)} | {100 * rate:.1f} % | {c['proved']} / {c['attempted']} | {statuses} | "
                f"{c['mean_expansions']:.2f} | {c['mean_tactics_tried']:.2f} | "
                f"{c['mean_time_s']:.1f} | {c.get('search_s', c['wall_s']):.0f} |"
            )
        lines.append("")
        if p.get("progress_run"):
            line = f"Progress model: `{p['progress_run']}`"
            m = p.get("progress_model")
            if m:
                line += (
                    f" (`leantrain progress train --model tiny`, {m['global_step']} steps, "
                    f"{m['train_wall_s']} s; test MAE {m['model']['MAE']:.3f} vs "
                    f"{m['median_predictor']['MAE']:.3f} for the median of train)"
                )
            lines.append(line + ".")
        if p.get("retriever"):
            lines.append(f"Retriever: `{p['retriever']}`.")
        for name, c in p["configs"].items():
            if c["proofs"] and not name.startswith("ceiling"):
                found = "; ".join(f"`{k}`: `{' ; '.join(v)}`" for k, v in c["proofs"].items())
                lines.append(f"Proofs found by {label(name)}: {found}")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="/tmp/leantrain-prover")
    ap.add_argument("--data", default=None, help="an LB4 head export (default: made in --work)")
    ap.add_argument("--sections", default="throughput,proof-rate")
    ap.add_argument("--generator", default=None, help="untrained generator (default: SmolLM2)")
    ap.add_argument("--sft", default=None, help="SFT run of the generator (default: trained)")
    ap.add_argument("--progress", default=None, help="progress run (default: trained)")
    ap.add_argument(
        "--retriever",
        default=None,
        help="retriever for '+retriever' configurations (default: zero-shot MiniLM)",
    )
    ap.add_argument("--progress-steps", type=int, default=0, help="0: the CLI's default epochs")
    ap.add_argument("--throughput-generator", default=None, help="default: --generator")
    ap.add_argument("--throughput-theorems", type=int, default=3)
    ap.add_argument("--throughput-expansions", type=int, default=17)
    ap.add_argument("--expansion-batch", type=int, default=8)
    ap.add_argument("--theorems", type=int, default=20, help="proof-rate: first N test theorems")
    ap.add_argument(
        "--configs",
        default="ceiling,untrained,untrained+progress,sft,sft+progress",
        help="proof-rate configurations: ceiling | untrained | sft, '+progress', '+retriever'",
    )
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--max-expansions", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--progress-weight", type=float, default=1.0)
    ap.add_argument(
        "--config-cap", type=float, default=900.0, help="wall s after which a configuration stops"
    )
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="proof-rate: no search, no model: summarise the rows already in WORK/proofs/*",
    )
    ap.add_argument("--json", default=None, help="also write the raw results here")
    ap.add_argument("--render", nargs="+", default=None, metavar="JSON")
    args = ap.parse_args()
    if args.render:
        merged: dict = {}
        for f in args.render:
            merged.update(json.loads(Path(f).read_text(encoding="utf-8")))
        print(render(merged))
        return

    import torch

    torch.set_num_threads(min(2, os.cpu_count() or 1))
    import leantrain.prover

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    data = Path(args.data) if args.data else make_exports(work)["lb4"]
    untrained = Path(args.generator) if args.generator else fetch_smollm2(work)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    res: dict = {
        "machine": machine(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "uptime_start": uptime(),
        "leantrain_prover": str(Path(leantrain.prover.__file__).parent),
        "leantrain_commit": git_commit(Path(leantrain.prover.__file__).parent),
        "argv": sys.argv[1:],
    }

    def checkpoint(partial: dict | None = None) -> None:
        if partial is not None:
            res["proof_rate"] = partial
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")

    t0 = time.perf_counter()
    if "throughput" in sections:
        res["throughput"] = run_throughput(
            args.throughput_generator or str(untrained),
            data,
            args.throughput_theorems,
            args.throughput_expansions,
            args.expansion_batch,
            args.k,
            args.max_new_tokens,
        )
        checkpoint()
    if "proof-rate" in sections:
        res["proof_rate"] = run_proof_rate(args, data, work, untrained, checkpoint)
    res["uptime_end"] = uptime()
    res["total_wall_s"] = round(time.perf_counter() - t0, 1)
    checkpoint()
    print(render(res))
    print(f"machine: {json.dumps(res['machine'])}; {res['uptime_start']} → {res['uptime_end']}")


if __name__ == "__main__":
    main()
