"""Benchmark: reading a LeanDojo split and building SFT rows, against what LeanDojo-v2 does.

The split file is the real mathlib sample (``../shared/data/mathlib-sample/test.json``; a
missing file is an error, never a synthetic substitute) repeated ``copies`` times (default 80).
Measured in the same run:

* reading every record: ``json.load`` of the whole file — exactly what LeanDojo-v2's
  ``SFTTrainer`` and ``GRPOTrainer`` do (``self.json_data = json.load(f)``), the reference —
  vs ``iter_json_array`` (streaming);
* ``create_sft_dataset`` (eager, a ``datasets.Dataset``) and ``create_sft_dataset(...,
  streaming=True)`` iterated once.

Time is the best of ``--repeats`` runs without tracing (tracemalloc slows every allocation, so
it would distort the times); peak Python memory comes from one extra traced run of each.
Ratios are throughput ratios against ``json.load`` (> 1 = faster) and memory ratios (< 1 =
less). Usage: ``uv run python tools/bench/tactics_datasets.py [--copies N] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from leantrain.tactics import create_sft_dataset, iter_json_array

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (ROOT / "../shared/data/mathlib-sample/test.json").resolve()


def base_theorems() -> list[dict[str, Any]]:
    """The mathlib sample's theorems; an error naming the file when it is missing."""
    if not SAMPLE.is_file():
        raise SystemExit(
            f"missing data file {SAMPLE} (see ../shared/data/README.md); no synthetic substitute"
        )
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def best_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """The fastest of ``repeats`` untraced runs, and the last result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def peak_mib(fn: Callable[[], Any]) -> float:
    """Peak Python allocation (tracemalloc) of one run of ``fn``, MiB."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=80, help="times the sample is repeated")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per reader (best kept)")
    args = ap.parse_args()
    theorems = base_theorems() * args.copies
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.json"
        path.write_text(json.dumps(theorems, ensure_ascii=False), encoding="utf-8")
        del theorems
        size = path.stat().st_size / 2**20

        def load_all() -> int:  # LeanDojo-v2's SFTTrainer / GRPOTrainer
            with path.open(encoding="utf-8") as f:
                return sum(len(t["traced_tactics"]) for t in json.load(f))

        def stream_all() -> int:
            return sum(len(t["traced_tactics"]) for _, t in iter_json_array(path))

        def eager() -> int:
            return len(create_sft_dataset(path))

        def streaming() -> int:
            return sum(1 for _ in create_sft_dataset(path, streaming=True))

        rows: dict[str, tuple[float, float, int]] = {}
        for name, fn in (
            ("json.load (LeanDojo-v2, reference)", load_all),
            ("iter_json_array (streaming)", stream_all),
            ("create_sft_dataset, eager", eager),
            ("create_sft_dataset(streaming=True)", streaming),
        ):
            seconds, items = best_time(fn, args.repeats)
            rows[name] = (seconds, peak_mib(fn), items)
        tactics = rows["json.load (LeanDojo-v2, reference)"][2]
        assert rows["iter_json_array (streaming)"][2] == tactics
        assert rows["create_sft_dataset, eager"][2] == rows["create_sft_dataset(streaming=True)"][2]
        ref_s, ref_mib, _ = rows["json.load (LeanDojo-v2, reference)"]
        print(
            f"split file: {len(base_theorems()) * args.copies} theorems, {tactics} tactics, "
            f"{size:.1f} MiB; best of {args.repeats}"
        )
        print(
            "| reader | items | time (s) | throughput × json.load | peak MiB | memory × json.load |"
        )
        print("|---|---|---|---|---|---|")
        for name, (seconds, mib, items) in rows.items():
            print(
                f"| {name} | {items} | {seconds:.2f} | {ref_s / seconds:.2f} | {mib:.1f} "
                f"| {mib / ref_mib:.3f} |"
            )


if __name__ == "__main__":
    main()
