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


# --- the run functions of the commands (leantrain.llm.cli) ----------------------------------


def check_first(settings: Any, *, rl: bool = False) -> None:
    """The model directory and the database checked (their files read), then the first usable
    example of ``settings.data_path`` (``DataError`` naming the file if none), before TRL and
    transformers are imported (tens of seconds); in ``mode`` whole, the first whole-proof
    example; then the contamination guard on a one-off run's data."""
    from leantrain.core.lifelong import check_database
    from leantrain.llm.model_loading import check_model

    check_model(settings.model_name)
    check_database(getattr(settings, "database", None))
    split = getattr(settings, "split", None) or settings.train_split
    if settings.data_path is not None and settings.mode == "whole":
        from leantrain.llm.training_data import model_prompt, whole_proof_dataset, whole_rows

        if rl:
            whole_rows(settings.data_path, split, settings, max_samples=1)
        else:
            whole_proof_dataset(settings.data_path, split, settings, model_prompt(settings), 1)
    elif settings.data_path is not None:
        from leantrain.llm.training_data import dataset_config
        from leantrain.tactics import create_rl_dataset, create_sft_dataset

        create = create_rl_dataset if rl else create_sft_dataset
        create(settings.data_path, split, 1, config=dataset_config(settings, max_samples=1))
    if settings.data_path is not None and hasattr(settings, "eval_set"):  # training: first
        from leantrain.llm.training_data import guard

        guard(settings.data_path, settings)


def check_first_rl(settings: Any, lean: Any = None) -> None:
    """:func:`check_first` of a GRPO run (its examples need a reference tactic); ``lean``
    (leantrain-lean's ``LeanArgs``, read from the same flags) was checked when it was built."""
    check_first(settings, rl=True)


def evaluate_command(config: Any) -> dict[str, Any]:
    """``leantrain llm eval``: the data checked before the model and the engines load."""
    check_first(config)
    return evaluate_with_config(config)


def merge_command(adapter: Any, out: Any) -> dict[str, Any]:
    """``leantrain llm merge-lora``."""
    from leantrain.llm.merge import merge_lora

    return {"merged_model": str(merge_lora(adapter.adapter_dir, out.out_dir))}


def convert_command(gguf: Any, out: Any) -> dict[str, Any]:
    """``leantrain llm convert``."""
    from leantrain.llm.gguf import convert_gguf

    return convert_gguf(gguf.gguf, out.out_dir)
