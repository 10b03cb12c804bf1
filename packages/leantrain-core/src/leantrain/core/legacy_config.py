"""Pre-issue-32 configuration helpers kept for packages that have not migrated to typed
constraints (``Annotated`` / ``Literal``) and per-field aliases yet.

TODO(issue 32): remove after retrieval, progress, prover, pipeline, verl and export migrate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union

from leantrain.core.config import MAX_INT, _short_repr, config_fields, resolve
from leantrain.core.errors import ConfigError

# the names leantrain.core.config still gives (its module __getattr__)
__all__ = ["TRAINING_ARGUMENT_RULES", "check_choices", "check_numbers", "resolve_aliases"]

resolve_aliases = resolve  # TODO(issue 32): remove after progress and verl migrate

_LEGACY_ALIASES = {
    "model": "model_name",
    "data": "data_path",
    "reward": "reward_funcs",
    "k": "eval_k",
    "lr": "learning_rate",
    "batch_size": "per_device_train_batch_size",
    "epochs": "num_train_epochs",
    "epochs_per_repo": "num_train_epochs",
}


def legacy_aliases(fields: Mapping[str, Any]) -> dict[str, str]:
    """The old global aliases for a class that declares none of its own."""
    if any(f.metadata.get("aliases") for f in fields.values()):
        return {}
    return {a: f for a, f in _LEGACY_ALIASES.items() if f in fields and a not in fields}


_NUMBER_RULES: dict[str, tuple[Callable[[float], bool], str]] = {
    ">=1": (lambda v: v >= 1, "at least 1"),
    ">0": (lambda v: v > 0, "positive"),
    ">=0": (lambda v: v >= 0, "zero or more"),
    "[0,1]": (lambda v: 0 <= v <= 1, "between 0 and 1"),
    "[0,1)": (lambda v: 0 <= v < 1, "at least 0 and below 1"),
    "-1|>=1": (lambda v: v == -1 or v >= 1, "-1 (no limit) or at least 1"),
}

TRAINING_ARGUMENT_RULES: dict[str, str] = {
    "per_device_train_batch_size": ">=1",
    "per_device_eval_batch_size": ">=1",
    "gradient_accumulation_steps": ">=1",
    "num_train_epochs": ">0",
    "max_steps": "-1|>=1",
    "learning_rate": ">=0",
    "weight_decay": ">=0",
    "warmup_steps": ">=0",
    "warmup_ratio": "[0,1]",
    "max_grad_norm": ">=0",
    "logging_steps": ">0",
    "save_steps": ">0",
    "eval_steps": ">0",
    "save_total_limit": ">=0",
    "dataloader_num_workers": ">=0",
    "seed": ">=0",
}


def check_numbers(cfg: Any, rules: Mapping[str, str], *, prefix: str = "--") -> None:
    """One :class:`ConfigError` naming the flag for the first number of ``cfg`` out of its
    rule's range (``>=1``, ``>0``, ``>=0``, ``[0,1]``, ``[0,1)``, ``-1|>=1``)."""
    for name, rule in rules.items():
        value = getattr(cfg, name, None)
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        ok, expected = _NUMBER_RULES[rule]
        if isinstance(value, int) and abs(value) > MAX_INT:
            raise ConfigError(
                f"{prefix}{name} must be {expected} and at most {MAX_INT:,}, "
                f"got {_short_repr(value)}"
            )
        if not (math.isfinite(value) and ok(value)):
            raise ConfigError(f"{prefix}{name} must be {expected}, got {value!r}")


def check_choices(cls: type, values: Mapping[str, Any], *, source: str = "config") -> None:
    """A :class:`ConfigError` for a value outside its field's ``metadata["choices"]``."""
    fields = config_fields(cls)
    for key, value in values.items():
        f = fields.get(key)
        choices = f.metadata.get("choices") if f is not None else None
        if not choices or value is None:
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if item not in choices:
                raise ConfigError(
                    f"{source}: '{key}' cannot be {item!r}",
                    hint=f"choose one of: {', '.join(map(str, choices))}",
                )


def choices_type(choices: Any, tp: Any, optional: bool) -> Any:
    """The ``Literal`` type of a field's ``metadata["choices"]`` (a list of them for a list)."""
    from leantrain.core.config import _strip

    one = Literal[tuple(choices)]
    many = "list" in str(_strip(tp))
    tp = list[one] if many else one  # type: ignore[valid-type]
    return Union[tp, None] if optional else tp  # noqa: UP007
