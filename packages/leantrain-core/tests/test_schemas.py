"""Schemas load real LeanDojo data; a bad record names the file, the record and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from leantrain.core import DataError, Theorem, load_corpus, load_progress_rows, load_theorems
from leantrain.core.schemas import load_records

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data"
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"real Lean data not found at {SHARED}"
)


@needs_shared
def test_loads_real_leandojo_v2_export():
    root = SHARED / "lean4-example"
    thms = [
        t for s in ("train", "val", "test") for t in load_theorems(root / "random" / f"{s}.json")
    ]
    assert len(thms) == 20
    assert sum(len(t.traced_tactics) for t in thms) == 40
    names = {p.full_name for t in thms for x in t.traced_tactics for p in x.premises}
    assert len(names) == 8 and "Nat.mul_comm" in names
    # round trip: to_json gives back the on-disk record
    raw = json.loads((root / "random" / "train.json").read_text())[0]
    assert Theorem.model_validate(raw).to_json() == raw


@needs_shared
def test_loads_benchmark_without_annotations_and_without_statement():
    thms = load_theorems(SHARED / "mathlib-sample" / "test.json")
    assert len(thms) == 100 and sum(len(t.traced_tactics) for t in thms) == 469
    assert all(x.premises == [] for t in thms for x in t.traced_tactics)
    head = load_theorems(SHARED / "leandojo-benchmark-4-head" / "test_head.json")
    assert len(head) == 762
    assert sum(bool(x.premises) for t in head for x in t.traced_tactics) == 1069


def _good():
    return {
        "url": "https://github.com/a/b",
        "commit": "0" * 40,
        "file_path": "A.lean",
        "full_name": "t",
        "start": [1, 1],
        "end": [2, 5],
        "traced_tactics": [
            {
                "tactic": "rfl",
                "annotated_tactic": ["rfl", []],
                "state_before": "⊢ 1 = 1",
                "state_after": "no goals",
            }
        ],
    }


def test_bad_record_names_file_index_and_field(tmp_path):
    bad = _good()
    bad["traced_tactics"][0]["state_before"] = 3
    path = tmp_path / "train.json"
    path.write_text(json.dumps([_good(), bad]))
    with pytest.raises(DataError) as e:
        load_theorems(path)
    assert (e.value.path, e.value.index, e.value.field) == (
        str(path),
        1,
        "traced_tactics[0].state_before",
    )
    msg = str(e.value)
    assert str(path) in msg and "record 1" in msg and "state_before" in msg and "Theorem" in msg


def test_missing_field_and_wrong_position(tmp_path):
    rec = _good()
    del rec["full_name"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps([rec]))
    with pytest.raises(DataError, match="required field is missing") as e:
        load_theorems(path)
    assert e.value.field == "full_name"
    rec = _good()
    rec["start"] = [1]
    path.write_text(json.dumps([rec]))
    with pytest.raises(DataError) as e:
        load_theorems(path)
    assert e.value.field.startswith("start")


def test_file_level_errors(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        load_theorems(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("[{")
    with pytest.raises(DataError, match="malformed JSON at line 1: Expecting property name"):
        load_theorems(tmp_path / "bad.json")
    (tmp_path / "obj.json").write_text("{}")
    with pytest.raises(DataError, match="expected a JSON array"):
        load_theorems(tmp_path / "obj.json")
    (tmp_path / "c.jsonl").write_text(
        '{"path": "A.lean", "imports": [], "premises": []}\n\nnot json\n'
    )
    with pytest.raises(DataError) as e:
        load_corpus(tmp_path / "c.jsonl")
    assert e.value.index == 2
    (tmp_path / "list.json").write_text("[1]")
    with pytest.raises(DataError, match="expected a JSON object"):
        load_theorems(tmp_path / "list.json")


def test_progress_rows_strict_non_negative_int(tmp_path):
    p = tmp_path / "p.jsonl"
    p.write_text(json.dumps({"goal": "⊢ a", "tactic": "simp", "steps_remaining": 2}) + "\n")
    assert load_progress_rows(p)[0].steps_remaining == 2
    for bad in (-1, "2", 1.5):
        p.write_text(json.dumps({"goal": "⊢ a", "tactic": "simp", "steps_remaining": bad}) + "\n")
        with pytest.raises(DataError) as e:
            load_progress_rows(p)
        assert e.value.field == "steps_remaining"


def test_extra_fields_are_kept_and_annotation_optional(tmp_path):
    rec = _good()
    rec["extra"] = {"x": 1}
    rec["traced_tactics"][0]["annotated_tactic"] = None
    path = tmp_path / "t.json"
    path.write_text(json.dumps([rec]))
    (t,) = load_records(Theorem, path)
    assert t.to_json()["extra"] == {"x": 1} and t.traced_tactics[0].premises == []


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"start": [10**30, 0]}, "start[0]", "less than or equal to 1000000000"),
        ({"start": [-1, 0]}, "start[0]", "greater than or equal to 0"),
        ({"end": [2, -5]}, "end[1]", "greater than or equal to 0"),
        ({"start": [5, 0], "end": [2, 5]}, "end", r"end \[2, 5\] is before start \[5, 0\]"),
        ({"start": [2, 6], "end": [2, 5]}, "end", "is before start"),
        # strict integers: a bool, a float or a numeric string is not taken as a number
        ({"start": [True, 1]}, "start[0]", "valid integer .*got bool"),
        ({"end": [30, 1.0]}, "end[1]", "valid integer .*got float"),
        ({"start": ["1", 1]}, "start[0]", "valid integer .*got str"),
    ],
)
def test_theorem_positions_are_bounded_and_ordered(tmp_path, change, field, message):
    path = tmp_path / "train.json"
    path.write_text(json.dumps([_good(), {**_good(), **change}]))
    with pytest.raises(DataError, match=message) as e:
        load_theorems(path)
    assert (e.value.index, e.value.field) == (1, field)
    assert str(path) in str(e.value)


def test_premise_and_annotation_positions_are_checked(tmp_path):
    rec = _good()
    rec["traced_tactics"][0]["annotated_tactic"] = [
        "<a>foo</a>",
        [{"full_name": "foo", "def_path": "B.lean", "def_pos": [3, 4], "def_end_pos": [3, 1]}],
    ]
    path = tmp_path / "train.json"
    path.write_text(json.dumps([rec]))
    with pytest.raises(DataError, match=r"def_end_pos .* is before def_pos") as e:
        load_theorems(path)
    assert e.value.field is not None and e.value.field.endswith("def_end_pos")
    corpus = tmp_path / "corpus.jsonl"
    premise = {"full_name": "foo", "code": "", "start": [1, 0], "end": [1, 0]}
    good = {"path": "B.lean", "imports": [], "premises": [premise]}
    bad = {"path": "C.lean", "premises": [{**premise, "start": [-3, 0]}]}
    corpus.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(DataError, match="greater than or equal to 0") as e:
        load_corpus(corpus)
    assert (e.value.index, e.value.field) == (1, "premises[0].start[0]")
    corpus.write_text(json.dumps(good) + "\n")
    assert load_corpus(corpus)[0].premises[0].start == (1, 0)  # start == end is a position


def test_load_records_streams_and_can_require_records(tmp_path):
    path = tmp_path / "val.json"
    path.write_text("[]")
    assert load_theorems(path) == []
    with pytest.raises(DataError, match="no Theorem records"):
        load_records(Theorem, path, allow_empty=False)
    path.write_text(json.dumps([_good()]) + json.dumps([_good()]))
    with pytest.raises(DataError, match="unexpected data after the end of the JSON array"):
        load_theorems(path)
