"""Render a run directory's report: ``report.md`` with PNG plots and a summary table.

``render_report(run_dir)`` reads only ``metrics.jsonl`` and ``manifest.json``, so it can be
re-run at any time (``leantrain report RUN_DIR``) and works on a partial (killed) run.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_text
from leantrain.core.events import read_events

# The metrics shown per trainer in the summary table and the per-repo plots, in order.
KEY_METRICS: dict[str, list[str]] = {
    "sft": ["eval_loss", "top1_accuracy", "top4_accuracy"],
    "grpo": ["mean_reward", "top1_accuracy"],
    "retrieval": ["R@1", "R@10", "MRR", "bm25_R@10"],
    "progress": ["mse", "mae", "within_1"],
}


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4f}"
    return "—" if v is None else str(v)


def _flatten(metrics: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in metrics.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}/"))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[prefix + k] = v
    return out


def _pick(flat: dict[str, Any], name: str) -> Any:
    """A metric by exact name, else by suffix (``random/R@10`` for ``R@10``; ``eval_mae`` for ``mae``)."""
    if name in flat:
        return flat[name]
    for k, v in flat.items():
        if k.endswith("/" + name) or k.endswith("_" + name):
            return v
    return None


def collect(run_dir: str | Path) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, list[tuple[str, list[dict[str, Any]]]]], list[str]]:
    """(metrics[trainer][repo], histories[trainer] = [(repo, points)], repos in order)."""
    metrics: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    histories: dict[str, list[tuple[str, list[dict[str, Any]]]]] = defaultdict(list)
    repos: list[str] = []
    for ev in read_events(run_dir):
        repo = ev.get("repo")
        if repo and repo not in repos:
            repos.append(repo)
        if ev.get("kind") == "metrics":
            metrics[ev["trainer"]][repo] = _flatten(ev.get("metrics", {}))
        elif ev.get("kind") == "history":
            histories[ev["trainer"]].append((repo, ev.get("points", [])))
    return metrics, histories, repos


def _short(repo: str) -> str:
    return repo.split("@")[0].rstrip("/").rsplit("/", 1)[-1]


def _plot_history(trainer: str, runs: list[tuple[str, list[dict[str, Any]]]], path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    offset = 0
    plotted = False
    for repo, points in runs:
        pts = [(p["step"], p["loss"]) for p in points if p.get("loss") is not None and p.get("step") is not None]
        if not pts:
            continue
        xs = [offset + s for s, _ in pts]
        ax.plot(xs, [v for _, v in pts], marker=".", label=_short(repo))
        ax.axvline(offset, color="grey", lw=0.5, ls=":")
        offset = xs[-1]
        plotted = True
    if plotted:
        ax.set_title(f"{trainer}: training loss across repositories")
        ax.set_xlabel("step (cumulative)")
        ax.set_ylabel("loss")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
    plt.close(fig)
    return plotted


def _plot_per_repo(trainer: str, per_repo: dict[str, dict[str, Any]], repos: list[str], path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r for r in repos if r in per_repo]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    plotted = False
    for metric in KEY_METRICS.get(trainer, []):
        ys = [_pick(per_repo[r], metric) for r in names]
        if all(y is None for y in ys):
            continue
        ax.plot([_short(r) for r in names], [float("nan") if y is None else y for y in ys], marker="o", label=metric)
        plotted = True
    if plotted:
        ax.set_title(f"{trainer}: metrics after each repository")
        ax.set_xlabel("repository (curriculum order)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
    plt.close(fig)
    return plotted


def summary_rows(run_dir: str | Path) -> list[dict[str, str]]:
    """One row per (repository, trainer) with the key metrics, formatted."""
    metrics, _, repos = collect(run_dir)
    rows = []
    for repo in repos:
        for trainer in KEY_METRICS:
            flat = metrics.get(trainer, {}).get(repo)
            if flat is None:
                continue
            shown = {m: _fmt(_pick(flat, m)) for m in KEY_METRICS[trainer] if _pick(flat, m) is not None}
            rows.append({"repo": _short(repo), "trainer": trainer, "metrics": ", ".join(f"{k} {v}" for k, v in shown.items())})
    return rows


def render_report(run_dir: str | Path) -> Path:
    """Write ``report.md`` and ``plots/*.png`` for ``run_dir``; returns the report's path."""
    run_dir = Path(run_dir)
    plots = run_dir / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    metrics, histories, repos = collect(run_dir)
    lines = [f"# leantrain run: {run_dir.name}", "", f"Repositories, in curriculum order: {', '.join(_short(r) for r in repos) or 'none yet'}.", ""]
    lines += ["## Summary", "", "| repository | trainer | metrics |", "|---|---|---|"]
    lines += [f"| {r['repo']} | {r['trainer']} | {r['metrics']} |" for r in summary_rows(run_dir)]
    lines += ["", "## Plots", ""]
    for trainer in KEY_METRICS:
        if trainer in histories and _plot_history(trainer, histories[trainer], plots / f"{trainer}_loss.png"):
            lines += [f"![{trainer} loss](plots/{trainer}_loss.png)", ""]
        if trainer in metrics and _plot_per_repo(trainer, metrics[trainer], repos, plots / f"{trainer}_metrics.png"):
            lines += [f"![{trainer} metrics](plots/{trainer}_metrics.png)", ""]
    return atomic_write_text(run_dir / "report.md", "\n".join(lines) + "\n")
