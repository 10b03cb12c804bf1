"""Regression metrics on hand-made predictions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from leantrain.progress import compute_metrics, regression_metrics


def test_metrics_on_a_hand_made_case() -> None:
    labels = [1, 2, 4, 10, 20]
    preds = [1.5, 2.0, 6.0, 9.0, 30.0]
    m = regression_metrics(preds, labels)
    assert m["mse"] == pytest.approx((0.25 + 0 + 4 + 1 + 100) / 5)
    assert m["mae"] == pytest.approx((0.5 + 0 + 2 + 1 + 10) / 5)
    assert m["within_1"] == pytest.approx(3 / 5)
    assert m["mae_bin_0_1"] == pytest.approx(0.5)
    assert m["mae_bin_2"] == pytest.approx(0.0)
    assert m["mae_bin_3_4"] == pytest.approx(2.0)
    assert m["mae_bin_9_16"] == pytest.approx(1.0)
    assert m["mae_bin_17_plus"] == pytest.approx(10.0)
    assert "mae_bin_5_8" not in m  # no rows in that bin


def test_compute_metrics_accepts_trainer_shapes() -> None:
    m = compute_metrics((np.array([[1.0], [3.0]]), np.array([1.0, 2.0])))
    assert m["mse"] == pytest.approx(0.5) and m["rows"] == 2


def test_empty_metrics_are_nan() -> None:
    assert math.isnan(regression_metrics([], [])["mse"])
