"""leantrain.progress: LeanProgress's steps-remaining model.

Label generation from traced proofs (:func:`make_progress_data`), :class:`ProgressDataset`,
:class:`ProgressTrainer` (transformers ``Trainer``; lowest-MAE best checkpoint, dynamic
padding, lifelong training), :class:`ProgressPredictor` and the GRPO reward
:class:`ProgressReward`.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from typing import Any

from leantrain.progress.dataset import ProgressDataset, build_text, load_progress_data
from leantrain.progress.labels import (
    LabelStats,
    make_progress_data,
    progress_rows,
    rebalance_by_length,
    theorem_rows,
)
from leantrain.progress.metrics import compute_metrics, regression_metrics
from leantrain.progress.predictor import MODEL_ENV, ProgressPredictor
from leantrain.progress.reward import ProgressReward
from leantrain.progress.tiny_model import build_tiny_model, build_tiny_tokenizer

try:
    __version__ = _version("leantrain-progress")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

_LAZY = {
    "ProgressConfig": "leantrain.progress.progress_config",
    "ProgressTrainer": "leantrain.progress.progress_trainer",
}


def __getattr__(name: str) -> Any:
    # Lazy: the config subclasses transformers' TrainingArguments; the CLI must not load it.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'leantrain.progress' has no attribute {name!r}")


__all__ = [
    "MODEL_ENV",
    "LabelStats",
    "ProgressConfig",
    "ProgressDataset",
    "ProgressPredictor",
    "ProgressReward",
    "ProgressTrainer",
    "build_text",
    "build_tiny_model",
    "build_tiny_tokenizer",
    "compute_metrics",
    "load_progress_data",
    "make_progress_data",
    "progress_rows",
    "rebalance_by_length",
    "regression_metrics",
    "theorem_rows",
]
