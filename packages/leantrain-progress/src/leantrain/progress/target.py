"""The regression target: steps remaining, transformed for training and mapped back exactly.

Steps remaining are long-tailed (median 4, maximum 93 on Mathlib proofs): under MSE on raw
counts a small model learns the mean and stops. The model is therefore trained on
``z = (log1p(steps) - mean) / std`` (``transform="log1p"``, the default) with ``mean`` / ``std``
measured on the first training rows, and its outputs are mapped back to steps by
``expm1(z * std + mean)``, clipped at 0. The transform is stored in the model's
``config.json`` (key ``progress_target``), so a saved model predicts the same steps after
reload; a model without it (the seed's, LeanDojo-v2's) predicts raw steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

CONFIG_KEY = "progress_target"
"""The key of the transform in the model's ``config.json``."""

TransformName = Literal["log1p", "none"]


@dataclass(frozen=True)
class TargetTransform:
    """``forward``: steps → training target; ``inverse``: model output → steps."""

    transform: TransformName = "none"
    mean: float = 0.0
    std: float = 1.0

    @classmethod
    def fit(
        cls, labels: Sequence[float], transform: TransformName = "log1p", standardize: bool = True
    ) -> TargetTransform:
        """The transform with ``mean`` / ``std`` of the transformed ``labels`` (0 / 1 if not
        ``standardize`` or no spread)."""
        base = cls(transform)
        values = base._warp(np.asarray(labels, dtype=np.float64))
        if not standardize or values.size == 0:
            return base
        std = float(values.std())
        return cls(transform, float(values.mean()), std if std > 1e-8 else 1.0)

    @classmethod
    def from_model(cls, model: Any) -> TargetTransform | None:
        """The transform saved in ``model.config``; ``None`` where it has none."""
        stored = getattr(getattr(model, "config", None), CONFIG_KEY, None)
        if not isinstance(stored, dict):
            return None
        return cls(
            transform=stored.get("transform", "none"),
            mean=float(stored.get("mean", 0.0)),
            std=float(stored.get("std", 1.0)),
        )

    def attach(self, model: Any) -> None:
        """Store the transform in ``model.config`` (saved with it in ``config.json``)."""
        setattr(model.config, CONFIG_KEY, asdict(self))

    def _warp(self, y: np.ndarray) -> np.ndarray:
        return np.log1p(np.maximum(y, 0.0)) if self.transform == "log1p" else y

    def forward(self, steps: Sequence[float] | np.ndarray) -> np.ndarray:
        """Training targets of step counts."""
        return (self._warp(np.asarray(steps, dtype=np.float64)) - self.mean) / self.std

    def inverse(self, outputs: Sequence[float] | np.ndarray) -> np.ndarray:
        """Step counts of model outputs (≥ 0 for ``log1p``; ``none`` is only un-standardised)."""
        z = np.asarray(outputs, dtype=np.float64) * self.std + self.mean
        if self.transform == "log1p":
            z = np.maximum(np.expm1(np.minimum(z, math.log(1e6))), 0.0)  # no overflow
        return z


IDENTITY = TargetTransform()
"""The seed's target: raw steps remaining."""
