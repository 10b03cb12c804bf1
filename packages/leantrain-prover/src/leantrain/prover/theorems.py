"""The theorems to prove: read from an export or a benchmark JSONL file, selected by name,
identified for resumption.

A benchmark file (``--data minif2f.jsonl``: DeepSeek-Prover's miniF2F / ProofNet rows,
NuminaMath-LEAN rows; :func:`leantrain.lean.load_theorems`) gives theorem records too: ``url``
is the file name, ``full_name`` the row's name, ``theorem_statement`` the declaration, and the
row's ``header`` (and ``source``, ``file:line``) travel as extra fields, which the Lean
backends read (:func:`leantrain.prover.backend.lean_theorem_of`)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError
from leantrain.core.schemas import Theorem, validate_record


def theorem_id(theorem: Theorem) -> str:
    """A stable identity of a theorem (repository, commit, file, name, position), as a string."""
    return json.dumps(
        [
            theorem.url,
            theorem.commit,
            theorem.file_path,
            theorem.full_name,
            list(theorem.start),
            list(theorem.end),
        ],
        ensure_ascii=False,
    )


def repository(theorem: Theorem) -> str:
    """The repository a theorem comes from, as ``url@commit`` (the export's repository id)."""
    return f"{theorem.url}@{theorem.commit}"


def as_theorem(obj: Theorem | Mapping[str, Any]) -> Theorem:
    """A :class:`Theorem` from itself or a LeanDojo theorem record (a ``DataError`` if bad)."""
    if isinstance(obj, Theorem):
        return obj
    return validate_record(Theorem, obj, path=None, index=None)


def is_benchmark_file(data: str | Path) -> bool:
    """``data`` names a benchmark JSONL file: its first row has ``formal_statement`` (an
    export's split file in JSONL holds LeanDojo theorem records instead)."""
    path = Path(data)
    if path.suffix != ".jsonl" or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as f:
            first = next((line for line in f if line.strip()), "")
        row = json.loads(first)
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(row, dict) and "formal_statement" in row


def benchmark_theorems(path: str | Path, split: str) -> list[Theorem]:
    """The theorems of a benchmark JSONL file as theorem records; rows that carry a ``split``
    are kept when it is ``split`` (miniF2F's ``valid`` / ``test``)."""
    from leantrain.lean import load_theorems

    path = Path(path)
    rows = load_theorems(path)
    if any(t.split is not None for t in rows):
        rows = [t for t in rows if t.split == split]
        if not rows:
            raise DataError(
                path, f"no row has split '{split}'", hint="choose another --split (valid, test)"
            )
    out = []
    for t in rows:
        line = int(t.source.rsplit(":", 1)[-1]) if t.source else 1
        out.append(
            Theorem.model_validate(
                {
                    "url": path.name,  # stable when the run resumes from elsewhere
                    "commit": "",
                    "file_path": path.name,
                    "full_name": t.name,
                    "theorem_statement": t.statement,
                    "start": [line, 1],
                    "end": [line, 1],
                    "header": t.header,
                    "source": t.source,
                }
            )
        )
    return out


def load_split(
    data: str | Path,
    split: str,
    *,
    split_strategy: str = "random",
    names: Sequence[str] = (),
    limit: int | None = None,
) -> list[Theorem]:
    """The theorems of ``split`` in ``data`` (export dir, split dir or split file, or a benchmark
    JSONL file), those named in ``names`` only when given (each must exist), at most ``limit``.

    Errors are :class:`DataError`\\ s: a missing path or split, an empty split, an unknown name.
    """
    from leantrain.tactics import iter_theorems, resolve_split_file

    if not str(data).strip():
        raise DataError(None, "no theorems given", hint="pass --data EXPORT_DIR")
    if is_benchmark_file(data):
        file = Path(data)
        theorems = benchmark_theorems(file, split)
    else:
        file = resolve_split_file(data, split, split_strategy)
        theorems = list(iter_theorems(file, split, split_strategy=split_strategy))
    if not theorems:
        raise DataError(file, f"split '{split}' holds no theorems", hint="choose another --split")
    if names:
        by_name: dict[str, list[Theorem]] = {}
        for t in theorems:
            by_name.setdefault(t.full_name, []).append(t)
        for name in names:
            if name not in by_name:
                close = difflib.get_close_matches(name, list(by_name), n=1)
                raise DataError(
                    file,
                    f"no theorem named '{name}' in split '{split}'",
                    hint=f"did you mean '{close[0]}'?" if close else "check --theorems",
                )
        wanted = set(names)
        theorems = [t for t in theorems if t.full_name in wanted]
    return theorems[:limit] if limit is not None else theorems


def selected_theorems(cfg: Any) -> list[Theorem]:
    """The theorems a prover config selects: ``data``'s ``split`` (``split_strategy``), only
    ``theorems`` when given, at most ``max_theorems``."""
    return load_split(
        cfg.data,
        cfg.split,
        split_strategy=cfg.split_strategy,
        names=cfg.theorems,
        limit=cfg.max_theorems,
    )
