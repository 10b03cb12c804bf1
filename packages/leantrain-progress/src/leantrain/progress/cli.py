"""``leantrain progress make-data|train|evaluate|predict``, declared for core's registry:
``ProgressConfig`` (transformers) loads after the progress model's own settings and the data
were checked (:func:`~leantrain.progress.runner.check_train`)."""

from __future__ import annotations

from typing import Any

from leantrain.core.command import Command

_RUN = "leantrain.progress.runner"
_ARGS = "leantrain.progress.progress_arguments"


def _sub(name: str, help: str, group: str, **kw: Any) -> Command:
    run = f"{_RUN}:{name.replace('-', '_')}"
    return Command(name, help, run, groups=(group,), logger="leantrain.progress", **kw)


def register() -> list[Command]:
    """The ``progress`` command (entry point ``leantrain.commands``)."""
    sub = (
        _sub(
            "make-data", "turn traced theorems into progress rows (JSONL)", f"{_ARGS}:MakeDataArgs"
        ),
        _sub(
            "train",
            "train the steps-remaining model",
            "leantrain.progress.progress_config:ProgressConfig",
            light=(f"{_ARGS}:ProgressArguments",),
            check=f"{_RUN}:check_train",
            trainer="leantrain.progress.progress_trainer:ProgressTrainer",
            metrics=("mse", "mae", "within_1"),
        ),
        _sub(
            "evaluate",
            "MSE / MAE / within-1 / per-bin MAE of a trained model on progress data",
            f"{_ARGS}:EvaluateArgs",
            metrics=("mae", "mse"),
        ),
        _sub(
            "predict",
            "predict steps remaining for a goal and tactic(s); several --tactic are ranked",
            f"{_ARGS}:PredictArgs",
        ),
    )
    return [
        Command(
            "progress", "proof-progress model: make-data, train, evaluate, predict", subcommands=sub
        )
    ]
