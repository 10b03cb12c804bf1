from __future__ import annotations

import json
from pathlib import Path

import pytest
from leantrain.core.config import config_from_dict
from leantrain.core.errors import ConfigError, DataError
from leantrain.tactics import (
    DEFAULT_SYSTEM_PROMPT,
    SFTDataset,
    TacticDatasetConfig,
    build_messages,
    create_sft_dataset,
    format_user_prompt,
)


def tactics_of(ds: SFTDataset) -> list[str]:
    return [row["completion"][0]["content"] for row in ds]


def test_rows_are_prompt_completion_with_marks_removed(theorems):
    ds = create_sft_dataset(theorems)
    row = ds.rows[-1]
    assert row["prompt"] == [
        {"role": "system", "content": DEFAULT_SYSTEM_PROMPT},
        {"role": "user", "content": "n : Nat\n⊢ n ≤ n"},
    ]
    assert row["completion"] == [{"role": "assistant", "content": "exact Nat.le_refl _"}]
    assert set(row) == {"prompt", "completion"}


def test_sorry_and_empty_skipped_multiline_kept_whole(theorems):
    ds = create_sft_dataset(theorems)
    assert tactics_of(ds) == [
        "intro a b",
        "rw [Nat.add_comm]",
        "constructor\n  · simp\n  · simp",
        "intro a b",
        "exact Nat.le_refl _",
    ]
    assert ds.stats.removed == {"sorry/admit": 1, "empty tactic": 1}
    assert ds.stats.theorems == 3 and ds.stats.tactics == 7 and len(ds) == 5


def test_first_line_dedup_and_max_samples(theorems):
    cfg = TacticDatasetConfig(first_line_only=True, dedup=True)
    assert tactics_of(create_sft_dataset(theorems, config=cfg)) == [
        "intro a b",
        "rw [Nat.add_comm]",
        "constructor",
        "exact Nat.le_refl _",
    ]
    assert tactics_of(create_sft_dataset(theorems, max_samples=2)) == [
        "intro a b",
        "rw [Nat.add_comm]",
    ]
    # the argument overrides the config's value
    cfg = TacticDatasetConfig(max_samples=1)
    assert len(create_sft_dataset(theorems, config=cfg)) == 1
    assert len(create_sft_dataset(theorems, max_samples=3, config=cfg)) == 3


def test_keep_sorry_when_asked(theorems):
    ds = create_sft_dataset(theorems, config=TacticDatasetConfig(skip_sorry=False))
    assert "sorry" in tactics_of(ds)


def test_custom_system_prompt_and_none():
    assert build_messages("⊢ True", "Be brief.")[0] == {"role": "system", "content": "Be brief."}
    assert build_messages("  ⊢ <a>True</a>\n", "") == [{"role": "user", "content": "⊢ True"}]
    assert format_user_prompt("x : <a>Nat</a>\n⊢ x = x ") == "x : Nat\n⊢ x = x"


def test_export_dir_split_file_and_jsonl_agree(export_dir: Path, theorems, tmp_path: Path):
    from_dir = create_sft_dataset(export_dir, "train").rows
    from_split_dir = create_sft_dataset(export_dir / "random", "train").rows
    from_file = create_sft_dataset(export_dir / "random" / "train.json").rows
    jsonl = tmp_path / "thms.jsonl"
    jsonl.write_text("\n".join(json.dumps(t) for t in theorems) + "\n", encoding="utf-8")
    from_jsonl = create_sft_dataset(jsonl).rows
    assert (
        from_dir == from_split_dir == from_file == from_jsonl == create_sft_dataset(theorems).rows
    )
    assert len(create_sft_dataset(export_dir, "val")) == 2


def test_missing_split_names_what_exists(export_dir: Path):
    with pytest.raises(DataError, match="no split 'test'") as e:
        create_sft_dataset(export_dir, "test")
    assert "train" in str(e.value) and "val" in str(e.value)
    with pytest.raises(DataError, match="no such file"):
        create_sft_dataset(export_dir / "nope")


def test_bad_record_names_file_index_and_field(tmp_path: Path, theorems):
    del theorems[1]["traced_tactics"][0]["state_before"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(theorems), encoding="utf-8")
    with pytest.raises(DataError) as e:
        create_sft_dataset(path)
    msg = str(e.value)
    assert str(path) in msg and "record 1" in msg and "state_before" in msg


def test_empty_after_filters_says_which_filter(tmp_path: Path, make):
    tr = make.traced
    thms = [make.theorem("t", [tr("sorry", "⊢ True"), tr("admit", "⊢ False"), tr("", "⊢ 1 = 1")])]
    with pytest.raises(DataError) as e:
        create_sft_dataset(thms)
    assert "2 sorry/admit" in str(e.value) and "1 empty tactic" in str(e.value)
    path = tmp_path / "empty.json"
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(DataError, match="no traced tactics") as e:
        create_sft_dataset(path)
    assert str(path) in str(e.value)


def test_to_hf_columns(theorems):
    hf = create_sft_dataset(theorems).to_hf()
    assert hf.column_names == ["prompt", "completion"]
    assert len(hf) == 5
    assert hf[2]["completion"][0]["content"].startswith("constructor")


def test_streaming_reads_lazily_and_gives_same_rows(export_dir: Path):
    eager = create_sft_dataset(export_dir)
    lazy = create_sft_dataset(export_dir, streaming=True)
    assert "streaming" in repr(lazy)
    assert list(lazy) == eager.rows
    assert list(lazy.to_hf()) == eager.rows


def test_config_from_dict_and_validation():
    cfg = config_from_dict(
        TacticDatasetConfig, {"dedup": True, "first_line_only": True, "max_samples": 4}
    )
    assert cfg.dedup and cfg.max_samples == 4
    with pytest.raises(ConfigError, match="did you mean 'dedup'"):
        config_from_dict(TacticDatasetConfig, {"dedupe": True})
    with pytest.raises(ConfigError, match="max_samples"):
        TacticDatasetConfig(max_samples=0)


def test_max_state_chars_filter(theorems):
    ds = create_sft_dataset(theorems, config=TacticDatasetConfig(max_state_chars=15))
    assert tactics_of(ds) == ["constructor\n  · simp\n  · simp", "exact Nat.le_refl _"]
    assert ds.stats.removed["state over max_state_chars=15"] == 3


def test_real_lean4_example_export(shared_data: Path):
    ds = create_sft_dataset(shared_data / "lean4-example", "train")
    assert len(ds) == 26 and ds.stats.removed == {}
    for row in ds:
        assert "<a>" not in row["prompt"][1]["content"]
        assert row["completion"][0]["content"].strip()
    splits = [
        create_sft_dataset(shared_data / "lean4-example", s) for s in ("train", "val", "test")
    ]
    # the README's 40 traced tactics, of which 3 are `sorry`
    assert sum(d.stats.tactics for d in splits) == 40
    assert sum(d.stats.removed.get("sorry/admit", 0) for d in splits) == 3
    assert sum(len(d) for d in splits) == 37


def test_real_mathlib_sample_streams_in_small_chunks(shared_data: Path):
    path = shared_data / "mathlib-sample" / "test.json"
    small = create_sft_dataset(path, config=TacticDatasetConfig(chunk_chars=64))
    assert len(small) == 469
    assert small.rows == create_sft_dataset(path).rows
