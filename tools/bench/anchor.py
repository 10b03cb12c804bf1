"""leantrain side by side with LeanDojo-v2 1.0.9 itself: same inputs, each side in its own process.

    uv run python tools/bench/anchor.py --all              # every benchmark, prints the table
    uv run python tools/bench/anchor.py --sft --index      # some of them
    uv run python tools/bench/anchor.py --list             # the benchmarks there are

LeanDojo-v2 is installed, on first use, into its own throwaway venv outside the repository
(``--ld2-venv``, default ``~/.cache/leantrain-bench/ld2``): torch 2.13.0 with pip (which takes the
CPU wheel on this machine's disk), then ``lean-dojo-v2==1.0.9`` and ``transformers==4.57.*``
(its ``ProgressTrainer`` passes ``tokenizer=`` to ``Trainer``, which transformers 5 removed).
The patches it needs offline on a CPU are in ``anchors/_ld2_patches.py`` and BENCHMARKS.md.

Each benchmark (a module of ``tools/bench/anchors/``) prepares its inputs once; then every
repeat runs our side and LeanDojo-v2's side (and any extra side the benchmark lists, such as
plain TRL), interleaved A/B/A/B after one warm-up run of each, every run a fresh process with
one torch thread. A side times only its work (not imports), in wall-clock and CPU seconds. The
table gives the median throughput of each side and their ratio (ours / theirs: > 1 means
leantrain is faster), by wall time and by CPU time, with min and median of both, and the load
average (``/proc/loadavg``) before and after; where the sides count tokens, a second line per
benchmark gives tokens/s, and extra sides get a column of their own.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from anchors import ROOT, SIDE_LABELS, Benchmark, discover

LD2_VERSION = "1.0.9"
LD2_PINS = [f"lean-dojo-v2=={LD2_VERSION}", "transformers==4.57.*"]
TORCH_PIN = "torch==2.13.0"
DEFAULT_VENV = Path.home() / ".cache" / "leantrain-bench" / "ld2"


def loadavg() -> str:
    """The first three fields of ``/proc/loadavg`` (1, 5, 15 minutes)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def cpu_name() -> str:
    """The CPU's ``model name`` from ``/proc/cpuinfo`` (or the platform's processor string)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def ld2_python(venv: Path) -> Path:
    """LeanDojo-v2's interpreter, installing the venv first when it is missing or incomplete."""
    py = venv / "bin" / "python"
    marker = venv / ".leantrain-bench-ready"
    want = " ".join([TORCH_PIN, *LD2_PINS])
    if py.is_file() and marker.is_file() and marker.read_text() == want:
        return py
    print(f"installing LeanDojo-v2 {LD2_VERSION} into {venv} (once; a few minutes)", flush=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    if not py.is_file():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        subprocess.run([str(py), "-m", "ensurepip", "--upgrade"], check=True)
    pip = [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    # torch first and alone: pip takes the CPU wheel on disk; a resolver asking for plain
    # "torch" later finds it installed instead of fetching a multi-GB CUDA build.
    subprocess.run([*pip, TORCH_PIN], check=True)
    subprocess.run([*pip, *LD2_PINS], check=True)
    marker.write_text(want)
    return py


def run_side(py: Path, bench: Benchmark, side: str, inputs: Path, timeout: int) -> dict:
    """One process of one side: its ``ANCHOR-RESULT`` line as a dict (exit on failure)."""
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "PYTHONHASHSEED": "0"}
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    env.update(TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1", WANDB_MODE="disabled")
    if side == "ld2":
        env.pop("VIRTUAL_ENV", None)
        env["PYTHONPATH"] = ""  # nothing of the workspace leaks into LeanDojo-v2's process
    cmd = [str(py), str(bench.script), "--side", side, "--inputs", str(inputs)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=timeout, cwd=inputs.parent
        )
    except subprocess.TimeoutExpired:
        sys.exit(f"{bench.name} ({side}): no result within {timeout} s")
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("ANCHOR-RESULT "):
            return json.loads(line.split(" ", 1)[1])
    sys.exit(
        f"{bench.name} ({side}) failed (exit {proc.returncode}):\n"
        f"{proc.stderr[-4000:]}\n{proc.stdout[-1000:]}"
    )


def summarize(runs: list[dict]) -> dict[str, Any]:
    """Min and median of wall and CPU seconds, and the throughputs at the medians."""
    walls = [r["wall_s"] for r in runs]
    cpus = [r["cpu_s"] for r in runs]
    items = runs[0]["items"]
    out = {
        "items": items,
        "wall_min": min(walls),
        "wall_median": statistics.median(walls),
        "cpu_min": min(cpus),
        "cpu_median": statistics.median(cpus),
        "runs": runs,
    }
    out["per_s"] = items / out["wall_median"]
    out["per_cpu_s"] = items / out["cpu_median"]
    if all("tokens" in r for r in runs):  # the same rows every run: the same tokens
        out["tokens"] = statistics.median(r["tokens"] for r in runs)
        out["tokens_per_s"] = out["tokens"] / out["wall_median"]
        out["tokens_per_cpu_s"] = out["tokens"] / out["cpu_median"]
    return out


def ratios(ours: dict, theirs: dict) -> dict[str, float]:
    """ours / theirs throughput: by median wall and CPU time, by min wall, and tokens/s."""
    out = {
        "wall": ours["per_s"] / theirs["per_s"],
        "cpu": ours["per_cpu_s"] / theirs["per_cpu_s"],
        "min_wall": (ours["items"] / ours["wall_min"]) / (theirs["items"] / theirs["wall_min"]),
    }
    if "tokens" in ours and "tokens" in theirs:
        out["tokens_wall"] = ours["tokens_per_s"] / theirs["tokens_per_s"]
        out["tokens_cpu"] = ours["tokens_per_cpu_s"] / theirs["tokens_per_cpu_s"]
    return out


def run_bench(bench: Benchmark, args: argparse.Namespace, work: Path, ld2: Path) -> dict:
    """Prepare, warm up, then interleave the sides (ours, theirs, …) ``args.repeats`` times."""
    bdir = work / bench.name
    bdir.mkdir(parents=True, exist_ok=True)
    print(f"[{bench.name}] preparing inputs", flush=True)
    inputs = {"threads": args.threads, **bench.prepare(bdir, args)}
    inputs_file = bdir / "inputs.json"
    inputs_file.write_text(json.dumps(inputs, indent=1), encoding="utf-8")
    load_before = loadavg()
    t0 = time.perf_counter()
    runs: dict[str, list[dict]] = {side: [] for side in bench.sides}
    for rep in range(-args.warmup, args.repeats):
        for side in bench.sides:
            py = ld2 if side == "ld2" else Path(sys.executable)
            r = run_side(py, bench, side, inputs_file, args.timeout)
            tag = "warm-up" if rep < 0 else f"run {rep + 1}"
            tokens = f"  {r['tokens'] / r['wall_s']:9.1f} tokens/s" if "tokens" in r else ""
            print(
                f"[{bench.name}] {tag:7s} {side:4s} {r['items']:>6} items  wall {r['wall_s']:7.2f} s"
                f"  cpu {r['cpu_s']:7.2f} s  {r['items'] / r['wall_s']:9.1f} {bench.unit}{tokens}",
                flush=True,
            )
            if rep >= 0:
                runs[side].append(r)
    sides = {side: summarize(runs[side]) for side in bench.sides}
    ours = sides["ours"]
    vs = {side: ratios(ours, s) for side, s in sides.items() if side != "ours"}
    res = {
        "name": bench.name,
        "title": bench.title,
        "unit": bench.unit,
        "target": bench.target,
        "sides": list(bench.sides),
        **sides,
        "ratio": vs["ld2"]["wall"],
        "ratio_cpu": vs["ld2"]["cpu"],
        "ratio_min_wall": vs["ld2"]["min_wall"],
        "ratios": vs,
        "load_before": load_before,
        "load_after": loadavg(),
        "seconds": time.perf_counter() - t0,
    }
    for side, r in vs.items():
        print(
            f"[{bench.name}] ours {ours['per_s']:.3g} vs {SIDE_LABELS.get(side, side)} "
            f"{sides[side]['per_s']:.3g} {bench.unit}: {r['wall']:.2f}x (CPU time {r['cpu']:.2f}x)"
            + (f", tokens/s {r['tokens_wall']:.2f}x" if "tokens_wall" in r else ""),
            flush=True,
        )
    print(f"[{bench.name}] load {load_before} -> {res['load_after']}", flush=True)
    return res


def _num(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}" if x < 10 else f"{x:.1f}"


def _others(r: dict, key: str) -> str:
    """The head table's cell for the sides beyond ours and LeanDojo-v2: ``label: x (ratio×)``."""
    cells = [
        f"{SIDE_LABELS.get(side, side)}: {_num(r[side][key])} "
        f"({r['ratios'][side]['tokens_wall' if key == 'tokens_per_s' else 'wall']:.2f}×)"
        for side in r.get("sides", ())
        if side not in ("ours", "ld2")
    ]
    return ", ".join(cells) or "—"


def render(results: list[dict], meta: dict) -> str:
    """The head table and the detail table, as markdown."""
    others = any(len(r.get("sides", ())) > 2 for r in results)
    tokens = any("tokens" in r["ours"] for r in results)
    other_col = " other sides, ours ÷ it (wall) |" if others else ""
    lines = [
        f"| what | ours | LeanDojo-v2 | ratio (wall) | ratio (CPU) |{other_col} target |",
        "|---|---|---|---|---|---|" + ("---|" if others else ""),
    ]
    for r in results:
        target = r["target"]
        ok = "" if target is None else (" ✔" if r["ratio"] >= target else " ✘")
        lines.append(
            f"| {r['title']}, {r['unit']} | {_num(r['ours']['per_s'])} | {_num(r['ld2']['per_s'])} "
            f"| {r['ratio']:.2f}× | {r['ratio_cpu']:.2f}× |"
            + (f" {_others(r, 'per_s')} |" if others else "")
            + f" {'—' if target is None else f'≥ {target:g}×'}{ok} |"
        )
        vs = r.get("ratios", {}).get("ld2", {})
        if "tokens_wall" in vs:
            lines.append(
                f"| {r['title']}, tokens/s | {_num(r['ours']['tokens_per_s'])} "
                f"| {_num(r['ld2']['tokens_per_s'])} | {vs['tokens_wall']:.2f}× "
                f"| {vs['tokens_cpu']:.2f}× |"
                + (f" {_others(r, 'tokens_per_s')} |" if others else "")
                + " — |"
            )
    token_col = " tokens |" if tokens else ""
    lines += [
        "",
        f"| benchmark | side | items |{token_col} wall min / median (s) | CPU min / median (s) "
        "| load before → after |",
        "|---|---|---|---|---|---|" + ("---|" if tokens else ""),
    ]
    for r in results:
        for side in r.get("sides", ("ours", "ld2")):
            s = r[side]
            token_cell = f" {s['tokens']:,.0f} |" if "tokens" in s else " — |"
            lines.append(
                f"| {r['name']} | {SIDE_LABELS.get(side, side)} | {s['items']} |"
                + (token_cell if tokens else "")
                + f" {s['wall_min']:.2f} / {s['wall_median']:.2f} | {s['cpu_min']:.2f} / {s['cpu_median']:.2f} "
                f"| {r['load_before']} → {r['load_after']} |"
            )
    lines += [
        "",
        f"{meta['repeats']} timed runs per side after {meta['warmup']} warm-up, interleaved; "
        f"{meta['threads']} torch thread(s); {meta['cpus']} CPUs ({meta['cpu']}, bf16 instructions: "
        f"{'yes' if meta['cpu_bf16'] else 'no'}); load average {meta['load_before']} "
        f"before, {meta['load_after']} after; {meta['seconds']:.0f} s in all.",
    ]
    return "\n".join(lines)


def main() -> None:
    benches = discover()
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--all", action="store_true", help="run every benchmark")
    for b in benches.values():
        ap.add_argument(f"--{b.name}", action="store_true", help=f"{b.title} ({b.unit})")
    ap.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per side (default 3)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs per side first")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per side (default 1)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds one run may take")
    ap.add_argument("--ld2-venv", type=Path, default=DEFAULT_VENV)
    ap.add_argument("--work", type=Path, default=None, help="scratch dir (default: a temp dir)")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args()
    if args.list:
        for b in benches.values():
            print(f"--{b.name:12s} {b.title} ({b.unit})")
        return
    chosen = [b for b in benches.values() if args.all or getattr(args, b.name.replace("-", "_"))]
    if not chosen:
        ap.error("name benchmarks (--list shows them) or pass --all")
    if args.repeats < 3:
        print("note: fewer than 3 repeats; medians are not robust", file=sys.stderr)
    from leantrain.llm.model_loading import cpu_bf16_supported

    ld2 = ld2_python(args.ld2_venv.expanduser())
    t0 = time.perf_counter()
    meta = {
        "repeats": args.repeats,
        "warmup": args.warmup,
        "threads": args.threads,
        "cpus": os.cpu_count(),
        "cpu": cpu_name(),
        # LeanDojo-v2's SFT trains in bf16: without bf16 instructions its matmuls are emulated
        "cpu_bf16": cpu_bf16_supported(),
        "load_before": loadavg(),
    }
    with tempfile.TemporaryDirectory(prefix="leantrain-anchor-") as tmp:
        work = args.work or Path(tmp)
        results = [run_bench(b, args, work, ld2) for b in chosen]
    meta.update(load_after=loadavg(), seconds=time.perf_counter() - t0)
    table = render(results, meta)
    print("\n" + table)
    if args.json:
        from leantrain.core.atomic import atomic_write_json

        atomic_write_json(args.json, {"meta": meta, "results": results, "root": str(ROOT)})


if __name__ == "__main__":
    main()
