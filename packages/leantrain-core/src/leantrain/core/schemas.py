"""Typed models of the LeanDojo / LeanDojo-v2 data formats, with validation.

Field names are exactly those of the on-disk formats, so ``Model.model_validate(json_obj)`` and
``model.to_json()`` round-trip files written by LeanDojo. Unknown extra fields are kept.
Loading helpers turn a validation failure into a :class:`~leantrain.core.errors.DataError` that
names the file, the record index and the field, and says what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

from leantrain.core.errors import DataError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

Pos = tuple[int, int]
"""A ``[line, column]`` position in a Lean file (1-based lines, as LeanDojo writes them)."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=False, populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready dict in the on-disk format (tuples become lists)."""
        return self.model_dump(mode="json", exclude_none=False)


class PremiseProvenance(_Record):
    """Where an annotated premise is defined: ``{full_name, def_path, def_pos, def_end_pos}``."""

    full_name: str
    def_path: str
    def_pos: Pos
    def_end_pos: Pos


AnnotatedTactic = tuple[str, list[PremiseProvenance]]
"""``[tactic text with <a>…</a> marks, [PremiseProvenance, …]]``."""


class TracedTactic(_Record):
    """One tactic of a traced proof with the proof states around it."""

    tactic: str
    annotated_tactic: AnnotatedTactic | None = None
    state_before: str
    state_after: str

    @property
    def premises(self) -> list[PremiseProvenance]:
        """The annotated premises (empty when the data has no annotations)."""
        return [] if self.annotated_tactic is None else list(self.annotated_tactic[1])


class Theorem(_Record):
    """A traced theorem: identity, position and its tactic proof."""

    url: str
    commit: str
    file_path: str
    full_name: str
    theorem_statement: str | None = None
    start: Pos
    end: Pos
    traced_tactics: list[TracedTactic] = Field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, Pos, Pos]:
        """Identity used to deduplicate theorems across repositories."""
        return (self.file_path, self.full_name, self.start, self.end)


class Premise(_Record):
    """A premise of the corpus: ``{full_name, code, start, end, kind}``."""

    full_name: str
    code: str = ""
    start: Pos
    end: Pos
    kind: str = "theorem"


class CorpusFile(_Record):
    """One line of ``corpus.jsonl``: a Lean file, its imports and the premises it defines."""

    path: str
    imports: list[str] = Field(default_factory=list)
    premises: list[Premise] = Field(default_factory=list)


class ProgressRow(_Record):
    """A proof-progress example: ``{goal, prefix, tactic, steps_remaining}``."""

    goal: str
    prefix: str = ""
    tactic: str
    steps_remaining: Annotated[int, Field(strict=True, ge=0)]


M = TypeVar("M", bound=BaseModel)


def _describe(error: Mapping[str, Any]) -> tuple[str, str]:
    loc = error.get("loc", ())
    field = ""
    for part in loc:
        if isinstance(part, int):
            field += f"[{part}]"
        else:
            field += ("." if field else "") + str(part)
    msg = error.get("msg", "invalid value")
    if error.get("type") == "missing":
        msg = "required field is missing"
    else:
        got = error.get("input")
        msg = f"{msg} (got {type(got).__name__} {str(got)[:60]!r})"
    return field, msg


def validate_record(model: type[M], obj: Any, *, path: str | Path | None, index: int | None) -> M:
    """Validate one record; a failure becomes a :class:`DataError` naming file, index, field."""
    if not isinstance(obj, dict):
        raise DataError(
            path,
            f"expected a JSON object, got {type(obj).__name__}",
            index=index,
            hint=f"each record must be a {model.__name__} object",
        )
    try:
        return model.model_validate(obj)
    except ValidationError as e:
        field, msg = _describe(e.errors()[0])
        raise DataError(
            path,
            msg,
            index=index,
            field=field,
            hint=f"fix the record so that it matches the {model.__name__} format",
        ) from None


def read_json(path: str | Path) -> Any:
    """Read a JSON file; a missing file or malformed JSON is a :class:`DataError`."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found", hint="check the path")
    try:
        with path.open(encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise DataError(
            path,
            f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}",
            hint="the file must be valid JSON",
        ) from None
    except UnicodeDecodeError as e:
        raise DataError(path, f"not UTF-8 text ({e.reason})", hint="save it as UTF-8") from None


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_index, object)`` for each non-empty line of a JSONL file."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found", hint="check the path")
    with path.open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if not line.strip():
                continue
            try:
                yield i, json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(
                    path,
                    f"malformed JSON: {e.msg}",
                    index=i,
                    hint="each line of a .jsonl file must be one JSON object",
                ) from None


def load_records(model: type[M], path: str | Path) -> list[M]:
    """Load a JSON array (``.json``) or JSON lines (``.jsonl``) file of ``model`` records."""
    path = Path(path)
    if path.suffix == ".jsonl":
        return [validate_record(model, obj, path=path, index=i) for i, obj in iter_jsonl(path)]
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError(
            path,
            f"expected a JSON array of {model.__name__} records, got {type(data).__name__}",
            hint="LeanDojo split files hold a list of theorems",
        )
    return [validate_record(model, obj, path=path, index=i) for i, obj in enumerate(data)]


def load_theorems(path: str | Path) -> list[Theorem]:
    """Load a LeanDojo split file (``train.json``…): a JSON array of theorems."""
    return load_records(Theorem, path)


def load_corpus(path: str | Path) -> list[CorpusFile]:
    """Load ``corpus.jsonl``: one :class:`CorpusFile` per line."""
    return load_records(CorpusFile, path)


def load_progress_rows(path: str | Path) -> list[ProgressRow]:
    """Load progress rows from a ``.jsonl`` or ``.json`` file."""
    return load_records(ProgressRow, path)
