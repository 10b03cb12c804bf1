"""Every metric beside its baseline: the summary rows and report of a run directory, and the
baselines recorded cell by cell in the manifest (resumed, never recomputed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from leantrain.core.errors import DataError
from leantrain.core.events import EventLog
from leantrain.core.manifest import RunManifest
from leantrain.pipeline import baselines as baselines_module
from leantrain.pipeline import report as report_module
from leantrain.pipeline.baselines import BASELINES, record_baselines
from leantrain.pipeline.report import (
    BASELINE_NOTE,
    SAMPLE_NOTE,
    render_report,
    summary_notes,
    summary_rows,
)

A = "https://github.com/x/alpha@" + "a" * 40
B = "https://github.com/x/beta@" + "b" * 40
TRAINERS = ["sft", "retrieval", "progress", "prove"]
STEP = {
    "sft": {"test_eval_loss": 2.5, "test_top1_accuracy": 0.0, "test_top4_accuracy": 0.25},
    "retrieval": {
        "test_R@1": 0.2,
        "test_R@10": 0.5,
        "test_MRR": 0.3,
        "test_bm25_R@10": 0.8,
        "test_reachable_fraction": 1.0,
    },
    "progress": {"test_mse": 9.0, "test_mae": 2.0, "test_within_1": 0.3},
    "prove": {"test_proved": 1, "test_attempted": 4, "test_replay_proof_rate": 0.25},
}
BASE = {
    "sft": {"eval_loss": 5.0, "top1_accuracy": 0.0, "top4_accuracy": 0.5},
    "retrieval": {"R@1": 0.1, "R@10": 0.4, "MRR": 0.35, "reachable_fraction": 1.0},
    "progress": {"median": 3.0, "mse": 12.0, "mae": 1.5, "within_1": 0.4},
    "prove": {"proved": 0, "attempted": 4, "replay_proof_rate": 0.0},
}


def _run(tmp_path: Path, *, sources: list[str], baselines: bool = True) -> Path:
    run = tmp_path / "run"
    manifest = RunManifest.create(
        run, kind="pipeline", trainers=TRAINERS, config={"pipeline": {"sources": sources}}
    )
    manifest.order = [A, B]
    manifest.save()
    events = EventLog(run)
    for index, repo in enumerate((A, B)):
        for trainer in TRAINERS:
            events.write(
                "step", trainer=trainer, repo=repo, repo_index=index, metrics=STEP[trainer]
            )
    if baselines:  # step 1's cells only for sft: a run killed while measuring baselines
        cells = {t: {"0": BASE[t]} for t in TRAINERS}
        cells["sft"]["1"] = {"eval_loss": 2.0, "top1_accuracy": 0.0, "top4_accuracy": 0.25}
        manifest.set_metrics(BASELINES, cells)
    return run


def _row(rows: list[dict[str, str]], repo: str, trainer: str) -> str:
    return next(r["metrics"] for r in rows if (r["repo"], r["trainer"]) == (repo, trainer))


def test_each_metric_is_shown_beside_its_baselines_with_a_mark_where_the_model_wins(tmp_path):
    rows = summary_rows(_run(tmp_path, sources=["sample"]))
    # lower eval loss wins; an equal accuracy does not; a lower top-4 loses
    assert _row(rows, "alpha", "sft") == (
        "test_eval_loss 2.5000 (untrained 5.0000 ✓), test_top1_accuracy 0.0000 "
        "(untrained 0.0000), test_top4_accuracy 0.2500 (untrained 0.5000)"
    )
    assert _row(rows, "beta", "sft").startswith("test_eval_loss 2.5000 (untrained 2.0000),")
    # the retriever beside its untrained encoder and BM25 (BM25 no longer a metric of its own)
    assert _row(rows, "alpha", "retrieval") == (
        "test_R@1 0.2000 (untrained 0.1000 ✓), test_R@10 0.5000 (untrained 0.4000 ✓, "
        "BM25 0.8000), test_MRR 0.3000 (untrained 0.3500), test_reachable_fraction 1.0000"
    )  # the fraction of reachable premises is the data's: no baseline
    # step 1 has no untrained cell yet: BM25 alone
    assert "test_R@10 0.5000 (BM25 0.8000)" in _row(rows, "beta", "retrieval")
    # the progress model beside the median predictor: MSE lower wins, MAE higher loses
    assert _row(rows, "alpha", "progress").startswith(
        "test_mse 9.0000 (median 12.0000 ✓), test_mae 2.0000 (median 1.5000)"
    )
    assert _row(rows, "alpha", "prove") == (
        "replay proof rate 1/4 (25.0 %) (untrained 0/4 (0.0 %) ✓)"
    )
    assert _row(rows, "beta", "prove") == "replay proof rate 1/4 (25.0 %)"


def test_the_report_has_the_same_columns_and_says_what_a_sample_run_is(tmp_path, monkeypatch):
    for plot in ("_plot_history", "_plot_per_repo", "_plot_heatmap", "_plot_curves"):
        monkeypatch.setattr(report_module, plot, lambda *args: False)  # the text, not matplotlib
    run = _run(tmp_path, sources=["sample"])
    assert summary_notes(run) == [BASELINE_NOTE, SAMPLE_NOTE]
    report = render_report(run).read_text()
    assert "test_eval_loss 2.5000 (untrained 5.0000 ✓)" in report
    assert "QUALITY.md" in report and BASELINE_NOTE in report
    # a run of the user's data, without baselines: no notes, the figures alone
    other = _run(tmp_path / "o", sources=["my-export"], baselines=False)
    assert summary_notes(other) == []
    assert _row(summary_rows(other), "alpha", "sft").startswith("test_eval_loss 2.5000, ")


def test_baselines_are_recorded_cell_by_cell_and_never_recomputed(tmp_path, monkeypatch):
    run = _run(tmp_path, sources=["sample"])
    manifest = RunManifest.load(run)
    manifest.exports = {0: str(tmp_path / "d0"), 1: str(tmp_path / "d1")}
    manifest.save()
    calls: list[tuple[str, str]] = []

    def fake(name, cfg, run_dir):
        def evaluate(data, split):
            calls.append((name, Path(data).name))
            if name == "progress":
                raise DataError(data, "no test rows")
            return {"score": 1.0}

        return evaluate

    monkeypatch.setattr(baselines_module, "_evaluator", fake)

    class Config:
        trainers = ("sft", "retrieval", "progress", "prove", "other")

    started: list[bool] = []
    done = record_baselines(Config(), run, on_start=lambda: started.append(True))
    # only the cells a kill left out: step 1 of each trainer but sft, which had both
    assert calls == [("retrieval", "d1"), ("progress", "d1"), ("prove", "d1")]
    assert started == [True]
    assert done["retrieval"]["1"] == {"score": 1.0}
    assert "no test rows" in done["progress"]["1"]["skipped"]
    assert RunManifest.load(run).metrics[BASELINES] == done
    # a finished run computes nothing
    calls.clear()
    assert record_baselines(Config(), run, on_start=lambda: started.append(True)) == done
    assert calls == [] and started == [True]


@pytest.mark.parametrize("sources", [["sample"], ["sample", "other"]])
def test_only_a_run_of_the_sample_alone_is_called_the_demo(tmp_path, sources):
    notes = summary_notes(_run(tmp_path, sources=sources))
    assert (SAMPLE_NOTE in notes) == (sources == ["sample"])
