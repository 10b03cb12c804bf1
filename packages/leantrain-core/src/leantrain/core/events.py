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

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / EVENTS_NAME

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
        return event


# The types of the fields an event may carry (checked when present).
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "kind": str,
    "trainer": str,
    "repo": str,
    "repo_index": int,
    "metrics": dict,
}


def _torn(line: bytes, e: ValueError) -> bool:
    """Whether a bad line is a prefix of a good one (a write cut short by a kill)."""
    if isinstance(e, UnicodeDecodeError):
        return e.reason == "unexpected end of data"
    return isinstance(e, json.JSONDecodeError) and e.pos >= len(e.doc.rstrip())


def read_events(run_dir: str | Path) -> Iterator[dict[str, Any]]:
    """The events of a run, oldest first.

    A line torn by a kill (a prefix of a JSON object) is skipped; anything else that is not
    an event — bytes that are not UTF-8, malformed JSON, JSON that is not an object, an object
    without a ``kind``, a field of the wrong type — is a :class:`DataError` naming the line.
    """
    from leantrain.core.errors import DataError

    path = Path(run_dir) / EVENTS_NAME
    if not path.is_file():
        return
    hint = f"{EVENTS_NAME} is written by leantrain; this one is not a leantrain run's"
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            where = f"line {number}"
            if not raw.strip():
                continue
            try:
                event = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as e:
                if _torn(raw.rstrip(b"\r\n"), e):
                    continue
                raise DataError(path, f"{where}: not UTF-8 text", hint=hint) from None
            except RecursionError:
                raise DataError(path, f"{where}: JSON nested too deeply", hint=hint) from None
            except ValueError as e:
                if _torn(raw, e):
                    continue
                raise DataError(path, f"{where}: malformed JSON", hint=hint) from None
            if not isinstance(event, dict):
                raise DataError(path, f"{where}: not a JSON object", hint=hint)
            if "kind" not in event:
                raise DataError(path, f"{where}: an event without a 'kind'", hint=hint)
            for key, typ in _FIELD_TYPES.items():
                value = event.get(key)
                if value is not None and (
                    not isinstance(value, typ) or (typ is int and isinstance(value, bool))
                ):
                    raise DataError(
                        path,
                        f"{where}: '{key}' is a {type(value).__name__}, "
                        f"expected a {getattr(typ, '__name__', typ)}",
                        hint=hint,
                    )
            yield event
