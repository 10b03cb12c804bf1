"""Reading the dataset columns TRL passes to reward functions as keyword arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from leantrain.core.errors import LeanTrainError


def column(kwargs: Mapping[str, Any], name: str, n: int, reward: str) -> list[Any]:
    """Column ``name`` (one value per completion); a missing or short column is a clear error."""
    if name not in kwargs or kwargs[name] is None:
        raise LeanTrainError(
            f"reward '{reward}' needs the dataset column '{name}', which the batch does not have",
            hint="build the GRPO dataset with leantrain.tactics.create_rl_dataset (it has every column)",
        )
    values = list(kwargs[name])
    if len(values) != n:
        raise LeanTrainError(
            f"reward '{reward}': column '{name}' has {len(values)} values for {n} completions"
        )
    return values
