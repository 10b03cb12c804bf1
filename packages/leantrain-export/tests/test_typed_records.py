"""The msgspec records accept a record only when the pydantic model accepts it unchanged.

The cases of ``test_fast_rows`` (one mutation each, and up to four combined) are written as
JSON and decoded as the importer decodes them: a record the typed decoder reads must be one
the model accepts with the same values (or refuses only for an end before its start, which
:func:`spans_in_order` reports), its rows must be the model's, and its tactics' JSON must be
byte for byte what the dict path writes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from export_helpers import tactic, theorem, write_export
from hypothesis import given, settings
from hypothesis import strategies as st
from leantrain.core.errors import DataError
from leantrain.core.schemas import CorpusFile, Theorem, validate_record
from leantrain.export.fast_rows import dumps, premise_entries, tactic_entries
from leantrain.export.importer import _theorem_parts_of
from leantrain.export.sources import read_source
from leantrain.export.typed_records import (
    CorpusRecord,
    TheoremRecord,
    decode_corpus_line,
    decode_theorems,
    encode,
    spans_in_order,
    to_dict,
)
from test_fast_rows import (
    _CORPUS_PATHS,
    _DELETE,
    _PATHS,
    _POSITIONS,
    _VALUES,
    _apply,
    _corpus_line,
    _mutations,
    _set,
    _theorem,
)


def _as_json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _check_theorem(raw: object) -> bool:
    """Check the typed decoding of ``raw`` against the model; whether it was decoded."""
    try:
        (rec,) = decode_theorems(b"[" + _as_json(raw) + b"]")
    except ValueError:
        return False  # read as plain JSON: test_fast_rows covers that path
    try:
        thm = validate_record(Theorem, copy.deepcopy(raw), path=None, index=0)
    except DataError as e:
        assert not spans_in_order(rec)  # the one rule the types leave to Python
        with pytest.raises(DataError) as typed:  # the message the user saw before
            validate_record(Theorem, to_dict(rec), path=None, index=0)
        assert str(typed.value) == str(e)
        return True
    assert spans_in_order(rec)
    head, tactics, _ = _theorem_parts_of(thm, raw)
    assert (rec.url, rec.commit, rec.file_path, rec.full_name, rec.theorem_statement) == head[:5]
    assert (*rec.start, *rec.end) == head[5:9] and head[9] is None
    assert [
        (
            t.tactic,
            t.annotated_tactic[0],
            t.state_before,
            t.state_after,
            None,
            [(p.full_name, p.def_path, *p.def_pos, *p.def_end_pos) for p in t.annotated_tactic[1]],
        )
        for t in rec.traced_tactics
    ] == tactics
    assert encode(rec.traced_tactics) == dumps(tactic_entries(tactics))
    return True


@pytest.mark.parametrize("raw", _mutations())
def test_typed_theorems_equal_the_models(raw):
    _check_theorem(raw)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.sampled_from(_PATHS), st.sampled_from([*_VALUES, _DELETE])),
            st.tuples(st.sampled_from(_POSITIONS), st.integers(-1, 12)),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_typed_theorems_equal_the_models_under_combined_mutations(changes):
    _check_theorem(_apply(_theorem(), changes))


def test_only_the_plain_shape_is_typed():
    assert _check_theorem(_theorem())
    declined = [raw for raw in _mutations() if not _check_theorem(raw)]
    # unknown fields, a missing annotation, a bool, a float or a string for a number, …
    assert len(declined) > 100
    extra = _theorem()
    extra["traced_tactics"][0]["annotated_tactic"][1][0]["kind"] = "thm"
    assert not _check_theorem(extra)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(), min_size=4, max_size=4))
def test_encoding_is_orjsons_byte_for_byte(texts):
    """Any text (controls, quotes, backslashes, U+2028, astral characters): the msgspec
    encoding of a typed tactic is what the dict path writes with orjson."""
    raw = _theorem()
    tac = raw["traced_tactics"][0]
    tac["tactic"], tac["state_before"], tac["state_after"] = texts[:3]
    tac["annotated_tactic"][1][0]["def_path"] = texts[3]
    assert _check_theorem(raw)


def _check_corpus(raw: object) -> None:
    try:
        rec = decode_corpus_line(_as_json(raw))
    except ValueError:
        return
    try:
        pf = validate_record(CorpusFile, copy.deepcopy(raw), path=None, index=0)
    except DataError as e:
        assert not spans_in_order(rec)
        with pytest.raises(DataError) as typed:
            validate_record(CorpusFile, to_dict(rec), path=None, index=0)
        assert str(typed.value) == str(e)
        return
    assert spans_in_order(rec)
    assert (rec.path, rec.imports) == (pf.path, pf.imports)
    rows = [(p.full_name, p.code, *p.start, *p.end, p.kind, None) for p in pf.premises]
    assert encode(rec.premises) == dumps(premise_entries(rows))


@pytest.mark.parametrize(
    "raw",
    [
        _corpus_line(),
        *(
            _set(_corpus_line(), p, v)
            for p in _CORPUS_PATHS
            for v in [*_VALUES, _DELETE]
            if not (v is _DELETE and isinstance(p[-1], int))
        ),
        _set(_corpus_line(), ("premises", 1, "end"), [1, 9]),  # before its start
    ],
)
def test_typed_corpus_lines_equal_the_models(raw):
    _check_corpus(raw)


def test_the_importer_reads_records_where_it_can(tmp_path: Path):
    """``read_source(records=True)`` yields records for plain theorems and corpus lines,
    dicts for the rest (here one theorem with an unknown field spoils its piece), and the
    database holds the same rows either way."""
    from leantrain.export import Database

    url = "https://github.com/o/r"
    plain = [
        theorem(url, "c", f"A.t{i}", [tactic("simp [A.x]", ["A.x"])], line=i) for i in range(3)
    ]
    odd = theorem(url, "c", "A.odd", [tactic("rfl")], line=90)
    odd["note"] = "an unknown field"
    src = write_export(tmp_path / "src", url, "c", [*plain, odd], corpus=[_corpus_line()])
    kinds = {(item.kind, type(item.value).__name__) for item in read_source(src, records=True)}
    assert ("premise_file", CorpusRecord.__name__) in kinds
    assert ("theorem", "dict") in kinds  # the piece with the odd theorem
    small = tmp_path / "small"
    write_export(small, url, "c", plain, corpus=[_corpus_line()])
    assert {type(i.value) for i in read_source(small, records=True) if i.kind == "theorem"} == {
        TheoremRecord
    }
    assert {type(i.value) for i in read_source(small) if i.kind == "theorem"} == {dict}

    tables = "theorems", "premise_uses", "premise_files", "traced_files"

    def rows(records: bool) -> dict[str, list[tuple[object, ...]]]:
        from leantrain.export.importer import import_items

        path = tmp_path / f"db-{records}.sqlite"
        with Database(path) as db, db.transaction() as conn:
            import_items(conn, read_source(src, records=records))
            return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in tables}

    typed, plain_rows = rows(True), rows(False)
    assert typed == plain_rows and len(typed["theorems"]) == 4
