"""The commands of leantrain-verl, declared for core's registry: ``leantrain verl train |
convert | algorithms``. Imported by every ``leantrain`` invocation, so nothing is imported here:
groups and run functions are named."""

from __future__ import annotations

from dataclasses import dataclass

from leantrain.core.command import Command

_RUN = "leantrain.verl.runner"
_CONFIG = "leantrain.verl.config"


@dataclass
class NoArgs:
    """``leantrain verl algorithms`` takes no options."""


def register() -> list[Command]:
    """The commands of leantrain-verl (entry point ``leantrain.commands``)."""
    verl = "leantrain.verl"
    return [
        Command(
            "verl",
            "tactic RL on the VERL engine (Ray): 'leantrain verl train'",
            subcommands=(
                Command(
                    "train",
                    "tactic RL on VERL (composes over VERL's ppo_trainer.yaml; --dry-run prints it)",
                    f"{_RUN}:train_command",
                    groups=(f"{_CONFIG}:VerlTrainArgs",),
                    trainer="leantrain.verl.manager:VERLTrainingManager",
                    metrics=("critic/score/mean", "top1_accuracy"),
                    logger=verl,
                ),
                Command(
                    "convert",
                    "leantrain data (export dir / split file) -> VERL parquet",
                    f"{_RUN}:convert_command",
                    groups=(f"{_CONFIG}:ConvertArgs",),
                    logger=verl,
                ),
                Command(
                    "algorithms",
                    "the algorithm types and the VERL options they set",
                    f"{_RUN}:algorithms_command",
                    groups=(NoArgs,),
                ),
            ),
        )
    ]
