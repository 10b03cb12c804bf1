"""leantrain-llm's setting groups, composed by :class:`~leantrain.llm.SFTConfig`,
:class:`~leantrain.llm.GRPOConfig` and ``llm eval``'s :class:`~leantrain.llm.eval_config.EvalConfig`
with core's (:mod:`leantrain.core.groups`) and leantrain-tactics' (:class:`PromptArgs`,
:class:`SplitArgs`). Each setting is declared once, with its help, aliases and range."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from annotated_types import Ge, Gt, Lt
from leantrain.core.config import AtLeast1, setting
from leantrain.core.groups import Group, LifelongData, RunSwitches
from leantrain.tactics.dataset_config import GuardArgs, PromptArgs, SplitArgs


@dataclass
class ModelArgs(Group):
    """Which model to start from (TRL's ``ModelConfig`` group)."""

    model_name: str = setting(
        "tiny",
        "Model: 'tiny' (random offline model), a local model/adapter dir, a leantrain run dir "
        "(e.g. an SFT output dir), or a hub id.",
        aliases=("model",),
    )


@dataclass
class TrainLimitArgs(Group):
    """How many training examples a step uses (also VERL's)."""

    max_train_samples: AtLeast1 | None = setting(
        None, "Use at most this many training examples per step."
    )


@dataclass
class TrainDataArgs(TrainLimitArgs):
    """Which splits a trainer learns from and evaluates on."""

    train_split: Literal["train", "val", "test"] = setting("train", "Split trained on.")
    eval_split: Literal["", "train", "val", "test"] = setting(
        "val", "Split evaluated after each repo ('' is --evaluate-each-repo false)."
    )


@dataclass
class LoraArgs(Group):
    """LoRA (peft) settings; ``lora_config()`` builds the ``peft.LoraConfig``."""

    use_lora: bool = setting(False, "Train a LoRA adapter instead of the full model.")
    lora_r: AtLeast1 = setting(8, "LoRA rank.")
    lora_alpha: Annotated[int, Gt(0)] = setting(16, "LoRA alpha (scale = alpha / r).")
    lora_dropout: Annotated[float, Ge(0), Lt(1)] = setting(0.05, "LoRA dropout.")
    lora_target_modules: list[str] | None = setting(
        None, "Module names LoRA adapts (default: q_proj k_proj v_proj o_proj)."
    )

    def lora_config(self) -> Any:
        """The ``peft.LoraConfig`` these fields describe, or ``None`` without ``use_lora``."""
        from leantrain.llm.lora import create_lora_config

        args = (self.lora_r, self.lora_alpha, self.lora_dropout, self.lora_target_modules)
        return create_lora_config(*args) if self.use_lora else None


@dataclass
class EvalArgs(Group):
    """Tactic accuracy evaluation (after each repo, and ``llm eval``)."""

    eval_k: AtLeast1 = setting(
        4, "k of top-k tactic accuracy (sampled candidates).", aliases=("k",)
    )
    eval_max_new_tokens: AtLeast1 = setting(48, "Longest tactic generated in evaluation.")
    max_eval_samples: AtLeast1 | None = setting(
        64, "Evaluate tactic accuracy on at most this many examples (None: all)."
    )


@dataclass
class LeanTrainArguments(
    EvalArgs,
    LoraArgs,
    RunSwitches,
    TrainDataArgs,
    GuardArgs,
    SplitArgs,
    PromptArgs,
    LifelongData,
    ModelArgs,
):
    """leantrain's groups of an SFT / GRPO config, combined with a TRL config by subclassing
    both, as TRL composes its argument groups; ``output_dir`` and ``seed`` are TRL's."""

    num_train_epochs: float = setting(1.0, "Epochs over the merged data of each repo.")
    gradient_checkpointing: bool | None = setting(
        None, "Deprecated name of activation_checkpointing (transformers 5)."
    )

    def check_group(self) -> None:
        """``eval_split: ''`` is ``evaluate_each_repo: false``."""
        if self.eval_split == "":
            self.evaluate_each_repo, self.eval_split = False, "val"

    def _resolve_precision(self) -> None:
        # TRL defaults bf16 to True, which fails on CPU: use it only where the GPU supports it.
        if getattr(self, "bf16", None) is None and not getattr(self, "fp16", False):
            from leantrain.llm.model_loading import bf16_supported

            self.bf16 = bf16_supported()
            # left to the trainer: bf16 autocast on a CPU that has it (SFT's cpu_bf16)
            self.precision_auto = not self.bf16
