"""The demo's models learn: on the shipped sample, with ``examples/demo.yaml``'s settings, the
generator, the retriever and the progress model each beat their baselines (the untrained
generator's eval loss, the untrained encoder's R@10, the median predictor's MAE) on the merged
test split, and the summary says so with its marks. The ``prove`` stage and GRPO (a few steps
from SFT's model) are left out: they are the pipeline tests', and take most of the time."""

from __future__ import annotations

import pytest
from leantrain.pipeline import Pipeline
from leantrain.pipeline.baselines import BASELINES
from leantrain.pipeline.demo import demo_config
from leantrain.pipeline.report import SAMPLE_NOTE

pytestmark = [pytest.mark.slow]


def test_the_demo_models_beat_their_baselines(tmp_path):
    import torch

    torch.set_num_threads(1)  # 2 CPU cores shared by several test runs
    cfg = demo_config("demo", str(tmp_path / "demo"))
    cfg["trainers"] = ["sft", "retrieval", "progress"]
    for section in ("grpo", "prove"):
        cfg.pop(section)
    result = Pipeline(cfg).run()
    last = result["repos"][-1]
    trained = {t: v["metrics"] for t, v in result["results"][last].items()}
    from leantrain.core.manifest import RunManifest

    base = RunManifest.load(result["run_dir"]).metrics[BASELINES]
    index = str(len(result["repos"]) - 1)
    assert trained["sft"]["test_eval_loss"] < base["sft"][index]["eval_loss"]
    assert trained["retrieval"]["test_R@10"] > base["retrieval"][index]["R@10"]
    assert trained["progress"]["test_mae"] < base["progress"][index]["mae"]
    # every step: the generator's loss beats the untrained one's, and the summary marks it
    for i, repo in enumerate(result["repos"]):
        loss = result["results"][repo]["sft"]["metrics"]["test_eval_loss"]
        assert loss < base["sft"][str(i)]["eval_loss"]
    rows = {(r["repo"], r["trainer"]): r["metrics"] for r in result["summary"]}
    short = last.split("@")[0].rsplit("/", 1)[-1]
    assert "test_eval_loss" in rows[(short, "sft")] and "✓)" in rows[(short, "sft")]
    assert "BM25" in rows[(short, "retrieval")]
    assert "(median" in rows[(short, "progress")]
    assert SAMPLE_NOTE in result["notes"]
