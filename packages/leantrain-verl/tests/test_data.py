"""leantrain rows → VERL parquet, and back; VERL's own dataset class reads the files."""

from __future__ import annotations

import pytest
from leantrain.core.errors import DataError
from leantrain.tactics import build_messages, create_rl_dataset
from leantrain.verl.data import DATA_SOURCE, convert_to_verl, read_parquet


def test_round_trip_keeps_prompts_references_and_columns(export_dir, tmp_path):
    files = convert_to_verl(export_dir, tmp_path / "verl")
    rows = read_parquet(files["train"])
    expected = create_rl_dataset(export_dir, "train").to_hf()
    assert len(rows) == len(expected) > 0
    for row, ref in zip(rows, expected):
        assert row["data_source"] == DATA_SOURCE
        assert row["prompt"] == build_messages(ref["problem"])  # the `leantrain grpo` template
        assert row["prompt"] == ref["prompt"]
        assert row["reward_model"]["ground_truth"] == ref["reference"]
        extra = row["extra_info"]
        assert extra["reference"] == ref["reference"]
        assert extra["premises"] == ref["premises"]
        assert extra["proof_prefix"] == ref["proof_prefix"]
        assert extra["split"] == "train"
    assert read_parquet(files["val"])
    assert not list((tmp_path / "verl").glob(".*.tmp"))  # atomic writes leave nothing behind


def test_missing_data_is_one_clear_error(tmp_path):
    with pytest.raises(DataError, match="not found"):
        convert_to_verl(tmp_path / "nowhere", tmp_path / "out")


@pytest.mark.slow
def test_verl_rl_dataset_reads_the_files(export_dir, tmp_path, tiny_dir):
    """VERL's RLHFDataset (what main_ppo uses) tokenises our prompts with the chat template."""
    from leantrain.llm.model_loading import load_tokenizer
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    files = convert_to_verl(export_dir, tmp_path / "verl")
    tok = load_tokenizer(tiny_dir)
    cfg = OmegaConf.create(
        {
            "prompt_key": "prompt",
            "max_prompt_length": 512,
            "truncation": "left",
            "filter_overlong_prompts": False,
            "return_raw_chat": True,
        }
    )
    ds = RLHFDataset(data_files=[str(files["train"])], tokenizer=tok, config=cfg)
    assert len(ds) == len(read_parquet(files["train"]))
    item = ds[0]
    assert item["data_source"] == DATA_SOURCE
    assert item["reward_model"]["ground_truth"]
