"""The plain shapes of LeanDojo records as msgspec types, decoded and checked in C.

Most theorems of a LeanDojo split file have exactly one shape: the fields of
:class:`~leantrain.core.schemas.Theorem`, every tactic annotated, no unknown field anywhere;
most lines of a ``corpus.jsonl`` too (:class:`~leantrain.core.schemas.CorpusFile`).
:func:`decode_theorems` reads a piece of a split file (``[record, …]``) straight into
:class:`TheoremRecord` objects, and :func:`decode_corpus_line` a corpus line into a
:class:`CorpusRecord`, checking every type, every coordinate's range and every position's
length while parsing: faster than parsing into dicts and checking them in Python
(:mod:`leantrain.export.fast_rows`). They raise ``ValueError`` for anything of another shape
(an unknown field, a value of another type, a missing annotation, bad JSON); the JSON reader
then reads that piece or line as plain JSON and the import checks its records one by one as
before, so every bad record still gets the model's one-line message.

What is accepted is read exactly as the strict reader and the model read it: strings only
from JSON strings, coordinates only from JSON integers (``true``, ``1.0`` and ``"1"`` are
refused) in ``[0, MAX_POS]``, positions of exactly two, the last of duplicate keys, no lone
surrogates. The one check left to Python is that an end is not before its start
(:func:`spans_in_order`). :func:`encode` writes tactics and premises in the exported form
(:func:`~leantrain.export.fast_rows.tactic_entries`, :func:`~leantrain.export.fast_rows.premise_entries`),
byte for byte what orjson writes for them: the fields are declared in the exported order.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from leantrain.core.schemas import MAX_POS

__all__ = [
    "CorpusRecord",
    "PremiseRecord",
    "ProvenanceRecord",
    "TacticRecord",
    "TheoremRecord",
    "decode_corpus_line",
    "decode_theorems",
    "decode_uses",
    "encode",
    "spans_in_order",
    "to_dict",
]

_Coord = Annotated[int, msgspec.Meta(ge=0, le=MAX_POS)]
_Pos = tuple[_Coord, _Coord]


# gc=False: the records hold strings, numbers, and lists and tuples of those and of other
# records, which cannot form a cycle, so the cyclic garbage collector need not track the
# millions of them an import creates.
class ProvenanceRecord(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """``{full_name, def_path, def_pos, def_end_pos}`` of an annotated premise."""

    full_name: str
    def_path: str
    def_pos: _Pos
    def_end_pos: _Pos


class TacticRecord(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """An annotated tactic; its fields in the exported order (so it encodes as exported)."""

    tactic: str
    annotated_tactic: tuple[str, list[ProvenanceRecord]]
    state_before: str
    state_after: str


class TheoremRecord(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A theorem record of the plain shape."""

    url: str
    commit: str
    file_path: str
    full_name: str
    start: _Pos
    end: _Pos
    theorem_statement: str | None = None
    traced_tactics: list[TacticRecord] = msgspec.field(default_factory=list)


class PremiseRecord(msgspec.Struct, forbid_unknown_fields=True, gc=False, kw_only=True):
    """A premise of a corpus line; its fields in the exported order (keyword-only: required
    ``start`` and ``end`` after the optional ``code``)."""

    full_name: str
    code: str = ""
    start: _Pos
    end: _Pos
    kind: str = "theorem"


class CorpusRecord(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A ``corpus.jsonl`` line of the plain shape."""

    path: str
    imports: list[str] = msgspec.field(default_factory=list)
    premises: list[PremiseRecord] = msgspec.field(default_factory=list)


PremiseUse = tuple[int, int, bool, str, str, int, int, int, int]
"""A premise use as stored in ``theorems.uses_json``: ``(tactic_idx, idx, kept, full_name,
def_path, def_line, def_col, def_end_line, def_end_col)``."""

_THEOREMS = msgspec.json.Decoder(list[TheoremRecord])
_USES = msgspec.json.Decoder(list[PremiseUse])
_CORPUS_LINE = msgspec.json.Decoder(CorpusRecord)
_ENCODER = msgspec.json.Encoder()
_PLAIN = msgspec.json.Decoder()


def decode_theorems(piece: bytes) -> list[TheoremRecord]:
    """The records of ``piece`` (a JSON array of theorem records); ``ValueError`` unless every
    one has the plain shape (msgspec's errors are ``ValueError``\\ s)."""
    return _THEOREMS.decode(piece)


def decode_corpus_line(line: bytes) -> CorpusRecord:
    """The record of a ``corpus.jsonl`` line; ``ValueError`` unless it has the plain shape."""
    return _CORPUS_LINE.decode(line)


def decode_uses(data: bytes) -> list[PremiseUse]:
    """The premise uses of a ``theorems.uses_json`` value; ``ValueError`` for any other shape."""
    return _USES.decode(data)


def spans_in_order(record: TheoremRecord | CorpusRecord) -> bool:
    """Whether no end of ``record`` (the theorem's and each annotated premise's, or each
    premise's of a corpus line) is before its start: the one rule of the models the types do
    not check."""
    if isinstance(record, CorpusRecord):
        return all(p.end >= p.start for p in record.premises)
    if record.end < record.start:
        return False
    for tactic in record.traced_tactics:
        for p in tactic.annotated_tactic[1]:
            if p.def_end_pos < p.def_pos:
                return False
    return True


def encode(entries: list[TacticRecord] | list[PremiseRecord]) -> bytes:
    """The exported JSON of tactics or premises (compact UTF-8, as
    :func:`~leantrain.export.fast_rows.dumps` writes their
    :func:`~leantrain.export.fast_rows.tactic_entries` / ``premise_entries``)."""
    return _ENCODER.encode(entries)


def to_dict(record: TheoremRecord | CorpusRecord) -> dict[str, Any]:
    """``record`` as plain JSON values (lists, not tuples, so that the model's error message
    shows them as it shows the values read from the file; defaults filled in), for the model
    to name what is wrong with it."""
    value: dict[str, Any] = _PLAIN.decode(_ENCODER.encode(record))
    return value
