import json

import pytest
import torch
from leantrain.core.errors import ConfigError
from leantrain.core.registry import ADVANTAGES
from leantrain.llm import GRPOConfig, GRPOTrainer


def a_reward(completions, **kwargs):
    """Prefers one kind of answer: the share of ASCII letters in the completion."""
    texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
    return [sum(ch.isascii() and ch.isalpha() for ch in t) / max(len(t), 1) for t in texts]


@pytest.fixture
def rl_rows(sft_rows):
    return sft_rows.map(
        lambda r: {"reference": r["completion"][0]["content"]}, remove_columns=["completion"]
    )


def _grpo(tmp_path, **kw):
    args = {
        "model_name": "tiny",
        "output_dir": tmp_path / "grpo",
        "reward_funcs": [a_reward],
        "max_steps": 12,
        "lr": 2e-2,
        "max_completion_length": 6,
        "num_generations": 4,
        "batch_size": 4,
        "evaluate_each_repo": False,
        "logging_steps": 1,
        "temperature": 1.0,
    }
    args.update(kw)
    return GRPOTrainer(**args)


@pytest.mark.slow
def test_grpo_raises_the_mean_reward(rl_rows, tmp_path):
    result = _grpo(tmp_path).train(rl_rows)
    log = tmp_path / "grpo" / "grpo" / "logs" / "000-dataset.jsonl"
    rewards = [e["reward"] for e in map(json.loads, log.read_text().splitlines()) if "reward" in e]
    assert len(rewards) == 12 and result["final"]["last_reward"] == rewards[-1]
    assert sum(rewards[-4:]) / 4 > sum(rewards[:4]) / 4 + 0.1


@pytest.mark.slow
def test_custom_advantage_function_is_used(rl_rows, tmp_path):
    calls = []

    def zero_advantages(rewards, group_ids):
        calls.append((rewards.clone(), group_ids.clone()))
        return torch.zeros_like(rewards)

    ADVANTAGES.add("test_zero_advantages", zero_advantages, overwrite=True)
    t = _grpo(tmp_path, max_steps=2, advantage_fn="test_zero_advantages")
    before = {k: v.detach().clone() for k, v in t.model.named_parameters()}
    t.train(rl_rows)
    assert calls and calls[0][1].tolist() == [0, 0, 0, 0]  # one prompt's group of 4 completions
    # zero advantages -> zero policy-gradient loss (beta=0): the weights cannot move
    assert all(torch.equal(before[k], v) for k, v in t.model.named_parameters())


def test_algorithm_preset_is_applied():
    cfg = GRPOConfig(output_dir="unused", algorithm="dr_grpo")
    assert cfg.loss_type == "dr_grpo" and cfg.scale_rewards == "none"
    with pytest.raises(ConfigError, match="unknown algorithm"):
        GRPOConfig(output_dir="unused", algorithm="ppo")


def test_bad_batch_settings_fail_up_front_with_the_fix():
    with pytest.raises(ConfigError, match=r"divisible by num_generations \(3\).*num_generations=2"):
        GRPOConfig(output_dir="unused", per_device_train_batch_size=4, num_generations=3)
    cfg = GRPOConfig(output_dir="unused")  # the defaults are valid
    assert cfg.generation_batch_size % cfg.num_generations == 0


def test_unknown_reward_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="unknown reward function 'nope'"):
        _grpo(tmp_path, reward_funcs=["nope"])


def test_reward_names_from_config_and_weights(tmp_path):
    t = GRPOTrainer(
        model_name="tiny",
        output_dir=tmp_path / "g",
        reward_funcs=["format", {"name": "no_sorry", "weight": 0.5}],
    )
    assert t.config.reward_weights == [1.0, 0.5]


def test_grpo_from_a_saved_model_takes_its_prompt(tmp_path):
    """GRPO from an SFT checkpoint: its prompt.json's system prompt and first-line rule build
    the GRPO rows (no other file of the SFT run is read), and are what GRPO's model saves."""
    from leantrain.core.sample import sample_data_dir
    from leantrain.llm.tiny_model import save_tiny_model
    from leantrain.tactics.model_prompt import ModelPrompt, read_prompt, write_prompt

    sft = save_tiny_model(tmp_path / "sft-ckpt")
    write_prompt(sft, ModelPrompt(system_prompt="Be brief.", first_line_only=True))
    trainer = _grpo(tmp_path, model_name=str(sft), train_split="test", allow_contamination=True)
    rows = trainer._dataset(sample_data_dir() / "nat-basics")
    assert rows and all(r["prompt"][0] == {"role": "system", "content": "Be brief."} for r in rows)
    assert all("\n" not in r["reference"] for r in rows)
    trainer.save(tmp_path / "saved")
    assert read_prompt(tmp_path / "saved") == read_prompt(sft)
