"""Fields shared by :class:`~leantrain.llm.SFTConfig` and :class:`~leantrain.llm.GRPOConfig`:
the model, the data (a dataset, an export dir, or repositories of a database), the lifelong
loop, LoRA and evaluation. Help texts live here once."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from leantrain.core.config import TRAINING_ARGUMENT_RULES, check_choices, check_numbers

SPLITS = ("train", "val", "test")

NUMBER_RULES: dict[str, str] = {
    **TRAINING_ARGUMENT_RULES,
    # leantrain's own
    "eval_k": ">=1",
    "eval_max_new_tokens": ">=1",
    "max_eval_samples": ">=1",
    "max_train_samples": ">=1",
    "num_premises": ">=1",
    "max_premise_chars": ">=1",
    # SFT / GRPO lengths and sampling
    "max_length": ">=1",
    "max_prompt_length": ">=1",
    "max_completion_length": ">=1",
    "steps_per_generation": ">=1",
    "generation_batch_size": ">=1",
    "num_iterations": ">=1",
    "temperature": ">0",
    "beta": ">=0",
    "epsilon": ">=0",
}
"""Ranges of the numeric settings checked when an SFT / GRPO config is built (see
:func:`leantrain.core.config.check_numbers`); an error names the flag."""


@dataclass
class ModelArguments:
    """Which model to start from (TRL's ``ModelConfig`` group)."""

    model_name: str = field(
        default="tiny",
        metadata={
            "help": "Model to start from: 'tiny' (random offline model), a local model/adapter dir, "
            "a leantrain run dir (e.g. an SFT output dir), or a hub id."
        },
    )


@dataclass
class DataArguments:
    """What to train on: an export dir or file, or repositories of a database (lifelong)."""

    data_path: str | None = field(
        default=None,
        metadata={
            "help": "Training data: an export dir (from 'leantrain export merge') or a split .json/.jsonl file (alias: data)."
        },
    )
    database: str | None = field(
        default=None,
        metadata={"help": "SQLite database of traced repos (lifelong mode: train repo by repo)."},
    )
    repos: list[str] | None = field(
        default=None,
        metadata={
            "help": "Repo ids 'URL@COMMIT' (or names) to train on in order; default: the database's curriculum."
        },
    )
    export_dir: str | None = field(
        default=None,
        metadata={
            "help": "Where lifelong mode writes the merged exports (default: OUTPUT_DIR/data)."
        },
    )
    train_split: str = field(
        default="train", metadata={"help": "Split trained on.", "choices": SPLITS}
    )
    split_strategy: str = field(
        default="random",
        metadata={
            "help": "Split directory of an export dir.",
            "choices": ("random", "novel_premises"),
        },
    )
    system_prompt: str | None = field(
        default=None,
        metadata={"help": "System message of every prompt (default: leantrain.tactics' prompt)."},
    )
    max_train_samples: int | None = field(
        default=None, metadata={"help": "Use at most this many training examples per step."}
    )
    first_line_only: bool = field(
        default=False,
        metadata={
            "help": "Keep only the first line of multi-line tactics (LeanDojo-v2's behaviour; default: whole tactics)."
        },
    )
    retriever: str | None = field(
        default=None,
        metadata={
            "help": "Premise retriever (a leantrain retrieval run or saved retriever dir): its "
            "num_premises best accessible premises of each state lead the prompt, as "
            "'leantrain prove' asks with the same retriever (needs leantrain-tactics[retrieval])."
        },
    )
    num_premises: int = field(
        default=10, metadata={"help": "Retrieved premises per prompt (with --retriever)."}
    )
    max_premise_chars: int = field(
        default=2000,
        metadata={"help": "Character budget of the premises in one prompt (with --retriever)."},
    )


@dataclass
class LifelongArguments:
    """How the lifelong engine runs this trainer (epochs per repository are TRL's
    ``num_train_epochs``; alias ``epochs_per_repo``)."""

    num_train_epochs: float = field(
        default=1.0,
        metadata={"help": "Epochs over the merged data of each repo (alias: epochs_per_repo)."},
    )
    overwrite: bool = field(
        default=False,
        metadata={
            "help": "Start over when the output directory holds an earlier run with another config (deletes that run; never other files)."
        },
    )
    allow_code: bool = field(
        default=False,
        metadata={
            "help": "Allow 'module:attr' names of code (rewards, advantage functions, algorithm "
            "presets) that are not registered; like trust_remote_code, give it only for configs "
            "you trust (also: LEANTRAIN_ALLOW_CODE=1)."
        },
    )


@dataclass
class LoraArguments:
    """LoRA (peft) settings; ``lora_config()`` builds the ``peft.LoraConfig``."""

    use_lora: bool = field(
        default=False, metadata={"help": "Train a LoRA adapter instead of the full model."}
    )
    lora_r: int = field(default=8, metadata={"help": "LoRA rank."})
    lora_alpha: int = field(default=16, metadata={"help": "LoRA alpha (scale = alpha / r)."})
    lora_dropout: float = field(default=0.05, metadata={"help": "LoRA dropout."})
    lora_target_modules: list[str] | None = field(
        default=None,
        metadata={"help": "Module names LoRA adapts (default: q_proj k_proj v_proj o_proj)."},
    )


@dataclass
class EvalArguments:
    """Evaluation after each repository (and of the forgetting matrix)."""

    evaluate_each_repo: bool = field(
        default=True,
        metadata={"help": "After each repo, evaluate on eval_split of every repo so far."},
    )
    eval_split: str = field(
        default="val",
        metadata={
            "help": "Split evaluated after each repo ('' is --evaluate-each-repo false).",
            "choices": ("", *SPLITS),
        },
    )
    eval_k: int = field(
        default=4, metadata={"help": "k of top-k tactic accuracy (sampled candidates)."}
    )
    eval_max_new_tokens: int = field(
        default=48, metadata={"help": "Longest tactic generated in evaluation."}
    )
    max_eval_samples: int | None = field(
        default=64,
        metadata={"help": "Evaluate tactic accuracy on at most this many examples (None: all)."},
    )


@dataclass
class LeanTrainArguments(
    EvalArguments, LoraArguments, LifelongArguments, DataArguments, ModelArguments
):
    """leantrain's own field groups (model / data / lifelong / LoRA / evaluation), combined
    with a TRL config by subclassing both, as TRL composes its argument groups."""

    def _resolve_precision(self) -> None:
        # TRL defaults bf16 to True, which fails on CPU: use it only where the GPU supports it.
        if getattr(self, "bf16", None) is None and not getattr(self, "fp16", False):
            from leantrain.llm.model_loading import bf16_supported

            self.bf16 = bf16_supported()
            # left to the trainer: bf16 autocast on a CPU that has it (SFT's cpu_bf16)
            self.precision_auto = not self.bf16

    def _check_common(self) -> None:
        if self.eval_split == "":  # the spelling of earlier leantrain versions and the issues
            self.evaluate_each_repo, self.eval_split = False, "val"
        check_numbers(self, NUMBER_RULES)
        # checked with or without use_lora: a rank of 0 is a mistake either way
        check_numbers(self, {"lora_r": ">=1", "lora_alpha": ">0", "lora_dropout": "[0,1)"})
        check_choices(
            type(self), {"split_strategy": self.split_strategy}, source=type(self).__name__
        )

    def lora_config(self) -> Any:
        """The ``peft.LoraConfig`` these fields describe, or ``None`` without ``use_lora``."""
        if not self.use_lora:
            return None
        from leantrain.llm.lora import create_lora_config

        return create_lora_config(
            self.lora_r, self.lora_alpha, self.lora_dropout, self.lora_target_modules
        )


def world_size() -> int:
    """Processes of this run (``torchrun`` / ``accelerate launch`` set ``WORLD_SIZE``)."""
    return int(os.environ.get("WORLD_SIZE", "1"))
