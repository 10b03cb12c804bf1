"""Typed models of the LeanDojo / LeanDojo-v2 data formats, with validation.

Field names are exactly those of the on-disk formats, so ``Model.model_validate(json_obj)`` and
``model.to_json()`` round-trip files written by LeanDojo. Unknown extra fields are kept.
Loading helpers turn a validation failure into a :class:`~leantrain.core.errors.DataError` that
names the file, the record index and the field, and says what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from leantrain.core.errors import DataError
from leantrain.core.json_reader import iter_json_records, iter_jsonl, read_json
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

__all__ = [
    "MAX_POS",
    "AnnotatedTactic",
    "CorpusFile",
    "Pos",
    "Premise",
    "PremiseProvenance",
    "ProgressRow",
    "Theorem",
    "TracedTactic",
    "iter_jsonl",
    "load_corpus",
    "load_progress_rows",
    "load_records",
    "load_theorems",
    "read_json",
    "validate_record",
]

MAX_POS = 10**9
"""The largest line or column number accepted (Lean files are far smaller; SQLite is 64-bit)."""

Coord = Annotated[int, Field(strict=True, ge=0, le=MAX_POS)]
Pos = tuple[Coord, Coord]
"""A ``[line, column]`` position in a Lean file (1-based lines, as LeanDojo writes them).

Both numbers are JSON integers (strict: ``true``, ``1.0`` and ``"1"`` are refused, not
converted), non-negative and at most :data:`MAX_POS`; where a record has a start and an end,
the start is not after the end.
"""


def _not_before(start_field: str, end_field: str) -> Any:
    """A validator of ``end_field``: the position is not before ``start_field``'s."""

    def check(cls: type, end: Any, info: ValidationInfo) -> Any:
        start = info.data.get(start_field)
        if start is not None and end is not None and tuple(end) < tuple(start):
            raise ValueError(f"{end_field} {list(end)} is before {start_field} {list(start)}")
        return end

    return field_validator(end_field)(check)


_LEANTRAIN_ONLY = frozenset({"formal_proof", "header", "proof_origin", "difficulty"})


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=False, populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready dict in the on-disk format (tuples become lists); the
        whole-proof fields LeanDojo does not write are left out while unset."""
        data = self.model_dump(mode="json", exclude_none=False)
        return {k: v for k, v in data.items() if v is not None or k not in _LEANTRAIN_ONLY}


class PremiseProvenance(_Record):
    """Where an annotated premise is defined: ``{full_name, def_path, def_pos, def_end_pos}``."""

    full_name: str
    def_path: str
    def_pos: Pos
    def_end_pos: Pos

    check_def_end_pos = _not_before("def_pos", "def_end_pos")


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
    formal_proof: str | None = None
    """The whole proof after ``:=`` (``by …`` or a term), where the source or an import gave it;
    else whole-proof data joins ``traced_tactics`` (see ``leantrain.tactics.whole_proof``)."""
    header: str | None = None
    """What the statement needs before it: ``import``/``open``/``namespace`` lines."""
    proof_origin: Literal["source", "imported", "found"] | None = None
    """Where ``formal_proof`` came from: the Lean source, an imported dataset, or ``prove``."""
    difficulty: float | None = None
    """An imported difficulty in [0, 1] (NuminaMath-LEAN's 1 - win rate), for the curriculum."""

    check_end = _not_before("start", "end")

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

    check_end = _not_before("start", "end")


class CorpusFile(_Record):
    """One line of ``corpus.jsonl``: a Lean file, its imports and the premises it defines."""

    path: str
    imports: list[str] = Field(default_factory=list)
    premises: list[Premise] = Field(default_factory=list)


MAX_STEPS_REMAINING = 1_000_000


class ProgressRow(_Record):
    """A proof-progress example: ``{goal, prefix, tactic, steps_remaining}``."""

    goal: str
    prefix: str = ""
    tactic: str
    # no proof has a million steps: a larger label is corrupt data, not a long proof
    steps_remaining: Annotated[int, Field(strict=True, ge=0, le=MAX_STEPS_REMAINING)]


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


def load_records(model: type[M], path: str | Path, *, allow_empty: bool = True) -> list[M]:
    """Load a JSON array (``.json``) or JSON lines (``.jsonl``) file of ``model`` records.

    The file is read by :mod:`leantrain.core.json_reader` (streamed, strict); ``allow_empty=False``
    makes a file without records an error.
    """
    what = f"{model.__name__} records"
    return [
        validate_record(model, obj, path=path, index=i)
        for i, obj in iter_json_records(path, what=what, allow_empty=allow_empty)
    ]


def load_theorems(path: str | Path) -> list[Theorem]:
    """Load a LeanDojo split file (``train.json``…): a JSON array of theorems."""
    return load_records(Theorem, path)


def load_corpus(path: str | Path) -> list[CorpusFile]:
    """Load ``corpus.jsonl``: one :class:`CorpusFile` per line."""
    return load_records(CorpusFile, path)


def load_progress_rows(path: str | Path) -> list[ProgressRow]:
    """Load progress rows from a ``.jsonl`` or ``.json`` file."""
    return load_records(ProgressRow, path)
