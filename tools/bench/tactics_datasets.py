"""Benchmark: streaming a LeanDojo split vs. json.load, and building SFT rows.

Builds a large split file in a temp dir by repeating the real Mathlib sample (or synthetic
theorems when ../shared/data is absent), then measures in the same run:

* reading every record with ``json.load`` (the reference) vs. ``iter_json_array`` (streaming),
  time and peak Python memory (tracemalloc);
* ``create_sft_dataset(..., streaming=True)`` iterated once vs. the eager dataset.

Prints ratios against the reference. Usage: ``uv run python tools/bench/tactics_datasets.py [copies]``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from leantrain.tactics import create_sft_dataset, iter_json_array

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (ROOT / "../shared/data/mathlib-sample/test.json").resolve()


def base_theorems() -> list[dict]:
    if SAMPLE.is_file():
        return json.loads(SAMPLE.read_text(encoding="utf-8"))
    return [
        {
            "url": "u",
            "commit": "c",
            "file_path": "F.lean",
            "full_name": f"t{i}",
            "start": [1, 1],
            "end": [2, 1],
            "traced_tactics": [
                {
                    "tactic": "simp",
                    "state_before": "x : Nat\n⊢ x + 0 = x " * 10,
                    "state_after": "no goals",
                }
            ],
        }
        for i in range(100)
    ]


def measure(fn) -> tuple[float, float, object]:
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return dt, peak / 2**20, out


def main() -> None:
    copies = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    theorems = base_theorems() * copies
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.json"
        path.write_text(json.dumps(theorems, ensure_ascii=False), encoding="utf-8")
        size = path.stat().st_size / 2**20
        print(f"split file: {len(theorems)} theorems, {size:.1f} MiB")

        def load_all():
            with path.open(encoding="utf-8") as f:
                return sum(len(t["traced_tactics"]) for t in json.load(f))

        def stream_all():
            return sum(len(t["traced_tactics"]) for _, t in iter_json_array(path))

        t_ref, m_ref, n_ref = measure(load_all)
        t_str, m_str, n_str = measure(stream_all)
        assert n_ref == n_str
        print(f"json.load (reference): {t_ref:.2f}s, peak {m_ref:.1f} MiB")
        print(
            f"iter_json_array:       {t_str:.2f}s, peak {m_str:.1f} MiB  "
            f"-> time x{t_str / t_ref:.2f}, memory x{m_str / m_ref:.3f}"
        )

        t_eager, m_eager, ds = measure(lambda: create_sft_dataset(path))
        t_lazy, m_lazy, n_lazy = measure(
            lambda: sum(1 for _ in create_sft_dataset(path, streaming=True))
        )
        assert len(ds) == n_lazy
        print(
            f"create_sft_dataset eager:     {t_eager:.2f}s, peak {m_eager:.1f} MiB, {len(ds)} rows "
            f"({len(ds) / t_eager:.0f} rows/s) -> time x{t_eager / t_ref:.2f} of json.load"
        )
        print(
            f"create_sft_dataset streaming: {t_lazy:.2f}s, peak {m_lazy:.1f} MiB "
            f"-> memory x{m_lazy / m_eager:.3f} of eager"
        )


if __name__ == "__main__":
    main()
