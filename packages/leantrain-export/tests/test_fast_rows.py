"""The import's fast path accepts a record only when the pydantic model accepts it unchanged.

Each case mutates a well-formed theorem or corpus line (wrong types, values pydantic would
coerce, missing fields, bad positions, extra fields, other key orders); the fast path must
either decline (None: the model then validates and names the error) or build exactly the rows
the model's values give — and claim a record is already in the exported form only when it is.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from leantrain.core.errors import DataError
from leantrain.core.schemas import MAX_POS, CorpusFile, Theorem, validate_record
from leantrain.export.fast_rows import (
    PREMISE_FIELDS,
    corpus_parts,
    dumps,
    extra_json,
    loads,
    premise_entries,
    tactic_entries,
    theorem_parts,
)
from leantrain.export.importer import _theorem_parts_of


def _theorem() -> dict[str, Any]:
    return {
        "url": "https://github.com/o/r",
        "commit": "c",
        "file_path": "A/B.lean",
        "full_name": "A.b",
        "theorem_statement": "theorem A.b : p := by",
        "start": [3, 1],
        "end": [5, 9],
        "traced_tactics": [
            {
                "tactic": "simp [Nat.add_comm]",
                "annotated_tactic": [
                    "simp [<a>Nat.add_comm</a>]",
                    [
                        {
                            "full_name": "Nat.add_comm",
                            "def_path": "Init/Nat.lean",
                            "def_pos": [10, 1],
                            "def_end_pos": [10, 40],
                        }
                    ],
                ],
                "state_before": "n : ℕ\n⊢ p",
                "state_after": "no goals",
            },
            {
                "tactic": "rfl",
                "annotated_tactic": ["rfl", []],
                "state_before": "⊢ q",
                "state_after": "no goals",
            },
        ],
    }


_VALUES = [None, True, 0, -1, 1.0, 2.5, "7", "", [], [1], [1, 2, 3], {}, MAX_POS + 1, 10**30]
_PATHS = [
    ("url",),
    ("full_name",),
    ("theorem_statement",),
    ("start",),
    ("end",),
    ("start", 0),
    ("end", 1),
    ("traced_tactics",),
    ("traced_tactics", 0),
    ("traced_tactics", 0, "tactic"),
    ("traced_tactics", 0, "state_before"),
    ("traced_tactics", 1, "annotated_tactic"),
    ("traced_tactics", 0, "annotated_tactic", 0),
    ("traced_tactics", 0, "annotated_tactic", 1),
    ("traced_tactics", 0, "annotated_tactic", 1, 0),
    ("traced_tactics", 0, "annotated_tactic", 1, 0, "def_pos"),
    ("traced_tactics", 0, "annotated_tactic", 1, 0, "def_end_pos", 0),
    ("traced_tactics", 0, "annotated_tactic", 1, 0, "full_name"),
]


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    obj = copy.deepcopy(obj)
    target = obj
    for part in path[:-1]:
        target = target[part]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return obj


_DELETE = object()


def _mutations() -> list[Any]:
    base = _theorem()
    out = [base]
    for path, value in itertools.product(_PATHS, [*_VALUES, _DELETE]):
        if value is _DELETE and isinstance(path[-1], int):
            continue
        out.append(_set(base, path, value))
    extra = copy.deepcopy(base)
    extra["extra_field"] = {"k": [1, None]}
    extra["traced_tactics"][0]["note"] = "x"
    extra["traced_tactics"][0]["annotated_tactic"][1][0]["kind"] = "thm"  # dropped on import
    out.append(extra)
    reordered = copy.deepcopy(base)
    reordered["traced_tactics"][1] = dict(reversed(list(reordered["traced_tactics"][1].items())))
    out.append(reordered)
    no_annotation = copy.deepcopy(base)
    del no_annotation["traced_tactics"][1]["annotated_tactic"]
    out.append(no_annotation)
    backwards = _set(base, ("end",), [3, 0])
    out.append(backwards)
    return out


@pytest.mark.parametrize("raw", _mutations())
def test_fast_theorem_rows_equal_the_models(raw):
    fast = theorem_parts(copy.deepcopy(raw))
    try:
        thm = validate_record(Theorem, copy.deepcopy(raw), path=None, index=0)
    except DataError:
        assert fast is None
        return
    slow = _theorem_parts_of(thm, raw)
    if fast is None:
        return  # declined: the model's rows are used
    assert fast[:2] == slow[:2]
    if fast[2] is not None:  # claimed to be in the exported form already
        assert fast[2] == tactic_entries(slow[1])


def _apply(raw: Any, changes: list[tuple[tuple[Any, ...], Any]]) -> Any:
    """``raw`` with each change applied in turn (one whose path no longer exists is skipped)."""
    for path, value in changes:
        if value is _DELETE and isinstance(path[-1], int):
            continue
        try:
            raw = _set(raw, path, value)
        except (KeyError, IndexError, TypeError):
            continue
    return raw


_POSITIONS = [
    ("start", 0),
    ("start", 1),
    ("end", 0),
    ("end", 1),
    ("traced_tactics", 0, "annotated_tactic", 1, 0, "def_pos", 0),
    ("traced_tactics", 0, "annotated_tactic", 1, 0, "def_pos", 1),
    ("traced_tactics", 0, "annotated_tactic", 1, 0, "def_end_pos", 0),
    ("traced_tactics", 0, "annotated_tactic", 1, 0, "def_end_pos", 1),
]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.sampled_from(_PATHS), st.sampled_from([*_VALUES, _DELETE])),
            # small coordinates: ends before starts, equal positions, negatives
            st.tuples(st.sampled_from(_POSITIONS), st.integers(-1, 12)),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_fast_theorem_rows_equal_the_models_under_combined_mutations(changes):
    """Several mutations at once (the cases above change one thing each)."""
    test_fast_theorem_rows_equal_the_models(_apply(_theorem(), changes))


def _corpus_line() -> dict[str, Any]:
    return {
        "path": "A/B.lean",
        "imports": ["A/A.lean"],
        "premises": [
            {"full_name": "A.x", "code": "def A.x := 1", "start": [1, 1], "end": [1, 12],
             "kind": "definition"},
            {"full_name": "A.y", "start": [2, 1], "end": [2, 5]},
        ],
    }  # fmt: skip


_CORPUS_PATHS = [
    ("path",),
    ("imports",),
    ("imports", 0),
    ("premises",),
    ("premises", 0),
    ("premises", 0, "full_name"),
    ("premises", 0, "code"),
    ("premises", 0, "kind"),
    ("premises", 1, "start"),
    ("premises", 1, "end", 0),
]


@pytest.mark.parametrize(
    "raw",
    [
        _corpus_line(),
        *(
            _set(_corpus_line(), p, v)
            for p, v in itertools.product(_CORPUS_PATHS, [*_VALUES, _DELETE])
            if not (v is _DELETE and isinstance(p[-1], int))
        ),
    ],
)
def test_fast_corpus_rows_equal_the_models(raw):
    fast = corpus_parts(copy.deepcopy(raw))
    try:
        pf = validate_record(CorpusFile, copy.deepcopy(raw), path=None, index=0)
    except DataError:
        assert fast is None
        return
    if fast is None:
        return
    raw_premises = raw.get("premises") or []
    slow = [
        (p.full_name, p.code, *p.start, *p.end, p.kind, extra_json(raw_premises[j], PREMISE_FIELDS))
        for j, p in enumerate(pf.premises)
    ]
    assert fast[:3] == (pf.path, pf.imports, slow)
    if fast[3] is not None:  # claimed to be in the exported form already
        assert fast[3] == premise_entries(slow)


def test_the_plain_shapes_take_the_fast_path():
    head, tactics, canonical = theorem_parts(_theorem())
    assert head[2:9] == ("A/B.lean", "A.b", "theorem A.b : p := by", 3, 1, 5, 9)
    assert canonical is not None and len(tactics) == 2
    line = _corpus_line()
    assert corpus_parts(line)[3] is None  # the second premise leaves code and kind out
    del line["premises"][1]
    assert corpus_parts(line)[3] == line["premises"]


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 10**40, "\ud800", 1.5, "9" * 30])
def test_stored_json_reads_back_exactly(value):
    # orjson reads integers beyond 64 bits as floats: loads must not (a merged corpus file
    # reads its premises back with it).
    premises = [{"full_name": "A.x", "start": [1, 1], "extra": value}]
    for text in (dumps(premises), dumps(premises).decode("utf-8")):
        back = loads(text)
        assert back == premises
        assert type(back[0]["extra"]) is type(value)
