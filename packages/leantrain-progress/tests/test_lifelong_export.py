"""Lifelong training over real leantrain-export exports of the sample repositories."""

from __future__ import annotations

from pathlib import Path

import pytest
from leantrain.core.manifest import RunManifest
from leantrain.progress import ProgressPredictor, ProgressTrainer
from progress_helpers import tiny_options


@pytest.mark.slow
def test_lifelong_over_the_sample_repositories(tmp_path: Path) -> None:
    export = pytest.importorskip("leantrain.export")
    db = export.Database(tmp_path / "lt.db")
    db.import_sample()
    repos = db.curriculum()
    assert len(repos) >= 2
    trainer = ProgressTrainer(output_dir=tmp_path / "run", epochs=1, **tiny_options(max_length=128))
    result = trainer.train(repos, db, tmp_path / "data")
    assert list(result["per_repo"]) == repos
    rows = [m["train_rows"] + m["eval_rows"] for m in result["per_repo"].values()]
    assert rows == sorted(rows) and rows[0] < rows[-1]  # each step trains on the repos so far
    manifest = RunManifest.load(tmp_path / "run")
    assert manifest.completed_repos == repos
    assert [s.repo for s in manifest.trained_steps("progress")] == repos
    # A rerun finds every repository done and trains nothing; evaluate() defaults to the
    # last export, as after the run that trained.
    rerun = ProgressTrainer(output_dir=tmp_path / "run", epochs=1, **tiny_options(max_length=128))
    again = rerun.train(repos, db, tmp_path / "data")
    assert again["checkpoints"] == result["checkpoints"]
    assert rerun.evaluate()["mae"] == pytest.approx(trainer.evaluate()["mae"], abs=1e-5)
    p = ProgressPredictor.from_pretrained(tmp_path / "run")
    assert p.predict("n : Nat\n⊢ n + 0 = n", "", "simp") == pytest.approx(
        trainer.predictor().predict("n : Nat\n⊢ n + 0 = n", "", "simp"), abs=1e-5
    )
