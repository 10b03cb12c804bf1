"""Database rows of well-formed records, built without a pydantic model per record.

The import of a 100k-theorem export spends most of its time validating records with the
pydantic models of :mod:`leantrain.core.schemas` (a model object per theorem, tactic and
premise). The functions here check a record against the same rules with plain type checks and
build its rows directly; they accept only the *exact* shapes the models would accept unchanged
(``str`` where a string is required, ``int`` — never ``bool`` — coordinates in
``[0, MAX_POS]``, two-element position lists with the end not before the start). Anything else
— a missing field, a wrong type, a value pydantic would coerce — returns ``None``, and the
caller validates the record with the model, which raises the one-line
:class:`~leantrain.core.errors.DataError` naming file, record and field. So a record is
accepted by the fast path only if the model accepts it with the same values, and every bad
record still gets the model's message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson
from leantrain.core import json_fast
from leantrain.core.schemas import MAX_POS, Theorem, TracedTactic

WHOLE_PROOF_FIELDS = ("formal_proof", "header", "proof_origin", "difficulty")
"""Theorem fields of whole-proof data: stored with the record's unknown fields (``extra``), so
the schema keeps its columns; a record that has one is validated by the model."""
THEOREM_FIELDS = frozenset(Theorem.model_fields) - frozenset(WHOLE_PROOF_FIELDS)
TACTIC_FIELDS = frozenset(TracedTactic.model_fields)
PREMISE_FIELDS = frozenset({"full_name", "code", "start", "end", "kind"})
_PROVENANCE_FIELDS = ("full_name", "def_path", "def_pos", "def_end_pos")
_TACTIC_ORDER = ("tactic", "annotated_tactic", "state_before", "state_after")

_PREMISE_ORDER = ("full_name", "code", "start", "end", "kind")

CorpusParts = tuple[str, list[str], list[tuple[Any, ...]], list[Any] | None]
"""``(path, imports, premises, canonical)`` of :func:`corpus_parts`."""

TheoremParts = tuple[tuple[Any, ...], list[tuple[Any, ...]], list[Any] | None]
"""``(head, tactics, canonical)`` of :func:`theorem_parts`."""


def extra_json(obj: dict[str, Any], known: frozenset[str]) -> str | None:
    """The fields of ``obj`` that are not in ``known``, as JSON (None when there are none)."""
    if obj.keys() <= known:
        return None
    rest = {k: v for k, v in obj.items() if k not in known}
    return json.dumps(rest, ensure_ascii=False)


def _span(start: Any, end: Any) -> tuple[int, int, int, int] | None:
    """``(line, col, end_line, end_col)`` of two well-formed positions, the end not before the
    start; else None. (One function, not one per position: it runs ~400k times per 100k
    theorems.)"""
    if type(start) is not list or type(end) is not list or len(start) != 2 or len(end) != 2:
        return None
    a, b = start
    c, d = end
    if type(a) is not int or type(b) is not int or type(c) is not int or type(d) is not int:
        return None
    if not (0 <= a <= MAX_POS and 0 <= b <= MAX_POS and 0 <= c <= MAX_POS and 0 <= d <= MAX_POS):
        return None
    if c < a or (c == a and d < b):
        return None
    return a, b, c, d


def theorem_parts(raw: Any) -> TheoremParts | None:
    """``(head, tactics, canonical)`` of a well-formed theorem record, or None (validate with
    the model).

    ``head`` is ``(url, commit, file_path, full_name, theorem_statement, start_line,
    start_col, end_line, end_col, extra_json)``; each tactic is ``(tactic, annotated_text or
    None, state_before, state_after, extra_json, provenances)`` with provenances
    ``[(full_name, def_path, line, col, end_line, end_col), …]``. ``canonical`` is the
    record's own ``traced_tactics`` list when it is already exactly in the exported form
    (:func:`tactic_entries`; what LeanDojo writes), so it can be serialised as it is; else None.
    """
    if type(raw) is not dict:
        return None
    if any(raw.get(k) is not None for k in WHOLE_PROOF_FIELDS):
        return None  # whole-proof fields: checked by the model
    get = raw.get
    url, commit, fp, name = get("url"), get("commit"), get("file_path"), get("full_name")
    if type(url) is not str or type(commit) is not str:
        return None
    if type(fp) is not str or type(name) is not str:
        return None
    statement = get("theorem_statement")
    if statement is not None and type(statement) is not str:
        return None
    span = _span(get("start"), get("end"))
    if span is None:
        return None
    traced = raw.get("traced_tactics", [])
    if type(traced) is not list:
        return None
    tactics: list[tuple[Any, ...]] = []
    canonical = True  # every tactic already in the exported form, key order included
    for tac in traced:
        if type(tac) is not dict:
            return None
        keys = tuple(tac)
        if keys == _TACTIC_ORDER:  # the usual record: exactly these fields, in this order
            text, ann, before, after = tac.values()
            extra = None
        else:
            canonical = canonical and keys[:4] == _TACTIC_ORDER
            text, before, after = tac.get("tactic"), tac.get("state_before"), tac.get("state_after")
            ann = tac.get("annotated_tactic")
            extra = None if tac.keys() <= TACTIC_FIELDS else extra_json(tac, TACTIC_FIELDS)
        if type(text) is not str or type(before) is not str or type(after) is not str:
            return None
        provenances: list[tuple[Any, ...]] = []
        annotated = None
        if ann is None:
            canonical = False
        else:
            if type(ann) is not list or len(ann) != 2:
                return None
            annotated, provs = ann
            if type(annotated) is not str or type(provs) is not list:
                return None
            for p in provs:
                if type(p) is not dict:
                    return None
                if tuple(p) == _PROVENANCE_FIELDS:
                    pname, ppath, pos, end_pos = p.values()
                else:
                    canonical = False
                    pname, ppath = p.get("full_name"), p.get("def_path")
                    pos, end_pos = p.get("def_pos"), p.get("def_end_pos")
                if type(pname) is not str or type(ppath) is not str:
                    return None
                pspan = _span(pos, end_pos)
                if pspan is None:
                    return None
                provenances.append((pname, ppath, *pspan))
        tactics.append((text, annotated, before, after, extra, provenances))
    head = (url, commit, fp, name, statement, *span, extra_json(raw, THEOREM_FIELDS))
    return head, tactics, traced if canonical else None


def corpus_parts(raw: Any) -> CorpusParts | None:
    """``(path, imports, premises, canonical)`` of a well-formed ``corpus.jsonl`` line, or None.

    Each premise is ``(full_name, code, start_line, start_col, end_line, end_col, kind,
    extra_json)``. ``canonical`` is the line's own ``premises`` list when it is already in the
    exported form (:func:`premise_entries`; what LeanDojo writes); else None.
    """
    if type(raw) is not dict:
        return None
    path = raw.get("path")
    imports = raw.get("imports", [])
    premises = raw.get("premises", [])
    if type(path) is not str or type(imports) is not list or type(premises) is not list:
        return None
    for imp in imports:
        if type(imp) is not str:
            return None
    rows: list[tuple[Any, ...]] = []
    canonical = True
    for p in premises:
        if type(p) is not dict:
            return None
        keys = tuple(p)
        if keys == _PREMISE_ORDER:  # the usual premise: exactly these fields, in this order
            name, code, start, end, kind = p.values()
            extra = None
        else:
            canonical = canonical and keys[:5] == _PREMISE_ORDER
            name, code, kind = p.get("full_name"), p.get("code", ""), p.get("kind", "theorem")
            start, end = p.get("start"), p.get("end")
            extra = None if p.keys() <= PREMISE_FIELDS else extra_json(p, PREMISE_FIELDS)
        if type(name) is not str or type(code) is not str or type(kind) is not str:
            return None
        span = _span(start, end)
        if span is None:
            return None
        rows.append((name, code, *span, kind, extra))
    return path, imports, rows, premises if canonical else None


def premise_entries(premises: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """The exported form of :func:`corpus_parts` premises: ``{full_name, code, start, end,
    kind}`` then the premise's unknown fields."""
    out = []
    for name, code, a, b, c, d, kind, extra in premises:
        entry = {"full_name": name, "code": code, "start": [a, b], "end": [c, d], "kind": kind}
        if extra:
            entry.update(json.loads(extra))
        out.append(entry)
    return out


def tactic_entries(tactics: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """The exported form of :func:`theorem_parts` tactics: ``{tactic, annotated_tactic:
    [text with marks (the tactic when it had none), [provenance, …]], state_before,
    state_after}`` then the tactic's unknown fields."""
    out = []
    for text, annotated, before, after, extra, provenances in tactics:
        entry = {
            "tactic": text,
            "annotated_tactic": [
                text if annotated is None else annotated,
                [
                    {"full_name": n, "def_path": d, "def_pos": [a, b], "def_end_pos": [c, e]}
                    for n, d, a, b, c, e in provenances
                ],
            ],
            "state_before": before,
            "state_after": after,
        }
        if extra:
            entry.update(json.loads(extra))
        out.append(entry)
    return out


def tactics_json(
    entries: list[Any], keep: list[bool], encode: Callable[[Any], bytes] | None = None
) -> tuple[bytes, bytes | None, int]:
    """``(tactics_json, kept_json, num_kept)`` of a theorem (:mod:`~leantrain.export.schema`):
    the exported tactics as UTF-8 JSON, the same without the dropped ones (None when none is
    dropped), and how many are kept. Stored as bytes (SQLite keeps them as BLOBs): no
    decoding on import, and the export copies them into its output as they are. ``encode``
    writes the JSON of a list of entries (default :func:`dumps`)."""
    encode = encode or dumps
    full = encode(entries)
    num_kept = sum(keep)
    if num_kept == len(entries):
        return full, None, num_kept
    return (
        full,
        encode([e for e, k in zip(entries, keep, strict=True) if k]),
        num_kept,
    )


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON of ``obj`` (orjson; the standard library for what orjson cannot
    encode, such as integers beyond 64 bits in an unknown field, and ``\\uXXXX`` escapes
    for lone surrogates, which UTF-8 cannot hold)."""
    try:
        return orjson.dumps(obj)
    except orjson.JSONEncodeError:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, separators=(",", ":")).encode("ascii")


def loads(text: str | bytes) -> Any:
    """The JSON value of ``text`` written by :func:`dumps` (orjson where it reads it exactly;
    the standard library for the rest, such as integers beyond 64 bits, which orjson would
    read as floats: :func:`leantrain.core.json_fast.loads`)."""
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    value = json_fast.loads(data, json.loads)
    return json.loads(text) if value is json_fast.MISS else value
