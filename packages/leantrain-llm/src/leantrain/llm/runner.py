"""One dict-driven entry point, as an agent tool calls it; the CLI and YAML use the same keys.

::

    run({"algorithm": "sft", "model_name": "tiny", "data": "export_dir", "max_steps": 20})
    run({"algorithm": "dapo", "model_name": "runs/sft", "data": "export_dir", "reward_funcs": ["format"]})
    run({"algorithm": "eval", "model_name": "runs/sft", "data": "export_dir", "split": "test"})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from leantrain.core.config import config_from_dict
from leantrain.core.errors import ConfigError

GRPO_ALGORITHMS = ("grpo", "dr_grpo", "dapo", "bnpo")
ALGORITHM_CHOICES = ("sft", *GRPO_ALGORITHMS, "eval")


def run(request: Mapping[str, Any]) -> dict[str, Any]:
    """Train (``algorithm`` = ``sft`` or a GRPO preset) or evaluate (``eval``); returns the
    result dict (``train``) or the metrics (``eval``). Other keys are config keys of
    :class:`~leantrain.llm.SFTConfig`, :class:`~leantrain.llm.GRPOConfig` or ``EvalConfig``."""
    data = dict(request)
    algorithm = data.pop("algorithm", "sft")
    if algorithm == "sft":
        from leantrain.llm.sft_config import SFTConfig

        return train_with_config(config_from_dict(SFTConfig, data, source="run(sft)"))
    if algorithm in GRPO_ALGORITHMS:
        from leantrain.llm.grpo_config import GRPOConfig

        data["algorithm"] = algorithm
        return train_with_config(config_from_dict(GRPOConfig, data, source=f"run({algorithm})"))
    if algorithm == "eval":
        from leantrain.llm.eval_config import EvalConfig

        return evaluate_with_config(config_from_dict(EvalConfig, data, source="run(eval)"))
    raise ConfigError(
        f"unknown algorithm '{algorithm}'", hint=f"choose one of: {', '.join(ALGORITHM_CHOICES)}"
    )


def train_with_config(config: Any) -> dict[str, Any]:
    """Train with a filled :class:`SFTConfig` or :class:`GRPOConfig`."""
    from leantrain.llm.grpo_config import GRPOConfig

    if isinstance(config, GRPOConfig):
        from leantrain.llm.grpo_trainer import GRPOTrainer

        return GRPOTrainer(config=config).train()
    from leantrain.llm.sft_trainer import SFTTrainer

    return SFTTrainer(config=config).train()


def evaluate_with_config(config: Any) -> dict[str, Any]:
    """Evaluate the model of an :class:`EvalConfig` on its split, asked with the prompt of its
    ``prompt.json`` except for the settings the config gives (a difference: one warning line)."""
    from leantrain.llm.sft_trainer import SFTTrainer
    from leantrain.tactics.model_prompt import given_settings

    if config.data_path is None:
        raise ConfigError("nothing to evaluate on", hint="pass --data DIR (an export dir)")
    trainer = SFTTrainer.from_pretrained(
        config.model_name,
        data_path=config.data_path,
        split_strategy=config.split_strategy,
        eval_k=config.eval_k,
        eval_max_new_tokens=config.eval_max_new_tokens,
        max_eval_samples=config.max_eval_samples,
        **given_settings(config),  # the rest from the model's prompt.json
    )
    metrics = trainer.evaluate(config.data_path, config.split)
    return {"model": config.model_name, "split": config.split, **metrics}
