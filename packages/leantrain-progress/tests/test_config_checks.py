"""Bad numeric settings are one ConfigError naming the flag, when the config is built."""

from __future__ import annotations

import pytest
from leantrain.core.errors import ConfigError
from leantrain.core.parser import parse_cli
from leantrain.progress.progress_config import ProgressConfig


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--per_device_train_batch_size", "0"],
            "--per_device_train_batch_size must be at least 1, got 0",
        ),
        (["--per_device_eval_batch_size", "-2"], "--per_device_eval_batch_size must be at least 1"),
        (["--max_steps", "-5"], "--max_steps must be -1 (no limit) or at least 1, got -5"),
        (["--num_train_epochs", "0"], "--num_train_epochs must be positive"),
        (["--learning_rate", "-0.1"], "--learning_rate must be zero or more"),
        (["--tiny_layers", "0"], "--tiny_layers must be at least 1"),
        (["--seed", "-3"], "--seed must be zero or more"),
    ],
)
def test_bad_numbers_name_the_flag(argv, message):
    with pytest.raises(ConfigError) as e:
        parse_cli(ProgressConfig, ["--output-dir", "unused", *argv])
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_defaults_are_valid():
    assert ProgressConfig(output_dir="unused").per_device_train_batch_size >= 1
