"""hello_agents-style names: datasets from leantrain's data, the accuracy reward, the tool's
errors, and a LoRA run through the tool merged with merge_lora / ``leantrain llm merge-lora``."""

from __future__ import annotations

import pytest
import torch
from leantrain.core.errors import ConfigError
from leantrain.llm.compat.hello_agents import (
    DATA_ENV,
    RLTrainingTool,
    create_accuracy_reward,
    create_lora_config,
    create_rl_dataset,
    create_sft_dataset,
)


def test_datasets_read_the_shipped_sample_by_default(monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)
    sft = create_sft_dataset(max_samples=5)
    assert len(sft) == 5 and sft.column_names == ["prompt", "completion"]
    assert sft[0]["completion"][0]["role"] == "assistant"
    everything = create_sft_dataset(max_samples=None)
    assert len(everything) > 5  # all sample repositories, concatenated
    rl = create_rl_dataset(max_samples=3, split="test", model_name="ignored/model")
    assert len(rl) == 3 and rl["ground_truth"] == rl["reference"]


def test_datasets_read_data_and_the_environment(monkeypatch, tmp_path):
    from leantrain.core.sample import sample_repo_dirs

    one = sample_repo_dirs()[0]
    monkeypatch.setenv(DATA_ENV, str(one))
    from_env = create_rl_dataset(max_samples=None)
    assert len(set(from_env["url"])) == 1  # one repository's export, not the three samples
    with pytest.raises(ConfigError, match="data not found"):
        create_sft_dataset(data=tmp_path / "nope")
    with pytest.raises(ConfigError, match="max_samples"):
        create_sft_dataset(max_samples=0)


def test_accuracy_reward_compares_whitespace_normalised_tactics():
    reward = create_accuracy_reward()
    got = reward(["simp  [a]", "rfl", " exact h "], ground_truth=["simp [a]", "simp", "exact h"])
    assert got == [1.0, 0.0, 1.0]
    assert reward(["rfl"], reference=["rfl"]) == [1.0]  # leantrain's column name works too


def test_create_lora_config_is_leantrains():
    cfg = create_lora_config(r=4, lora_alpha=8)
    assert cfg.r == 4 and cfg.lora_alpha == 8 and "q_proj" in cfg.target_modules


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"action": "fly"}, "unknown action 'fly'"),
        ({"action": "train", "algorithm": "ppo", "model_name": "tiny"}, "unknown algorithm"),
        ({"action": "train", "algorithm": "sft"}, "'model_name' is missing"),
        ({"action": "evaluate"}, "'model_path' is missing"),
        (
            {"action": "train", "model_name": "tiny", "max_samples": 2, "nonsense": 1},
            "unknown key 'nonsense'",
        ),
    ],
)
def test_tool_errors_are_one_line_results(params, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = RLTrainingTool().run(params)
    assert result["status"] == "error" and message in result["message"]
    assert "\n" not in result["message"]


@pytest.mark.slow
def test_tool_trains_lora_evaluates_and_the_adapter_merges(tmp_path, capsys):
    from leantrain.core.cli import main
    from leantrain.llm.model_loading import load_model_and_tokenizer

    tool = RLTrainingTool()
    params = {
        "action": "train",
        "algorithm": "sft",
        "model_name": "tiny",
        "max_samples": 4,
        "num_epochs": 1,
        "output_dir": str(tmp_path / "run"),
        "use_lora": True,
        "batch_size": 2,
        "learning_rate": 5e-2,
        "max_steps": 1,
    }
    result = tool.run(params)
    assert result["status"] == "success", result
    # the same call again: the finished run; other rows (max_samples) into the same dir: refused
    assert tool.run(params)["final"] == result["final"]
    other = tool.run({**params, "max_samples": 3})
    assert other["status"] == "error" and "was trained on other data" in other["message"]
    assert result["output_dir"] == str(tmp_path / "run" / "sft") and result["num_samples"] == 4
    adapter = tmp_path / "run" / "sft" / "000-dataset"
    assert (adapter / "adapter_config.json").is_file()

    evaluation = tool.run({"action": "evaluate", "model_path": str(adapter), "max_samples": 2})
    assert evaluation["status"] == "success" and evaluation["num_samples"] == 2
    assert 0.0 <= evaluation["accuracy"] <= 1.0 and evaluation["eval_loss"] > 0

    merged_dir = tmp_path / "merged"
    assert main(["llm", "merge-lora", str(tmp_path / "run"), str(merged_dir)]) == 0
    assert (merged_dir / "config.json").is_file()
    assert not (merged_dir / "adapter_config.json").exists()
    from leantrain.tactics.model_prompt import read_prompt

    assert read_prompt(adapter) is not None  # the adapter carries its prompt, and the merge too
    assert read_prompt(merged_dir) == read_prompt(adapter)

    ids = torch.tensor([[5, 17, 30, 41, 9]])
    adapted, _ = load_model_and_tokenizer(adapter, trainable_adapter=False)
    merged, _ = load_model_and_tokenizer(merged_dir)
    base, _ = load_model_and_tokenizer("tiny")
    with torch.no_grad():
        want, got, before = (m.eval()(ids).logits for m in (adapted, merged, base))
    assert torch.allclose(want, got, atol=1e-4)
    assert not torch.allclose(before, got, atol=1e-4)  # the adapter did change the model

    capsys.readouterr()
    assert main(["llm", "merge-lora", str(adapter), str(tmp_path / "run")]) == 2
    assert "out_dir" in capsys.readouterr().err  # the run dir holds other output: refused
    assert main(["llm", "merge-lora", str(merged_dir), str(tmp_path / "m2")]) == 2
    assert "not a LoRA adapter" in capsys.readouterr().err
    assert not (tmp_path / "m2").exists()
