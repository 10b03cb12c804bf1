"""``leantrain compare RUN_A RUN_B``: two runs side by side (e.g. EWC on vs off).

Works on any run directory the lifelong engine wrote (a pipeline run or one trainer's
``output_dir``): for each trainer, its key metrics after the last repository and its forgetting
analysis (ACC, BWT, mean forgetting), with the difference B − A.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from leantrain.core.errors import ConfigError
from leantrain.pipeline.report import collect, key_metrics, run_forgetting


def _final(run_dir: Path) -> dict[str, dict[str, Any]]:
    metrics, repos = collect(run_dir)
    return {t: per_repo[repos[-1]] for t, per_repo in metrics.items() if repos[-1] in per_repo}


def compare_runs(run_a: str | Path, run_b: str | Path) -> list[dict[str, Any]]:
    """Rows ``{trainer, metric, a, b, delta}``: final metrics, then ACC / BWT / forgetting."""
    runs = [Path(run_a), Path(run_b)]
    for run in runs:
        if not (run / "manifest.json").is_file() or not (run / "metrics.jsonl").is_file():
            raise ConfigError(
                f"{run}: not a leantrain run directory (no manifest.json / metrics.jsonl)",
                hint="give two directories written by 'leantrain pipeline' or a trainer",
            )
    finals = [_final(r) for r in runs]
    forgetting = [run_forgetting(r) for r in runs]
    trainers = list(dict.fromkeys([*finals[0], *finals[1]]))
    rows: list[dict[str, Any]] = []

    def add(trainer: str, metric: str, a: Any, b: Any) -> None:
        if a is None and b is None:
            return
        delta = b - a if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None
        rows.append({"trainer": trainer, "metric": metric, "a": a, "b": b, "delta": delta})

    for t in trainers:
        fa, fb = finals[0].get(t, {}), finals[1].get(t, {})
        keys = key_metrics(t, {**fa, **fb})
        for key in keys or sorted(set(fa) | set(fb))[:6]:
            add(t, key, fa.get(key), fb.get(key))
        ga, gb = forgetting[0].get(t, {}), forgetting[1].get(t, {})
        key = ga.get("key") or gb.get("key")
        for name, label in (("average", "ACC"), ("bwt", "BWT"), ("mean_forgetting", "forgetting")):
            add(t, f"{label} ({key})", ga.get(name), gb.get(name))
    return rows
