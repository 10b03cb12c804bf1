"""Build TRL reward functions and their weights from names, dicts or callables."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from leantrain.core.errors import ConfigError
from leantrain.core.registry import REWARDS
from leantrain.llm.rewards.validation import ValidatedReward

RewardSpec = str | Mapping[str, Any] | Callable[..., Any]
"""``"name"`` / ``"module:attr"``, ``{"name": …, "weight": …, **options}``, or a callable."""


def _is_reward_function(obj: Any) -> bool:
    """A reward function takes ``completions``; anything else callable is a factory."""
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return True
    return "completions" in params or any(p.kind is p.VAR_POSITIONAL for p in params.values())


def _instantiate(name: str, obj: Any, options: dict[str, Any]) -> Callable[..., Any]:
    if inspect.isclass(obj) or not _is_reward_function(obj):
        try:
            func = obj(**options)
        except (TypeError, ValueError) as e:
            raise ConfigError(f"reward '{name}': invalid options {options}: {e}") from None
    else:
        if options:
            raise ConfigError(
                f"reward '{name}' is a plain function and takes no options, got {sorted(options)}",
                hint="only class / factory rewards (e.g. length_penalty) take options",
            )
        func = obj
    if not callable(func):
        raise ConfigError(
            f"reward '{name}' did not give a callable reward function (got {type(func).__name__})"
        )
    return func


def build_reward_funcs(
    specs: Sequence[RewardSpec], *, allow_code: bool = False
) -> tuple[list[ValidatedReward], list[float]]:
    """Reward functions for TRL's ``GRPOTrainer(reward_funcs=…)`` and ``GRPOConfig.reward_weights``.

    Each spec is a registered name (``"format"``), an import path (``"my.mod:fn"``, only with
    ``allow_code`` or ``LEANTRAIN_ALLOW_CODE=1``: a config naming code is refused, importing
    nothing, without the opt-in), a dict
    ``{"name": "length_penalty", "weight": 0.5, "max_chars": 80}`` whose other keys are options
    of a class / factory reward, or a callable. Every function is wrapped so that its output is
    checked (:func:`~leantrain.llm.rewards.validation.validate_reward_output`), and named
    uniquely (``length_penalty``, ``length_penalty_2`` …) since TRL logs rewards by name.
    """
    if isinstance(specs, (str, Mapping)) or callable(specs):
        specs = [specs]  # type: ignore[list-item]
    if not specs:
        raise ConfigError(
            "no reward functions given", hint=f"choose from: {', '.join(REWARDS.names())}"
        )
    funcs: list[ValidatedReward] = []
    weights: list[float] = []
    used: set[str] = set()
    for spec in specs:
        weight: Any = 1.0
        options: dict[str, Any] = {}
        if isinstance(spec, str):
            name, obj = spec, REWARDS.get(spec, allow_code=allow_code)
        elif isinstance(spec, Mapping):
            options = dict(spec)
            if "name" not in options:
                raise ConfigError(
                    f"reward spec {dict(spec)} has no 'name'",
                    hint='e.g. {"name": "format", "weight": 1.0}',
                )
            name = str(options.pop("name"))
            weight = options.pop("weight", 1.0)
            obj = REWARDS.get(name, allow_code=allow_code)
        elif callable(spec):
            obj = spec
            name = getattr(spec, "__name__", None) or type(spec).__name__
        else:
            raise ConfigError(
                f"cannot use {spec!r} as a reward", hint="give a name, a dict or a callable"
            )
        if (
            isinstance(weight, bool)
            or not isinstance(weight, (int, float))
            or not math.isfinite(weight)
        ):
            raise ConfigError(f"reward '{name}': weight must be a finite number, got {weight!r}")
        func = _instantiate(name, obj, options)
        label = getattr(func, "__name__", None) if ":" in name or callable(spec) else name
        label = str(label or name).replace(":", ".")
        unique, k = label, 2
        while unique in used:
            unique, k = f"{label}_{k}", k + 1
        used.add(unique)
        funcs.append(func if isinstance(func, ValidatedReward) else ValidatedReward(func, unique))
        weights.append(float(weight))
    return funcs, weights
