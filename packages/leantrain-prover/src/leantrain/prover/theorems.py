"""The theorems to prove: read from an export, selected by name, identified for resumption."""

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


def load_split(
    data: str | Path,
    split: str,
    *,
    split_strategy: str = "random",
    names: Sequence[str] = (),
    limit: int | None = None,
) -> list[Theorem]:
    """The theorems of ``split`` in ``data`` (export dir, split dir or split file), those named in
    ``names`` only when given (each must exist), at most ``limit``.

    Errors are :class:`DataError`\\ s: a missing path or split, an empty split, an unknown name.
    """
    from leantrain.tactics import iter_theorems, resolve_split_file

    if not str(data).strip():
        raise DataError(None, "no theorems given", hint="pass --data EXPORT_DIR")
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
