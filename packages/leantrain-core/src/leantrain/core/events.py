"""The run's event log: ``metrics.jsonl``, one JSON object per line, appended as work finishes.

Event kinds written by :class:`~leantrain.core.lifelong.LifelongEngine`:

* ``{"kind": "export", "repo", "repo_index", "seconds"}`` — the merged export of a step;
* ``{"kind": "start", "trainer", "repo", "repo_index"}`` — a trainer starts a step;
* ``{"kind": "step", "trainer", "repo", "repo_index", "metrics", "seconds"}`` — its metrics
  after the step (training metrics and the merged test split's);
* ``{"kind": "eval", "trainer", "step", "repo_index", "repo", "score_key", "metrics"}`` — after
  step ``step``, the model on repository ``repo_index``'s own test split (forgetting matrix);
* ``{"kind": "history", "trainer", "repo", "repo_index", "points": [{"step", "loss", ...}]}`` —
  a training curve.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

EVENTS_NAME = "metrics.jsonl"


class EventLog:
    """Append-only JSONL log of a run (each line written and fsynced whole)."""

    def __init__(self, run_dir: str | Path, *, echo: bool = False) -> None:
        self.path = Path(run_dir) / EVENTS_NAME
        self.echo = echo

    def write(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Append one event (``time`` is added) and return it."""
        event = {"kind": kind, "time": round(time.time(), 3), **fields}
        line = json.dumps(event, ensure_ascii=False, default=str)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a+b") as f:
            f.seek(0, os.SEEK_END)
            if f.tell():  # a line torn by a kill must not swallow this event
                f.seek(-1, os.SEEK_END)
                torn = f.read(1) != b"\n"
                f.seek(0, os.SEEK_END)
                if torn:
                    f.write(b"\n")
            f.write((line + "\n").encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        if self.echo:
            print(line, flush=True)
        return event


def read_events(run_dir: str | Path) -> Iterator[dict[str, Any]]:
    """The events of a run, oldest first; a torn last line (killed mid-write) is skipped."""
    path = Path(run_dir) / EVENTS_NAME
    if not path.is_file():
        return
    with path.open(encoding="utf-8") as f:
        for line in f:
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue
