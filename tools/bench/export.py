"""Benchmark of leantrain-export: import and export of synthetic data at 10k and 100k theorems.

    uv run python tools/bench/export.py [--sizes 10000 100000] [--work DIR]

For each size it generates synthetic LeanDojo-v2 repositories (leantrain_tools.synthetic),
then, each in a fresh child process (so peak RSS is per phase), imports them into a new
database and exports the merged data. It prints theorems/s and peak RSS per phase, the ratio
of each phase's time to a reference measured in the same run (plain ``json.load`` +
``json.dump`` of the same split files), and the largest/smallest size time ratio (near-linear
scaling means a ratio close to the size ratio: at most 12 for 100k/10k).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _child(phase: str, work: Path) -> None:
    db_path = work / "bench.db"
    dirs = sorted(p for p in (work / "synth").iterdir() if (p / "metadata.json").is_file())
    t0 = time.perf_counter()
    if phase == "import":
        from leantrain.export import Database

        with Database(db_path) as db:
            for d in dirs:
                db.import_path(d)
            n = db.stats()["theorems"]
    elif phase == "export":
        from leantrain.export import export_merged_data

        n = export_merged_data(db_path, None, work / "out").num_theorems
    else:  # reference: read every split file with json.load and write it back with json.dump
        n = 0
        for d in dirs:
            for f in sorted((d / "random").glob("*.json")):
                data = json.loads(f.read_text(encoding="utf-8"))
                n += len(data)
                (work / "ref.json").write_text(
                    json.dumps(data, ensure_ascii=False), encoding="utf-8"
                )
    seconds = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"phase": phase, "theorems": n, "seconds": seconds, "peak_rss_mb": rss_mb}))


def _run(phase: str, work: Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", phase, "--work", str(work)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument(
        "--work", type=Path, default=None, help="scratch directory (default: a temp dir)"
    )
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child, args.work)
        return
    from leantrain_tools.synthetic import generate_synthetic

    root = args.work or Path(tempfile.mkdtemp(prefix="leantrain-bench-export-"))
    results: dict[int, dict[str, dict]] = {}
    try:
        for n in args.sizes:
            work = root / f"n{n}"
            shutil.rmtree(work, ignore_errors=True)
            t0 = time.perf_counter()
            generate_synthetic(work / "synth", n, n_repos=3, seed=0)
            gen_s = time.perf_counter() - t0
            results[n] = {p: _run(p, work) for p in ("reference", "import", "export")}
            size_mb = sum(f.stat().st_size for f in (work / "synth").rglob("*.json")) / 2**20
            print(f"n={n}: generated {size_mb:.0f} MiB of split files in {gen_s:.1f}s")
            ref = results[n]["reference"]["seconds"]
            for phase, r in results[n].items():
                rate = r["theorems"] / r["seconds"] if r["seconds"] else float("inf")
                print(
                    f"  {phase:9s} {r['theorems']:7d} theorems  {r['seconds']:7.2f}s  {rate:9.0f} theorems/s  "
                    f"peak RSS {r['peak_rss_mb']:6.0f} MiB  {r['seconds'] / ref:5.2f}x reference"
                )
            shutil.rmtree(work, ignore_errors=True)
        if len(args.sizes) >= 2:
            lo, hi = min(args.sizes), max(args.sizes)
            for phase in ("reference", "import", "export"):
                ratio = results[hi][phase]["seconds"] / results[lo][phase]["seconds"]
                print(f"{phase}: time {hi}/{lo} = {ratio:.2f} (sizes ratio {hi / lo:.0f})")
    finally:
        if args.work is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
