"""LoRA adapters: build a ``peft.LoraConfig`` from a dict or arguments and check it fits the model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from leantrain.core.errors import ConfigError

DEFAULT_TARGET_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj"]


def create_lora_config(
    r: int = 8,
    lora_alpha: int = 16,
    lora_dropout: float = 0.05,
    target_modules: Sequence[str] | str | None = None,
    **kwargs: Any,
) -> Any:
    """A causal-LM ``peft.LoraConfig`` (``target_modules`` defaults to the attention projections)."""
    from peft import LoraConfig

    if r <= 0:
        raise ConfigError(f"LoRA rank r must be positive, got {r}")
    modules: Any = list(DEFAULT_TARGET_MODULES if target_modules is None else target_modules)
    if isinstance(target_modules, str):
        modules = target_modules  # "all-linear" or a regex, as peft accepts
    return LoraConfig(
        r=r,
        lora_alpha=lora_alpha,
        lora_dropout=lora_dropout,
        target_modules=modules,
        task_type="CAUSAL_LM",
        **kwargs,
    )


def resolve_lora_config(lora: Any) -> Any:
    """``None`` / ``peft.LoraConfig`` / dict of LoraConfig arguments -> ``LoraConfig`` or ``None``."""
    if lora is None or lora is False:
        return None
    if lora is True:
        return create_lora_config()
    if isinstance(lora, Mapping):
        from peft import LoraConfig

        data = dict(lora)
        data.setdefault("task_type", "CAUSAL_LM")
        data.setdefault("target_modules", list(DEFAULT_TARGET_MODULES))
        try:
            return LoraConfig(**data)
        except (TypeError, ValueError) as e:
            raise ConfigError(f"invalid lora_config: {e}") from None
    from peft import LoraConfig

    if isinstance(lora, LoraConfig):
        return lora
    raise ConfigError(
        f"lora_config must be a peft.LoraConfig, a dict or None, got {type(lora).__name__}"
    )


def check_target_modules(model: Any, lora: Any) -> None:
    """Raise :class:`ConfigError` if a LoRA target module name matches no module of ``model``."""
    targets = lora.target_modules
    if targets is None or isinstance(targets, str):
        return  # "all-linear" or a regex: peft resolves and reports it
    names = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    missing = sorted(t for t in targets if t not in names)
    if missing:
        import torch

        linear = sorted(
            {
                n.rsplit(".", 1)[-1]
                for n, m in model.named_modules()
                if isinstance(m, torch.nn.Linear)
            }
        )
        raise ConfigError(
            f"LoRA target module(s) {', '.join(missing)} not found in model {type(model).__name__}",
            hint=f"its linear layers are: {', '.join(linear)} (or use target_modules='all-linear')",
        )
