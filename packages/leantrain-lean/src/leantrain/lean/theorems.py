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
from typing import Any

from leantrain.core.errors import DataError
from leantrain.core.lean_text import statement_end
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
        theorems.append(theorem_of_row(row, where))
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


def theorem_of_row(row: dict[str, object], where: str) -> LeanTheorem:
    """The :class:`LeanTheorem` of one benchmark row (see the module docstring); a malformed
    row is one :class:`DataError` naming ``where`` (``file:line``) and the field."""
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


def _offset(lines: list[str], pos: tuple[int, int] | list[int]) -> int:
    """The character offset of LeanDojo's ``[line, column]`` (both from 1) in ``lines``."""
    line, column = int(pos[0]), int(pos[1])
    if not 1 <= line <= len(lines):
        raise ValueError(f"line {line} is outside the file ({len(lines)} lines)")
    return sum(len(x) for x in lines[: line - 1]) + max(column - 1, 0)


def split_theorem_text(text: str) -> tuple[str, str, str] | None:
    """``(header, statement, proof)`` of a whole theorem text (``import …`` lines, then
    ``theorem foo … := proof``): the statement up to the top-level ``:=`` (excluded), the
    proof after it; ``None`` when ``text`` holds no declaration with a ``:=``."""
    header, decl = split_statement(text)
    end = statement_end(decl)
    if end < 0 or not re.match(r"^(?:@\[|private|protected|theorem|lemma|example)", decl):
        return None
    return header, decl[:end].rstrip(), decl[end + 2 :].strip()


def theorem_from_source(
    source: str, start: tuple[int, int] | list[int], name: str, *, where: str = ""
) -> LeanTheorem:
    """The theorem declared at ``start`` (LeanDojo's ``[line, column]``) in the Lean file text
    ``source``: its statement up to the top-level ``:=``, and everything before it in the file
    as its header (imports, ``open``, ``namespace``, earlier declarations). ``ValueError``
    saying what is wrong otherwise."""
    lines = source.splitlines(keepends=True)
    begin = _offset(lines, start)
    decl = source[begin:]
    end = statement_end(decl)
    if end < 0:
        raise ValueError("no ':=' after the declaration (a 'where' or match proof?)")
    short = name.rsplit(".", 1)[-1]
    theorem = LeanTheorem.parse(decl[:end], source[:begin].rstrip(), name=short, source=where)
    return theorem


class ProjectSources:
    """Statements of an export's theorems read from the Lean project's files (each file read
    once): ``theorem(record)`` for a record with ``file_path``, ``full_name``, ``start``."""

    def __init__(self, lean_project: str | Path) -> None:
        self.root = Path(lean_project)
        self._files: dict[str, str] = {}

    def theorem(self, record: Any) -> LeanTheorem:
        """The :class:`LeanTheorem` of ``record``; ``ValueError`` naming the file otherwise."""
        file_path = str(record.file_path)
        name = str(record.full_name)
        start = record.start
        where = f"{self.root / file_path}:{start[0]}"
        if file_path not in self._files:
            try:
                self._files[file_path] = (self.root / file_path).read_text(encoding="utf-8")
            except OSError as e:
                raise ValueError(
                    f"{self.root / file_path}: cannot read it ({e.strerror}); is --lean-project "
                    "the repository the export was traced from, at its commit?"
                ) from None
        try:
            return theorem_from_source(self._files[file_path], start, name, where=where)
        except ValueError as e:
            raise ValueError(f"{where}: {name}: {e}") from None
