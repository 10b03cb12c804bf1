"""Configs never run code the user did not opt in to; numeric settings fail at config time."""

from __future__ import annotations

import sys
import textwrap

import pytest
from leantrain.core.config import config_from_yaml
from leantrain.core.errors import ConfigError
from leantrain.core.parser import parse_cli
from leantrain.llm.grpo_config import GRPOConfig
from leantrain.llm.sft_config import SFTConfig

OPT_IN = "allow_code: true / --allow-code / LEANTRAIN_ALLOW_CODE=1"


@pytest.fixture(autouse=True)
def _no_env_opt_in(monkeypatch):
    monkeypatch.delenv("LEANTRAIN_ALLOW_CODE", raising=False)


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """A module of the user's own: a reward, an advantage function and a preset."""
    (tmp_path / "my_trusted_code.py").write_text(
        textwrap.dedent(
            """
            import torch

            def reward(completions, **kwargs):
                return [0.5] * len(completions)

            def advantages(rewards, group_ids):
                return torch.zeros_like(rewards)

            PRESET = {"loss_type": "dr_grpo"}
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "my_trusted_code"
    sys.modules.pop("my_trusted_code", None)


def test_os_system_in_a_yaml_config_is_refused_before_running(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "grpo.yaml"
    path.write_text('reward_funcs: [{name: "os:system", command: "id > out"}]\n')
    with pytest.raises(ConfigError) as e:
        config_from_yaml(GRPOConfig, path, output_dir=str(tmp_path / "run"))
    assert str(e.value) == (
        f"'os:system' is not a registered reward function; loading code named in a config "
        f"needs {OPT_IN}"
    )
    assert not (tmp_path / "out").exists()
    from leantrain.llm.grpo_trainer import GRPOTrainer

    with pytest.raises(ConfigError, match="is not a registered reward function"):
        GRPOTrainer(
            output_dir=tmp_path / "run", reward_funcs=[{"name": "os:system", "command": "id > out"}]
        )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("key", "value", "kind"),
    [
        ("advantage_fn", "os:system", "advantage function"),
        ("algorithm", "os:getcwd", "algorithm preset"),
        ("reward_funcs", ["os:system"], "reward function"),
    ],
)
def test_every_code_path_needs_the_opt_in(key, value, kind):
    with pytest.raises(ConfigError, match=f"not a registered {kind}; .*--allow-code"):
        GRPOConfig(output_dir="unused", **{key: value})


def test_run_dict_needs_the_opt_in(tmp_path):
    from leantrain.llm.runner import run

    request = {"algorithm": "grpo", "output_dir": str(tmp_path / "r"), "reward": ["os:system"]}
    with pytest.raises(ConfigError, match="LEANTRAIN_ALLOW_CODE=1"):
        run(request)
    assert not (tmp_path / "r").exists()


def test_with_the_opt_in_a_module_attr_loads(user_module, monkeypatch):
    from leantrain.llm.algorithms import get_advantage_fn
    from leantrain.llm.rewards import build_reward_funcs

    cfg = GRPOConfig(
        output_dir="unused",
        allow_code=True,
        reward_funcs=[f"{user_module}:reward"],
        advantage_fn=f"{user_module}:advantages",
        algorithm=f"{user_module}:PRESET",
    )
    assert cfg.loss_type == "dr_grpo"
    funcs, _ = build_reward_funcs(cfg.reward_funcs, allow_code=cfg.allow_code)
    assert funcs[0](None, ["a", "b"]) == [0.5, 0.5]
    assert callable(get_advantage_fn(cfg.advantage_fn, allow_code=True))
    # the flag and the environment variable are the same opt-in
    flag = parse_cli(GRPOConfig, ["--allow-code", "--reward", f"{user_module}:reward"])
    assert flag.allow_code and flag.reward_funcs == [f"{user_module}:reward"]
    monkeypatch.setenv("LEANTRAIN_ALLOW_CODE", "1")
    env = GRPOConfig(output_dir="unused", reward_funcs=[f"{user_module}:reward"])
    assert build_reward_funcs(env.reward_funcs)[0][0](None, ["a"]) == [0.5]


def test_registered_names_need_no_opt_in():
    cfg = GRPOConfig(output_dir="unused", reward_funcs=["format", "no_sorry"], advantage_fn="rloo")
    assert not cfg.allow_code


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--per_device_train_batch_size", "0"],
            "--per_device_train_batch_size must be at least 1, got 0",
        ),
        (["--max_steps", "-5"], "--max_steps must be -1 (no limit) or at least 1, got -5"),
        (
            ["--gradient_accumulation_steps", "0"],
            "--gradient_accumulation_steps must be at least 1",
        ),
        (["--epochs", "0"], "--num_train_epochs must be positive, got 0.0"),
        (["--lr", "-1"], "--learning_rate must be zero or more, got -1.0"),
        (["--eval_k", "0"], "--eval_k must be at least 1, got 0"),
        (["--eval_max_new_tokens", "0"], "--eval_max_new_tokens must be at least 1"),
        (["--max_eval_samples", "-1"], "--max_eval_samples must be at least 1"),
        (["--max_length", "0"], "--max_length must be at least 1, got 0"),
        (["--save_steps", "0"], "--save_steps must be positive, got 0"),
        (["--seed", "-1"], "--seed must be zero or more, got -1"),
        (["--use_lora", "--lora_r", "0"], "--lora_r must be at least 1, got 0"),
    ],
)
def test_bad_numbers_name_the_flag(argv, message):
    with pytest.raises(ConfigError) as e:
        parse_cli(SFTConfig, ["--output-dir", "unused", *argv])
    assert str(e.value).startswith(message)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_completion_length": 0}, "--max_completion_length must be at least 1"),
        ({"temperature": 0.0}, "--temperature must be positive"),
        ({"num_iterations": 0}, "--num_iterations must be at least 1"),
        ({"per_device_train_batch_size": -4}, "--per_device_train_batch_size must be at least 1"),
    ],
)
def test_bad_grpo_numbers_name_the_flag(kwargs, message):
    with pytest.raises(ConfigError, match=f"^{message}"):
        GRPOConfig(output_dir="unused", **kwargs)
