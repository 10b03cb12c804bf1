from __future__ import annotations

from pathlib import Path

import pytest
from leantrain.core.errors import DataError
from leantrain.tactics import TacticDatasetConfig, create_rl_dataset, create_sft_dataset

COLUMNS = [
    "prompt",
    "problem",
    "reference",
    "url",
    "commit",
    "file_path",
    "full_name",
    "tactic_index",
    "proof_prefix",
    "premises",
]


def test_rows_carry_identity_prefix_and_premises(theorems):
    rl = create_rl_dataset(theorems)
    assert len(rl) == 5
    row = rl.rows[1]
    assert row["problem"] == "a b : Nat\n⊢ a + b = b + a"
    assert row["reference"] == "rw [Nat.add_comm]"
    assert row["full_name"] == "add_comm'" and row["tactic_index"] == 1
    assert (row["url"], row["commit"], row["file_path"]) == (
        "https://github.com/example/demo",
        "abc123",
        "Demo.lean",
    )
    assert row["proof_prefix"] == ["intro a b"]
    assert row["premises"] == ["Nat.add_comm"]
    assert row["prompt"][-1] == {"role": "user", "content": row["problem"]}


def test_prefix_keeps_skipped_tactics_verbatim(make):
    # Replaying in Lean needs the real proof, so the prefix holds filtered-out tactics too.
    thm = make.theorem(
        "t",
        [
            make.traced("  ", "⊢ A"),
            make.traced("sorry", "⊢ B"),
            make.traced("constructor\n  · simp", "⊢ C"),
            make.traced("rfl", "⊢ D"),
        ],
    )
    rl = create_rl_dataset([thm], config=TacticDatasetConfig(first_line_only=True))
    assert [r["reference"] for r in rl] == ["constructor", "rfl"]
    assert [r["tactic_index"] for r in rl] == [2, 3]
    assert rl.rows[1]["proof_prefix"] == ["  ", "sorry", "constructor\n  · simp"]


def test_to_hf_has_exact_columns_and_types(theorems):
    hf = create_rl_dataset(theorems).to_hf()
    assert hf.column_names == COLUMNS
    assert hf.features["tactic_index"].dtype == "int64"
    assert hf[0]["premises"] == [] and hf[0]["proof_prefix"] == []
    assert hf[4]["premises"] == ["Nat.le_refl"]


def test_same_examples_as_sft(theorems):
    sft = create_sft_dataset(theorems)
    rl = create_rl_dataset(theorems)
    assert [r["completion"][0]["content"] for r in sft] == [r["reference"] for r in rl]
    assert [r["prompt"] for r in sft] == [r["prompt"] for r in rl]


def test_streaming_to_hf_is_iterable(export_dir: Path):
    rl = create_rl_dataset(export_dir, streaming=True)
    rows = list(rl.to_hf())
    assert rows == create_rl_dataset(export_dir).rows


def test_not_a_theorem_list():
    with pytest.raises(DataError, match="expected a path or a list"):
        create_rl_dataset({"url": "x"})  # type: ignore[arg-type]
    with pytest.raises(DataError, match="record 0"):
        create_rl_dataset([{"url": "x"}])


def test_real_benchmark_premises(shared_data: Path):
    path = shared_data / "leandojo-benchmark-4-head" / "test_head.json"
    rl = create_rl_dataset(path)
    with_premises = [r for r in rl if r["premises"]]
    # the README: 1,751 traced tactics, 1,069 with at least one annotated premise
    assert rl.stats.tactics == 1751
    assert 1000 <= len(with_premises) <= 1069
    for row in rl.rows[:200]:
        assert len(row["proof_prefix"]) == row["tactic_index"]
