"""The commands of leantrain-verl, declared for core's registry: ``leantrain verl train |
convert | algorithms`` (their groups and run functions are named, not imported)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leantrain.core.command import Command

_CONFIG = "leantrain.verl.config"


@dataclass
class NoArgs:
    """``leantrain verl algorithms`` takes no options."""


def _sub(name: str, help: str, group: Any, **kw: Any) -> Command:
    run = f"leantrain.verl.runner:{name}_command"
    return Command(name, help, run, groups=(group,), logger="leantrain.verl", **kw)


def register() -> list[Command]:
    """The commands of leantrain-verl (entry point ``leantrain.commands``)."""
    return [
        Command(
            "verl",
            "tactic or whole-proof RL on the VERL engine (Ray): 'leantrain verl train'",
            subcommands=(
                _sub(
                    "train",
                    "tactic (or --mode whole) RL on VERL (composes over ppo_trainer.yaml; --dry-run prints it)",
                    f"{_CONFIG}:VerlTrainArgs",
                    trainer="leantrain.verl.manager:VERLTrainingManager",
                    metrics=("critic/score/mean", "top1_accuracy"),
                ),
                _sub(
                    "convert",
                    "leantrain data (export dir / split file) -> VERL parquet",
                    f"{_CONFIG}:ConvertArgs",
                ),
                _sub("algorithms", "the algorithm types and the VERL options they set", NoArgs),
            ),
        )
    ]
