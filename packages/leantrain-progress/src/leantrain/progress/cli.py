"""``leantrain progress make-data|train|evaluate|predict``, declared for core's registry.

Imported by every ``leantrain`` invocation, so everything heavy is named, not imported:
``ProgressConfig`` (transformers) loads after the progress model's own settings and the data
were checked (:func:`~leantrain.progress.runner.check_train`).
"""

from __future__ import annotations

from leantrain.core.command import Command

_RUN = "leantrain.progress.runner"
_ARGS = "leantrain.progress.progress_arguments"
_LOG = "leantrain.progress"


def register() -> list[Command]:
    """The ``progress`` command (entry point ``leantrain.commands``)."""
    sub = (
        Command(
            "make-data",
            "turn traced theorems into progress rows (JSONL)",
            f"{_RUN}:make_data",
            groups=(f"{_ARGS}:MakeDataArgs",),
            logger=_LOG,
        ),
        Command(
            "train",
            "train the steps-remaining model",
            f"{_RUN}:train",
            groups=("leantrain.progress.progress_config:ProgressConfig",),
            light=(f"{_ARGS}:ProgressArguments",),
            check=f"{_RUN}:check_train",
            description="Train the steps-remaining model.",
            trainer="leantrain.progress.progress_trainer:ProgressTrainer",
            metrics=("mse", "mae", "within_1"),
            logger=_LOG,
        ),
        Command(
            "evaluate",
            "MSE / MAE / within-1 / per-bin MAE of a trained model on progress data",
            f"{_RUN}:evaluate",
            groups=(f"{_ARGS}:EvaluateArgs",),
            metrics=("mae", "mse"),
            logger=_LOG,
        ),
        Command(
            "predict",
            "predict steps remaining for a goal and tactic(s); several --tactic are ranked",
            f"{_RUN}:predict",
            groups=(f"{_ARGS}:PredictArgs",),
            logger=_LOG,
        ),
    )
    return [
        Command(
            "progress", "proof-progress model: make-data, train, evaluate, predict", subcommands=sub
        )
    ]
