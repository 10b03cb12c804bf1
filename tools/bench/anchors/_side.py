"""The child-process side of an anchor benchmark: run one side, time it, print one JSON line.

Used by the benchmark modules when they run as scripts (``--side ours|ld2 --inputs FILE``),
under either interpreter, so it imports only the standard library (torch lazily).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any


class Timer:
    """``with timer:`` around the measured work: wall (perf_counter) and CPU (process_time)."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def __enter__(self) -> Timer:
        self._w, self._c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter() - self._w
        self.cpu += time.process_time() - self._c


def main(sides: dict[str, Callable[[dict[str, Any], Timer], int]]) -> None:
    """Parse ``--side``/``--inputs``, pin torch to the inputs' thread count, run, report."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", choices=sorted(sides), required=True)
    ap.add_argument("--inputs", required=True)
    args = ap.parse_args()
    with open(args.inputs, encoding="utf-8") as f:
        inputs = json.load(f)
    threads = int(inputs.get("threads", 1))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch

    torch.set_num_threads(threads)
    timer = Timer()
    items = sides[args.side](inputs, timer)
    extra = getattr(timer, "extra", {})
    print(
        "ANCHOR-RESULT "
        + json.dumps({"items": items, "wall_s": timer.wall, "cpu_s": timer.cpu, **extra}),
        flush=True,
    )
    sys.exit(0)
