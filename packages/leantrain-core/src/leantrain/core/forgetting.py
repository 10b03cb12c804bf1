"""Stability and plasticity of lifelong training, from the engine's per-repository evaluations.

After step ``k`` the engine scores each trainer on the own test split of every repository
``j <= k``: ``a[k][j]``. From that lower-triangular matrix (Lopez-Paz & Ranzato 2017;
Chaudhry et al. 2018), with ``T`` steps and signs chosen so that *larger is better* for
average and backward transfer and *larger is worse* for forgetting, whatever the metric:

* average performance ``ACC = mean_j a[T-1][j]`` (after the last step, over every repository);
* backward transfer ``BWT = mean_{j<T-1} (a[T-1][j] - a[j][j])`` (negated for lower-is-better
  metrics): below zero, training on later repositories hurt earlier ones;
* forgetting of repository ``j``: ``max_{j<=l<T-1} a[l][j] - a[T-1][j]`` (for lower-is-better:
  ``a[T-1][j] - min_l a[l][j]``), and its mean over ``j < T-1``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

Matrix = list[list[float | None]]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


def accuracy_matrix(
    evals: Iterable[Mapping[str, Any]], trainer: str, key: str | None = None
) -> tuple[list[str], Matrix, str | None, bool]:
    """``(repos, a, key, higher_is_better)`` for ``trainer`` from the engine's eval rows
    (``manifest["evals"]`` or the ``eval`` events of ``metrics.jsonl``). ``a[k][j]`` is the
    metric ``key`` (default: the trainer's ``score_key``) after step ``k`` on repository ``j``,
    ``None`` where it was not measured."""
    rows = [e for e in evals if e.get("trainer") == trainer]
    if not rows:
        return [], [], key, True
    key = key or rows[0].get("score_key")
    higher = bool(rows[0].get("higher_is_better", True))
    size = 1 + max(max(int(e["step"]), int(e["repo_index"])) for e in rows)
    repos = [""] * size
    a: Matrix = [[None] * size for _ in range(size)]
    for e in rows:
        k, j = int(e["step"]), int(e["repo_index"])
        repos[j] = str(e.get("repo", ""))
        a[k][j] = _number(e.get("metrics", {}).get(key))
    return repos, a, key, higher


def forgetting_summary(a: Matrix, higher_is_better: bool = True) -> dict[str, Any]:
    """``{"average", "average_per_step", "bwt", "forgetting", "mean_forgetting"}`` of ``a``
    (see the module docstring); a value that cannot be computed is ``None``."""
    steps = len(a)
    sign = 1.0 if higher_is_better else -1.0

    def mean(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return sum(known) / len(known) if known else None

    per_step = [mean(a[k][: k + 1]) for k in range(steps)]
    if steps == 0:
        return {
            "average": None,
            "average_per_step": [],
            "bwt": None,
            "forgetting": [],
            "mean_forgetting": None,
        }
    last = a[steps - 1]
    transfers: list[float | None] = []
    forgetting: list[float | None] = []
    for j in range(steps - 1):
        now, first = last[j], a[j][j]
        transfers.append(None if now is None or first is None else sign * (now - first))
        earlier = [a[i][j] for i in range(j, steps - 1) if a[i][j] is not None]
        best = (max if higher_is_better else min)(earlier) if earlier else None  # type: ignore[type-var]
        forgetting.append(None if now is None or best is None else sign * (best - now))
    return {
        "average": per_step[-1],
        "average_per_step": per_step,
        "bwt": mean(transfers),
        "forgetting": forgetting,
        "mean_forgetting": mean(forgetting),
    }


def forgetting_report(evals: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per trainer: its matrix, metric, direction and :func:`forgetting_summary`."""
    rows = list(evals)
    out: dict[str, dict[str, Any]] = {}
    for trainer in dict.fromkeys(str(e.get("trainer")) for e in rows):
        repos, a, key, higher = accuracy_matrix(rows, trainer)
        out[trainer] = {
            "key": key,
            "higher_is_better": higher,
            "repos": repos,
            "matrix": a,
            **forgetting_summary(a, higher),
        }
    return out
