"""``leantrain sft``, ``leantrain grpo`` and ``leantrain llm eval|merge-lora|convert``, declared
for core's registry: TRL's config classes load after the light groups and the data were checked
(:func:`~leantrain.llm.runner.check_first`), so bad input fails in seconds."""

from __future__ import annotations

from dataclasses import dataclass

from leantrain.core.command import Command
from leantrain.core.config import setting

_RUN = "leantrain.llm.runner"
_LIGHT = ("leantrain.llm.common_config:LeanTrainArguments",)


@dataclass
class AdapterArgs:
    """The LoRA adapter ``merge-lora`` merges (its first argument)."""

    adapter_dir: str = setting(
        help="LoRA adapter dir, or a run dir trained with LoRA", positional=True
    )


@dataclass
class GgufArgs:
    """The GGUF model ``convert`` reads (its first argument)."""

    gguf: str = setting(help="a .gguf file, or a directory holding exactly one", positional=True)


@dataclass
class OutDirArgs:
    """The new directory ``merge-lora`` and ``convert`` write a model to (their last argument)."""

    out_dir: str = setting(help="new directory for the written model", positional=True)


def register() -> list[Command]:
    """The commands of leantrain-llm (entry point ``leantrain.commands``)."""
    llm = "leantrain.llm"
    return [
        Command(
            "sft",
            "supervised fine-tuning of the tactic generator (TRL SFT, LoRA, lifelong)",
            f"{_RUN}:train_with_config",
            groups=("leantrain.llm.sft_config:SFTConfig",),
            light=_LIGHT,
            check=f"{_RUN}:check_first",
            trainer="leantrain.llm.sft_trainer:SFTTrainer",
            metrics=("eval_loss", "top1_accuracy", "topk_accuracy"),
            logger=llm,
        ),
        Command(
            "grpo",
            "GRPO refinement of the tactic generator with reward functions",
            f"{_RUN}:train_with_config",
            groups=("leantrain.llm.grpo_config:GRPOConfig",),
            # leantrain-lean's settings of the lean reward: a bad --lean-project in a second
            light=(*_LIGHT, "leantrain.lean.args:LeanArgs"),
            check=f"{_RUN}:check_first_rl",
            trainer="leantrain.llm.grpo_trainer:GRPOTrainer",
            metrics=("reward", "eval_loss", "top1_accuracy"),
            logger=llm,
        ),
        Command(
            "llm",
            "tactic generator tools: eval, merge-lora, convert",
            subcommands=(
                Command(
                    "eval",
                    "eval loss and top-1 / top-k tactic accuracy of a model on a split",
                    f"{_RUN}:evaluate_command",
                    groups=("leantrain.llm.eval_config:EvalConfig",),
                    metrics=("eval_loss", "top1_accuracy", "topk_accuracy"),
                    logger=llm,
                ),
                Command(
                    "merge-lora",
                    "merge a LoRA adapter (or a LoRA run's newest model) into its base model",
                    f"{_RUN}:merge_command",
                    groups=(AdapterArgs, OutDirArgs),
                ),
                Command(
                    "convert",
                    "write a GGUF model (llama.cpp's format) as a plain model directory",
                    f"{_RUN}:convert_command",
                    groups=(GgufArgs, OutDirArgs),
                    description="Write a GGUF model as a plain model directory (safetensors, "
                    "tokenizer, chat template) that --model and from_pretrained load; needs "
                    "leantrain-llm[gguf].",
                ),
            ),
        ),
    ]
