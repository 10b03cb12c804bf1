"""Benchmark of leantrain-export alone: import + full export of synthetic theorems, by size.

    uv run python tools/bench/export.py [--sizes 10000 32000 100000] [--repeats 3] [--work DIR]

For each size it generates three synthetic LeanDojo-v2 repositories (leantrain_tools.synthetic,
seed 0), then runs ``--repeats`` timed runs after one warm-up, each in a fresh process: import
the three export directories into a new database, then ``export_merged_data`` of all of them
(both split strategies, corpus, traced files) into a new directory. It prints, per size and
phase (import, export, both), the min and median of wall-clock and CPU seconds, theorems/s at
the median wall time, the peak RSS, and the load average before and after the runs (the machine
may be shared: read wall times with it). Last, the median time of the largest size over the
smallest (near-linear scaling: close to the size ratio; the target is <= 12 for 100k/10k).

The side-by-side comparison with LeanDojo-v2 is ``tools/bench/anchor.py --export``
(``tools/bench/anchors/export.py``).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PHASES = ("import", "export", "total")


def loadavg() -> str:
    """The 1, 5 and 15 minute load averages."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def _child(work: Path) -> None:
    from leantrain.export import Database, export_merged_data

    dirs = sorted(p for p in (work / "synth").iterdir() if (p / "metadata.json").is_file())
    db_path, out = work / "bench.db", work / "out"
    shutil.rmtree(out, ignore_errors=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    w0, c0 = time.perf_counter(), time.process_time()
    with Database(db_path) as db:
        for d in dirs:
            db.import_path(d)
    w1, c1 = time.perf_counter(), time.process_time()
    n = export_merged_data(db_path, None, out).num_theorems
    w2, c2 = time.perf_counter(), time.process_time()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "theorems": n,
                "import": [w1 - w0, c1 - c0],
                "export": [w2 - w1, c2 - c1],
                "total": [w2 - w0, c2 - c0],
                "peak_rss_mb": rss_mb,
            }
        )
    )


def _run(work: Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--work", str(work)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _stats(runs: list[dict], phase: str) -> dict[str, float]:
    wall = [r[phase][0] for r in runs]
    cpu = [r[phase][1] for r in runs]
    return {
        "wall_min": min(wall),
        "wall_median": statistics.median(wall),
        "cpu_min": min(cpu),
        "cpu_median": statistics.median(cpu),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 32_000, 100_000])
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per size (default 3)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs per size first")
    ap.add_argument("--work", type=Path, default=None, help="scratch dir (default: a temp dir)")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.work)
        return
    from leantrain_tools.synthetic import generate_synthetic

    root = args.work or Path(tempfile.mkdtemp(prefix="leantrain-bench-export-"))
    results: dict[int, dict] = {}
    try:
        for n in args.sizes:
            work = root / f"n{n}"
            shutil.rmtree(work, ignore_errors=True)
            generate_synthetic(work / "synth", n, n_repos=3, seed=0)
            size_mb = sum(f.stat().st_size for f in (work / "synth").rglob("*.json*")) / 2**20
            for _ in range(args.warmup):
                _run(work)
            load_before = loadavg()
            runs = [_run(work) for _ in range(args.repeats)]
            load_after = loadavg()
            results[n] = {
                "theorems": runs[0]["theorems"],
                "input_mib": size_mb,
                "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
                "load_before": load_before,
                "load_after": load_after,
                **{p: _stats(runs, p) for p in PHASES},
            }
            r = results[n]
            print(
                f"n={n}: {r['theorems']} theorems exported from {size_mb:.0f} MiB of input, "
                f"{args.repeats} runs, load {load_before} -> {load_after}, "
                f"peak RSS {r['peak_rss_mb']:.0f} MiB"
            )
            for p in PHASES:
                s = r[p]
                print(
                    f"  {p:7s} wall min {s['wall_min']:6.2f}s median {s['wall_median']:6.2f}s  "
                    f"CPU min {s['cpu_min']:6.2f}s median {s['cpu_median']:6.2f}s  "
                    f"{r['theorems'] / s['wall_median']:8.0f} theorems/s"
                )
            shutil.rmtree(work, ignore_errors=True)
        if len(args.sizes) >= 2:
            lo, hi = min(args.sizes), max(args.sizes)
            for key in ("wall_median", "cpu_median"):
                ratio = results[hi]["total"][key] / results[lo]["total"][key]
                print(f"total {key}: {hi}/{lo} = {ratio:.2f} (sizes ratio {hi / lo:.0f})")
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    finally:
        if args.work is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
