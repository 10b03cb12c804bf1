"""Reading progress data: formats, validation errors, the proof-preserving split."""

from __future__ import annotations

from pathlib import Path

import pytest
from leantrain.core.errors import DataError
from leantrain.progress import ProgressDataset, build_text, load_progress_data
from progress_helpers import tactic, theorem, write_json, write_jsonl

GOOD = {"goal": "⊢ True", "prefix": "", "tactic": "trivial", "steps_remaining": 1}


def test_build_text_is_the_seeds_format() -> None:
    assert (
        build_text("⊢ p", "intro h", "exact h")
        == "Goal:\n⊢ p\n\nPrefix:\nintro h\n\nCandidate tactic:\nexact h"
    )
    assert build_text("⊢ p", None, "rfl") == "Goal:\n⊢ p\n\nPrefix:\n\n\nCandidate tactic:\nrfl"


def test_reads_jsonl_json_rows_and_traced_json(tmp_path: Path) -> None:
    assert load_progress_data(write_jsonl(tmp_path / "a.jsonl", [GOOD])) == [GOOD]
    assert load_progress_data(write_json(tmp_path / "b.json", [GOOD])) == [GOOD]
    traced = write_json(
        tmp_path / "train.json", [theorem("t", [tactic("intro", "s0"), tactic("simp", "s1")])]
    )
    ds = ProgressDataset(traced)
    assert [r["steps_remaining"] for r in ds] == [2, 1]
    assert len(ds.to_hf()) == 2


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        (
            {"prefix": "", "tactic": "simp", "steps_remaining": 1},
            "goal",
            "required field is missing",
        ),
        ({"goal": "⊢ p", "steps_remaining": 1}, "tactic", "required field is missing"),
        ({"goal": "⊢ p", "tactic": "simp"}, "steps_remaining", "required field is missing"),
        ({**GOOD, "steps_remaining": -2}, "steps_remaining", "greater than or equal to 0"),
        ({**GOOD, "steps_remaining": 2.5}, "steps_remaining", "valid integer"),
        ({**GOOD, "steps_remaining": "3"}, "steps_remaining", "valid integer"),
    ],
)
def test_bad_rows_name_file_record_and_field(
    tmp_path: Path, row: dict, field: str, message: str
) -> None:
    path = write_jsonl(tmp_path / "rows.jsonl", [GOOD, row])
    with pytest.raises(DataError) as err:
        load_progress_data(path)
    e = err.value
    assert e.path == str(path) and e.index == 1 and e.field == field
    assert message in str(e)


def test_empty_file_and_missing_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(DataError, match="no progress rows"):
        load_progress_data(empty)
    with pytest.raises(DataError, match="file not found"):
        load_progress_data(tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"goal": \n')
    with pytest.raises(DataError, match="malformed JSON"):
        load_progress_data(bad)


def test_split_keeps_each_proof_on_one_side() -> None:
    rows = [{**GOOD, "theorem": f"t{i // 3}", "steps_remaining": 3 - i % 3} for i in range(30)]
    train, evals = ProgressDataset(rows=rows).split(0.2, seed=1)
    assert len(train) + len(evals) == 30 and len(evals) == 6
    assert not {r["theorem"] for r in train} & {r["theorem"] for r in evals}
    again, _ = ProgressDataset(rows=rows).split(0.2, seed=1)
    assert again.data == train.data
