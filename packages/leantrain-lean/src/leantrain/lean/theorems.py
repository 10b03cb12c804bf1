"""Theorems from the field's benchmark JSONL files.

Two formats are read, one row per line:

- **DeepSeek-Prover** (its miniF2F and ProofNet files): ``name``, ``header`` (imports,
  ``open``, ``set_option``), ``formal_statement`` (the declaration ending in ``:= by``), and
  optionally ``informal_prefix`` and ``split``.
- **NuminaMath-LEAN**: ``formal_statement`` holding the header and the declaration (ending in
  ``:= by sorry``); ``name`` (or ``uuid`` / ``id``) optional — a row without one is named by the
  declaration.

A row whose ``header`` is absent has its header split off the statement: the leading
``import`` / ``open`` / ``set_option`` / comment lines. A malformed row is one
:class:`~leantrain.core.errors.DataError` line naming ``file:line`` and the field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from leantrain.core.errors import DataError
from leantrain.lean.contract import LeanTheorem

_HEADER_LINE = re.compile(r"^\s*(?:import|open|set_option|universe|variable|--)\b|^\s*$")


def split_statement(text: str) -> tuple[str, str]:
    """``(header, declaration)`` of a text that starts with header lines."""
    lines = text.splitlines()
    i = 0
    while i < len(lines) and _HEADER_LINE.match(lines[i]):
        if re.match(r"^\s*set_option\b.*\bin\s*$", lines[i]):
            break  # ``set_option … in`` belongs to the declaration below it
        i += 1
    return "\n".join(lines[:i]).strip(), "\n".join(lines[i:]).strip()


def load_theorems(path: str | Path) -> list[LeanTheorem]:
    """The theorems of a benchmark JSONL file (see the module docstring)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise DataError(path, f"cannot read it ({e.strerror})", hint="check --data") from None
    theorems: list[LeanTheorem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(where, f"not JSON ({e.msg})", hint="one JSON object per line") from None
        if not isinstance(row, dict):
            raise DataError(where, "not a JSON object", hint="one JSON object per line")
        theorems.append(_theorem(row, where))
    if not theorems:
        raise DataError(path, "holds no theorems", hint="give a benchmark JSONL file")
    names = [t.name for t in theorems]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise DataError(path, f"two theorems are named '{dup}'", hint="names identify results")
    return theorems


def _text(row: dict[str, object], key: str, where: str, *, required: bool) -> str | None:
    value = row.get(key)
    if value is None:
        if required:
            raise DataError(
                where, "missing", field=key, hint="see leantrain-lean's README for the formats"
            )
        return None
    if not isinstance(value, str):
        raise DataError(where, f"expected a string, got {type(value).__name__}", field=key)
    return value


def _theorem(row: dict[str, object], where: str) -> LeanTheorem:
    statement = _text(row, "formal_statement", where, required=True)
    assert statement is not None
    header = _text(row, "header", where, required=False)
    if header is None:
        header, statement = split_statement(statement)
    name = None
    for key in ("name", "uuid", "id"):
        value = row.get(key)
        if value is not None:
            name = str(value)
            break
    split = _text(row, "split", where, required=False)
    informal = _text(row, "informal_prefix", where, required=False)
    try:
        theorem = LeanTheorem.parse(
            statement, header, source=where, split=split, informal=informal, name=name
        )
    except ValueError as e:
        raise DataError(where, str(e), field="formal_statement") from None
    return theorem
