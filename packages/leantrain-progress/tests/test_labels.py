"""Label generation on hand-made proofs and real exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from leantrain.core.errors import DataError
from leantrain.core.schemas import Theorem
from leantrain.progress import LabelStats, make_progress_data, progress_rows, rebalance_by_length
from progress_helpers import SHARED_DATA, tactic, theorem, write_json


def _thm(name: str, tactic_texts: list[str]) -> Theorem:
    tacs = [tactic(t, f"state {name} {i}") for i, t in enumerate(tactic_texts)]
    return Theorem.model_validate(theorem(name, tacs))


def test_one_step_proof_has_one_row_with_one_step_remaining() -> None:
    rows = progress_rows([_thm("one", ["simp"])])
    assert [(r["goal"], r["prefix"], r["tactic"], r["steps_remaining"]) for r in rows] == [
        ("state one 0", "", "simp", 1)
    ]


def test_multi_step_proof_counts_down_to_one_and_builds_prefixes() -> None:
    rows = progress_rows([_thm("three", ["intro n", "induction n", "simp"])])
    assert [r["steps_remaining"] for r in rows] == [3, 2, 1]
    assert [r["prefix"] for r in rows] == ["", "intro n", "intro n\ninduction n"]
    assert [r["goal"] for r in rows] == ["state three 0", "state three 1", "state three 2"]
    assert {r["theorem"] for r in rows} == {"Demo.lean:three"}


def test_empty_tactics_are_not_steps() -> None:
    stats = LabelStats()
    rows = progress_rows([_thm("gaps", ["intro n", "   ", "simp", ""])], stats=stats)
    assert [(r["tactic"], r["steps_remaining"]) for r in rows] == [("intro n", 2), ("simp", 1)]
    assert rows[1]["prefix"] == "intro n"
    assert stats.empty_tactics == 2


def test_sorry_drops_the_theorem_by_default() -> None:
    stats = LabelStats()
    rows = progress_rows(
        [_thm("unfinished", ["intro n", "sorry"]), _thm("done", ["simp"])], stats=stats
    )
    assert [r["theorem"] for r in rows] == ["Demo.lean:done"]
    assert stats.theorems_with_sorry == 1 and stats.theorems_used == 1


def test_sorry_can_drop_only_the_tactic() -> None:
    rows = progress_rows(
        [_thm("unfinished", ["intro n", "admit", "simp"])], sorry_policy="drop_tactic"
    )
    assert [(r["tactic"], r["steps_remaining"], r["prefix"]) for r in rows] == [
        ("intro n", 2, ""),
        ("simp", 1, "intro n"),
    ]


def test_sorry_inside_identifier_is_not_skipped() -> None:
    rows = progress_rows([_thm("ok", ["exact sorryAx_free", "simp"])])
    assert [r["steps_remaining"] for r in rows] == [2, 1]


def test_rebalance_oversamples_long_proofs_only() -> None:
    thms = [_thm(f"s{i}", ["simp"]) for i in range(8)] + [_thm("long", ["a", "b", "c", "d"])]
    rows = progress_rows(thms)
    out = rebalance_by_length(rows, max_factor=4.0)
    short = [r for r in out if r["proof_length"] == 1]
    long = [r for r in out if r["proof_length"] == 4]
    assert len(short) == 8  # never shrunk
    assert len(long) == 8  # 4 rows, doubled up to the largest bin
    assert len(rebalance_by_length(rows, max_factor=1.0)) == len(rows)


def test_make_progress_data_reads_export_dir_and_writes_jsonl(tmp_path: Path) -> None:
    export = tmp_path / "export"
    write_json(
        export / "random" / "train.json",
        [theorem("a", [tactic("intro", "s0"), tactic("simp", "s1")])],
    )
    write_json(export / "random" / "val.json", [theorem("b", [tactic("rfl", "s2")])])
    write_json(export / "random" / "test.json", [])
    out = tmp_path / "rows.jsonl"
    rows = make_progress_data(export, out, splits=["train", "val"])
    assert [r["steps_remaining"] for r in rows] == [2, 1, 1]
    on_disk = [json.loads(line) for line in out.read_text().splitlines()]
    assert on_disk == rows


def test_no_usable_proofs_is_a_clear_error(tmp_path: Path) -> None:
    path = write_json(tmp_path / "train.json", [theorem("x", [tactic("sorry", "s")])])
    with pytest.raises(DataError, match="no progress rows"):
        make_progress_data(path)
    with pytest.raises(DataError, match="split files"):
        make_progress_data(_mkdir(tmp_path / "empty"))
    with pytest.raises(DataError, match="not found"):
        make_progress_data(tmp_path / "missing")


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path


@pytest.mark.skipif(
    not (SHARED_DATA / "lean4-example").is_dir(), reason="needs ../shared/data/lean4-example"
)
def test_real_export_labels() -> None:
    stats = LabelStats()
    rows = make_progress_data(SHARED_DATA / "lean4-example", splits=["all"], stats=stats)
    # 3 of its 20 theorems are `sorry` placeholders: dropped, so 37 of the 40 tactics are labelled.
    assert stats.theorems == 20 and stats.theorems_with_sorry == 3
    assert stats.rows == 37 == len(rows)
    by_thm: dict[str, list[int]] = {}
    for r in rows:
        by_thm.setdefault(r["theorem"], []).append(r["steps_remaining"])
    for labels in by_thm.values():
        assert labels == list(range(len(labels), 0, -1))
