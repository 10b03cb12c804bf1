"""Render a run directory's report: ``report.md`` with PNG plots, a summary table, the
forgetting analysis (heatmap of the per-repository matrix, average performance, backward
transfer, forgetting per repository) and, for a run with the ``prove`` stage, the matrix of
replay proof rates (proved / attempted after each repository on every repository so far).

``render_report(run_dir)`` reads only the run directory (``manifest.json``, ``metrics.jsonl``
and the trainers' ``<trainer>/logs/*.jsonl``), so it can be re-run at any time
(``leantrain report RUN_DIR``) and works on a partial (killed) run.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_text
from leantrain.core.errors import DataError
from leantrain.core.events import read_events
from leantrain.core.forgetting import forgetting_report
from leantrain.core.lifelong import LOGS_SUBDIR
from leantrain.core.manifest import RunManifest


def key_metrics(trainer: str, measured: Iterable[str]) -> list[str]:
    """The metrics shown for ``trainer`` in the summary table and the per-repo plots, in
    order: its command's ``metrics`` (the registry's), each as measured on the merged test
    split of the repositories so far (``test_<m>``) where a step has that, else as trained
    (``<m>``); ``topk`` stands for any k (``top4_accuracy``)."""
    from leantrain.pipeline.pipeline_config import commands

    entry = commands().get(trainer)
    measured = list(measured)
    keys: list[str] = []
    for metric in entry[1].metrics if entry else ():
        name = re.escape(metric).replace("topk", r"top\d+")
        hits = [k for k in measured if re.fullmatch(f"test_{name}", k)]
        keys += hits or [k for k in measured if re.fullmatch(name, k)]
    return list(dict.fromkeys(keys))


PROOF_RATE_NOTE = (
    "a lower bound: the replay backend accepts only the traced proof of a theorem, so any "
    "other valid proof counts as a failure"
)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4f}"
    return "—" if v is None else str(v)


def _short(repo: str) -> str:
    return repo.split("@")[0].rstrip("/").rsplit("/", 1)[-1]


def _label(key: Any) -> str:
    """A metric's name as shown: ``replay_proof_rate`` reads "replay proof rate"."""
    key = str(key)
    return key.replace("_", " ") if key.endswith("proof_rate") else key


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def collect(run_dir: str | Path) -> tuple[dict[str, dict[str, dict[str, Any]]], list[str]]:
    """``(metrics[trainer][repo], repos in order)`` from the run's ``step`` events."""
    metrics: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    repos: list[str] = []
    for ev in read_events(run_dir):
        if ev.get("kind") != "step":
            continue
        repo, trainer = ev.get("repo"), ev.get("trainer")
        if not isinstance(repo, str) or not isinstance(trainer, str):
            raise DataError(
                Path(run_dir) / "metrics.jsonl",
                "a 'step' event without its 'trainer' and 'repo'",
                hint="metrics.jsonl is written by leantrain; this one is not a leantrain run's",
            )
        if repo not in repos:
            repos.append(repo)
        metrics[trainer][repo] = {k: v for k, v in (ev.get("metrics") or {}).items() if _number(v)}
    return metrics, repos


def histories(run_dir: str | Path, trainer: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """``[(step name, log rows)]`` of a trainer, from ``<trainer>/logs/NNN-<slug>.jsonl``."""
    out = []
    for path in sorted((Path(run_dir) / trainer / LOGS_SUBDIR).glob("*.jsonl")):
        rows = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line of a killed run
            if isinstance(row, dict):
                rows.append(row)
        out.append((path.stem, rows))
    return out


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plot_history(trainer: str, runs: list[tuple[str, list[dict[str, Any]]]], path: Path) -> bool:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    offset = 0
    plotted = False
    for name, rows in runs:
        pts = [
            (r["step"], r.get("loss", r.get("train_loss")))
            for r in rows
            if _number(r.get("loss", r.get("train_loss"))) and "step" in r
        ]
        if not pts:
            continue
        xs = [offset + s for s, _ in pts]
        ax.plot(xs, [v for _, v in pts], marker=".", label=name.split("-", 1)[-1])
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


def _plot_per_repo(
    trainer: str, per_repo: dict[str, dict[str, Any]], repos: list[str], path: Path
) -> bool:
    plt = _pyplot()
    names = [r for r in repos if r in per_repo]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    plotted = False
    for metric in key_metrics(trainer, dict.fromkeys(k for r in names for k in per_repo[r])):
        ys = [per_repo[r].get(metric) for r in names]
        if all(y is None for y in ys):
            continue
        ys = [float("nan") if y is None else y for y in ys]
        ax.plot([_short(r) for r in names], ys, marker="o", label=metric)
        plotted = True
    if plotted:
        ax.set_title(f"{trainer}: merged test split after each repository")
        ax.set_xlabel("repository (curriculum order)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
    plt.close(fig)
    return plotted


def _plot_heatmap(trainer: str, info: dict[str, Any], path: Path) -> bool:
    """The matrix a[k][j] (rows: after step k; columns: repository j's own test split)."""
    a, repos = info["matrix"], [_short(r) for r in info["repos"]]
    if not a or all(v is None for row in a for v in row):
        return False
    plt = _pyplot()
    n = len(a)
    grid = [[float("nan") if v is None else v for v in row] for row in a]
    fig, ax = plt.subplots(figsize=(1.2 * n + 2.5, 1.0 * n + 1.5))
    image = ax.imshow(grid, cmap="viridis" if info["higher_is_better"] else "viridis_r")
    for k in range(n):
        for j in range(n):
            if a[k][j] is not None:
                ax.text(j, k, f"{a[k][j]:.3g}", ha="center", va="center", color="w", fontsize=8)
    ax.set_xticks(range(n), repos, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(n), [f"after {r}" for r in repos], fontsize=8)
    ax.set_xlabel("evaluated on (own test split)")
    better = "higher" if info["higher_is_better"] else "lower"
    ax.set_title(f"{trainer}: {_label(info['key'])} ({better} is better)", fontsize=9)
    fig.colorbar(image, ax=ax, shrink=0.8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def _plot_curves(trainer: str, info: dict[str, Any], path: Path) -> bool:
    """One line per repository j: its score after each step k >= j."""
    a, repos = info["matrix"], info["repos"]
    if len(a) < 2:
        return False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for j, repo in enumerate(repos):
        pts = [(k, a[k][j]) for k in range(j, len(a)) if a[k][j] is not None]
        if pts:
            ax.plot([k for k, _ in pts], [v for _, v in pts], marker="o", label=_short(repo))
    ax.set_xticks(range(len(a)), [_short(r) for r in repos], fontsize=8)
    ax.set_xlabel("after training on")
    ax.set_ylabel(_label(info["key"]))
    ax.set_title(f"{trainer}: each repository's {_label(info['key'])} as training goes on")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def _rate_key(metrics: dict[str, Any], prefix: str = "") -> str | None:
    """The proof-rate key of a ``prove`` result (``replay_proof_rate`` under replay)."""
    for key in ("replay_proof_rate", "proof_rate", "replay_whole_proof_rate", "whole_proof_rate"):
        if prefix + key in metrics:
            return key
    return None


def _proved_of(metrics: dict[str, Any], prefix: str = "") -> str | None:
    """``2/3 (66.7 %)`` of a ``prove`` result, ``None`` when it holds no proof rate."""
    key = _rate_key(metrics, prefix)
    if key is None:
        return None
    proved, attempted = metrics.get(prefix + "proved"), metrics.get(prefix + "attempted")
    rate = metrics[prefix + key]
    if not (_number(proved) and _number(attempted) and _number(rate)):
        return None
    return f"{proved}/{attempted} ({100 * rate:.1f} %)"


def proof_cell(metrics: dict[str, Any], prefix: str = "") -> str:
    """``replay proof rate 2/3 (66.7 %)`` of a ``prove`` result (``—`` when not measured)."""
    shown = _proved_of(metrics, prefix)
    key = _rate_key(metrics, prefix)
    return "—" if shown is None or key is None else f"{key.replace('_', ' ')} {shown}"


LOWER_IS_BETTER = ("loss", "mse", "mae")
"""A metric whose name holds one of these is better lower (eval loss, MSE, MAE)."""

DATA_METRICS = ("reachable_fraction",)
"""Metrics of the data rather than the model: shown without baselines."""

BASELINE_NOTE = (
    "In parentheses, on the same split: untrained — the configured model before any training "
    "(the generator's, the retriever's encoder); BM25; median — the median predictor of steps "
    "remaining; ✓ where the trained model beats that baseline."
)
SAMPLE_NOTE = (
    "This run is the shipped sample: tiny models trained for seconds on three toy "
    "repositories, to show the pipeline work and learn — not a prover's quality; figures "
    "of real models are in QUALITY.md."
)


def _beats(key: str, trained: Any, baseline: Any) -> bool:
    if not (_number(trained) and _number(baseline)):
        return False
    lower = any(word in key.lower() for word in LOWER_IS_BETTER)
    return trained < baseline if lower else trained > baseline


def _beside(trainer: str, key: str, flat: dict[str, Any], base: dict[str, Any]) -> str:
    """``key value`` of a trained model, with its baselines in parentheses (``✓`` where it
    beats one)."""
    from leantrain.pipeline.baselines import LABELS

    name = key.removeprefix("test_")
    if name in DATA_METRICS:
        return f"{key} {_fmt(flat[key])}"
    others = [(LABELS.get(trainer, "baseline"), base.get(name))]
    if trainer == "retrieval":
        others.append(("BM25", flat.get(key.replace(name, f"bm25_{name}"))))
    shown = [
        f"{label} {_fmt(v)}{' ✓' if _beats(name, flat[key], v) else ''}"
        for label, v in others
        if _number(v)
    ]
    text = f"{key} {_fmt(flat[key])}"
    return f"{text} ({', '.join(shown)})" if shown else text


def summary_rows(run_dir: str | Path) -> list[dict[str, str]]:
    """One row per (repository, trainer) with the key metrics, formatted, each beside its
    baselines (:mod:`leantrain.pipeline.baselines`; the retriever's also beside BM25) where
    the run has them (the ``prove`` row: the replay proof rate on the merged test split,
    proved / attempted, beside the untrained generator's)."""
    from leantrain.pipeline.baselines import LABELS, run_baselines

    metrics, repos = collect(run_dir)
    baselines = run_baselines(run_dir)
    order = _order(run_dir)
    rows = []
    for repo in repos:
        index = str(order.index(repo)) if repo in order else None
        for trainer, flat in ((t, metrics[t].get(repo)) for t in metrics):
            if flat is None:
                continue
            base = baselines.get(trainer, {}).get(index or "", {})
            if trainer == "prove" and _rate_key(flat, "test_"):
                shown = proof_cell(flat, "test_")
                untrained = _proved_of(base)
                if untrained is not None:
                    key = _rate_key(flat, "test_") or ""
                    mark = " ✓" if _beats(key, flat["test_" + key], base.get(key)) else ""
                    shown += f" ({LABELS[trainer]} {untrained}{mark})"
            else:
                keys = key_metrics(trainer, flat) or list(flat)[:4]
                if trainer == "retrieval":  # BM25 is shown beside each of the retriever's
                    keys = [k for k in keys if "bm25_" not in k] or keys
                shown = ", ".join(_beside(trainer, k, flat, base) for k in keys)
            rows.append({"repo": _short(repo), "trainer": trainer, "metrics": shown})
    return rows


def _order(run_dir: str | Path) -> list[str]:
    if not (Path(run_dir) / "manifest.json").is_file():
        return []
    return list(RunManifest.load(run_dir).order)


def summary_notes(run_dir: str | Path) -> list[str]:
    """The lines under the summary table: what the parentheses hold (a run with baselines)
    and, for a run of the shipped sample alone (the demo), what it is."""
    from leantrain.pipeline.baselines import run_baselines

    notes = [BASELINE_NOTE] if run_baselines(run_dir) else []
    if (Path(run_dir) / "manifest.json").is_file():
        pipeline = RunManifest.load(run_dir).config.get("pipeline") or {}
        if pipeline.get("sources") == ["sample"]:
            notes.append(SAMPLE_NOTE)
    return notes


def proof_matrix(run_dir: str | Path) -> tuple[list[str], list[list[dict[str, Any]]]]:
    """``(repos, cells)`` of the ``prove`` stage: ``cells[i][j]`` (``j <= i``) holds the
    metrics after repository ``i`` on repository ``j``'s own test split (``proved``,
    ``attempted``, ``replay_proof_rate`` …; ``{}`` where not measured yet). Empty for a run
    without the stage."""
    if not (Path(run_dir) / "manifest.json").is_file():
        return [], []
    manifest = RunManifest.load(run_dir)
    rows = [e for e in manifest.evals if e.trainer == "prove"]
    if not rows:
        return [], []
    size = 1 + max(max(e.step, e.repo_index) for e in rows)
    repos = list(manifest.order[:size])
    cells: list[list[dict[str, Any]]] = [[{} for _ in range(i + 1)] for i in range(size)]
    for e in rows:
        if e.repo_index <= e.step:
            cells[e.step][e.repo_index] = dict(e.metrics)
    return repos, cells


def proof_matrix_lines(repos: list[str], cells: list[list[dict[str, Any]]]) -> list[str]:
    """The Markdown table of :func:`proof_matrix` (rows: after repository i; columns: j)."""
    names = [_short(r) for r in repos]
    lines = [
        "| models after ↓ · proving → | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for i, row in enumerate(cells):
        shown = [_proved_of(c) or "—" for c in row]
        shown += [""] * (len(names) - len(row))
        lines.append(f"| after {names[i]} | " + " | ".join(shown) + " |")
    return lines


def run_forgetting(run_dir: str | Path) -> dict[str, dict[str, Any]]:
    """The forgetting analysis of a run (see :func:`leantrain.core.forgetting.forgetting_report`)."""
    if not (Path(run_dir) / "manifest.json").is_file():
        return {}
    return forgetting_report(RunManifest.load(run_dir).eval_rows())


def forgetting_lines(report: dict[str, dict[str, Any]]) -> list[str]:
    """Markdown table rows: trainer, metric, ACC, BWT, mean forgetting, per repository."""
    lines = [
        "| trainer | metric | average (ACC) | backward transfer (BWT) | mean forgetting | "
        "forgetting per repository |",
        "|---|---|---|---|---|---|",
    ]
    for trainer, info in report.items():
        per = ", ".join(
            f"{_short(r)} {_fmt(f)}"
            for r, f in zip(info["repos"], info["forgetting"], strict=False)
        )
        direction = "↑" if info["higher_is_better"] else "↓"
        lines.append(
            f"| {trainer} | {_label(info['key'])} {direction} | {_fmt(info['average'])} | "
            f"{_fmt(info['bwt'])} | {_fmt(info['mean_forgetting'])} | {per or '—'} |"
        )
    return lines


def render_report(run_dir: str | Path) -> Path:
    """Write ``report.md`` and ``plots/*.png`` for ``run_dir``; returns the report's path."""
    run_dir = Path(run_dir)
    plots = run_dir / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    metrics, repos = collect(run_dir)
    forgetting = run_forgetting(run_dir)
    lines = [
        f"# leantrain run: {run_dir.name}",
        "",
        f"Repositories, in curriculum order: {', '.join(_short(r) for r in repos) or 'none yet'}.",
        "",
        "## Summary",
        "",
        "After each repository, each model on the merged test split of the repositories so far.",
        "",
        "| repository | trainer | metrics |",
        "|---|---|---|",
    ]
    lines += [f"| {r['repo']} | {r['trainer']} | {r['metrics']} |" for r in summary_rows(run_dir)]
    for note in summary_notes(run_dir):
        lines += ["", note]
    if forgetting:
        lines += [
            "",
            "## Stability and plasticity (forgetting)",
            "",
            "After each repository, each model on every earlier repository's own test split. "
            "ACC: mean over all repositories after the last one; BWT: mean change on earlier "
            "repositories since they were learned (< 0: forgotten); forgetting: best earlier "
            "score minus the last (> 0: forgotten), signed so that the metric's direction "
            "does not matter.",
            "",
            *forgetting_lines(forgetting),
            "",
        ]
        for trainer, info in forgetting.items():
            if _plot_heatmap(trainer, info, plots / f"{trainer}_forgetting.png"):
                lines += [f"![{trainer} forgetting matrix](plots/{trainer}_forgetting.png)", ""]
            if _plot_curves(trainer, info, plots / f"{trainer}_per_repo.png"):
                lines += [f"![{trainer} per repository](plots/{trainer}_per_repo.png)", ""]
    repos_p, cells = proof_matrix(run_dir)
    if cells:
        metric = next((c for row in cells for c in row if _rate_key(c)), {})
        label = (_rate_key(metric) or "replay_proof_rate").replace("_", " ")
        lines += [
            "",
            f"## {label.capitalize()} after each repository",
            "",
            f"After each repository, the {label} (theorems proved / attempted) of that "
            "repository's models (the generator, the progress model if trained) on every "
            "repository's own test split so far: the forgetting matrix of proving.",
        ]
        if label.startswith("replay"):
            lines += ["", f"The replay proof rate is {PROOF_RATE_NOTE}."]
        lines += ["", *proof_matrix_lines(repos_p, cells), ""]
    lines += ["", "## Training", ""]
    for trainer in metrics:
        if _plot_history(trainer, histories(run_dir, trainer), plots / f"{trainer}_loss.png"):
            lines += [f"![{trainer} loss](plots/{trainer}_loss.png)", ""]
        if _plot_per_repo(trainer, metrics[trainer], repos, plots / f"{trainer}_metrics.png"):
            lines += [f"![{trainer} metrics](plots/{trainer}_metrics.png)", ""]
    return atomic_write_text(run_dir / "report.md", "\n".join(lines) + "\n")
