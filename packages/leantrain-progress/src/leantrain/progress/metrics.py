"""Regression metrics of the progress model: MSE, MAE, accuracy within ±1 step, MAE per bin."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

BIN_EDGES: tuple[tuple[int, int | None], ...] = (
    (0, 1),
    (2, 2),
    (3, 4),
    (5, 8),
    (9, 16),
    (17, None),
)
"""Steps-remaining bins ``(low, high)`` inclusive; ``None`` is open-ended."""


def bin_name(low: int, high: int | None) -> str:
    """``mae_bin_3_4``-style metric name of a bin."""
    if high is None:
        return f"mae_bin_{low}_plus"
    return f"mae_bin_{low}" if low == high else f"mae_bin_{low}_{high}"


def regression_metrics(
    predictions: Sequence[float] | np.ndarray, labels: Sequence[float] | np.ndarray
) -> dict[str, float]:
    """Metrics of predicted vs true steps remaining.

    ``mse``, ``mae``, ``within_1`` (fraction with ``|pred - label| <= 1``), ``rows``, and
    ``mae_bin_*`` for each steps-remaining bin that has rows (bins 0-1, 2, 3-4, 5-8, 9-16, 17+).
    """
    preds = np.asarray(predictions, dtype=np.float64).reshape(-1)
    labels = np.asarray(labels, dtype=np.float64).reshape(-1)
    if preds.shape != labels.shape:
        raise ValueError(f"{preds.shape[0]} predictions for {labels.shape[0]} labels")
    if preds.size == 0:
        return {"mse": float("nan"), "mae": float("nan"), "within_1": float("nan"), "rows": 0}
    err = preds - labels
    out = {
        "mse": float(np.mean(err**2)),
        "mae": float(np.mean(np.abs(err))),
        "within_1": float(np.mean(np.abs(err) <= 1.0)),
        "rows": int(preds.size),
    }
    for low, high in BIN_EDGES:
        mask = (labels >= low) & (labels <= (np.inf if high is None else high))
        if mask.any():
            out[bin_name(low, high)] = float(np.mean(np.abs(err[mask])))
    return out


def compute_metrics(eval_pred: object) -> dict[str, float]:
    """``compute_metrics`` for transformers' Trainer (an ``EvalPrediction``) of a model trained
    on raw steps remaining."""
    return make_compute_metrics(None)(eval_pred)


def make_compute_metrics(target: Any) -> Callable[[object], dict[str, float]]:
    """``compute_metrics`` for a model trained on ``target``'s transform of the steps remaining
    (a :class:`~leantrain.progress.target.TargetTransform`; ``None``: raw steps): outputs and
    labels are mapped back to steps first, so every metric is in steps."""

    def metrics(eval_pred: object) -> dict[str, float]:
        predictions, labels = eval_pred  # type: ignore[misc]
        if isinstance(predictions, tuple):
            predictions = predictions[0]
        preds = np.asarray(predictions, dtype=np.float64).reshape(-1)
        labels = np.asarray(labels, dtype=np.float64).reshape(-1)
        if target is not None:
            preds = target.inverse(preds)
            labels = np.rint(target.inverse(labels))  # whole steps, exactly
        return regression_metrics(preds, labels)

    return metrics
