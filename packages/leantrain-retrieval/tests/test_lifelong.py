"""Lifelong training over a real export database (leantrain-export) of the sample repos."""

import pytest
from leantrain.core.manifest import RunManifest
from leantrain.retrieval import PremiseRetriever, RetrievalTrainer


@pytest.mark.slow
def test_lifelong_over_the_sample_database_and_resume(tmp_path, make_config):
    export = pytest.importorskip("leantrain.export")
    db = export.Database(tmp_path / "lt.db")
    repos = db.import_sample()
    if len(repos) < 2:
        pytest.skip("need at least two sample repositories")
    order = db.curriculum()
    db.close() if hasattr(db, "close") else None
    cfg = make_config(max_steps=3, database=str(tmp_path / "lt.db"))
    result = RetrievalTrainer(cfg).train(None, str(tmp_path / "lt.db"), tmp_path / "data")
    assert list(result["per_repo"]) == order
    m = RunManifest.load(cfg.output_dir)
    assert m.completed_repos == order and m.status == "completed"
    for i, _ in enumerate(order):
        m.verify_checkpoint(m.step("retrieval", i).checkpoint)
    # each step's data dir is the merged export of the repos so far (beside eval/)
    exports = [p for p in (tmp_path / "data").iterdir() if p.is_dir() and p.name[:3].isdigit()]
    assert len(exports) == len(order)
    # resume: nothing left to do, nothing retrained
    rerun = RetrievalTrainer(cfg)
    again = rerun.train(None, str(tmp_path / "lt.db"), tmp_path / "data")
    assert again["per_repo"] == result["per_repo"]
    # evaluate() after a rerun with nothing left to train: on the last step's merged export
    assert rerun.evaluate()["count"] > 0
    assert PremiseRetriever.from_pretrained(again["model_dir"]).encode_texts(["⊢ a"]).shape == (
        1,
        32,
    )
