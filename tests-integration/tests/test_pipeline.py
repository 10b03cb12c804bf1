"""The pipeline end to end on the sample data: metrics, report, resume without redoing work."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from it_support import quiet_env, tiny_pipeline_config
from leantrain.core.errors import ConfigError
from leantrain.core.events import read_events
from leantrain.core.manifest import RunManifest
from leantrain.pipeline import Pipeline, render_report

pytestmark = [pytest.mark.slow]

PNG = b"\x89PNG\r\n\x1a\n"


def _metric_events(run_dir: Path) -> Counter:
    return Counter((e["repo"], e["trainer"]) for e in read_events(run_dir) if e["kind"] == "step")


def test_pipeline_trains_every_trainer_per_repo_and_reports(tmp_path):
    cfg = tiny_pipeline_config(tmp_path / "run", trainers=["sft", "grpo", "retrieval", "progress"])
    result = Pipeline(cfg).run()
    run_dir = Path(result["run_dir"])
    assert len(result["repos"]) == 2
    counts = _metric_events(run_dir)
    assert set(counts.values()) == {1}
    assert {t for _, t in counts} == {"sft", "grpo", "retrieval", "progress"}
    assert {r for r, _ in counts} == set(result["repos"])
    # metrics are real numbers from each trainer, on the merged test split
    per_repo = result["results"][result["repos"][-1]]
    assert 0.0 <= per_repo["retrieval"]["metrics"]["test_R@10"] <= 1.0
    assert per_repo["progress"]["metrics"]["test_mae"] >= 0.0
    assert per_repo["sft"]["metrics"]["test_eval_loss"] > 0.0
    # one manifest, one checkpoint layout: <run_dir>/<trainer>/NNN-<slug>/
    manifest = RunManifest.load(run_dir)
    assert manifest.status == "completed"
    assert manifest.completed_repos == result["repos"]
    for name in ("sft", "grpo", "retrieval", "progress"):
        assert sorted(p.name[:4] for p in (run_dir / name).glob("0*")) == ["000-", "001-"]
        assert not list((run_dir / name).rglob("manifest.json"))
    # the GRPO step started from that repository's SFT model (SFT -> GRPO chaining)
    sft0, sft1, grpo1 = manifest.step("sft", 0), manifest.step("sft", 1), manifest.step("grpo", 1)
    assert grpo1.init_from == str(manifest.checkpoint_path(sft1.checkpoint))
    assert sft1.init_from == str(manifest.checkpoint_path(sft0.checkpoint))
    # forgetting: after step k each trainer is scored on every repository j <= k
    assert sorted((e.trainer, e.step, e.repo_index) for e in manifest.evals) == sorted(
        (t, k, j)
        for t in ("sft", "grpo", "retrieval", "progress")
        for k in (0, 1)
        for j in range(k + 1)
    )
    assert set(manifest.metrics["forgetting"]) == {"sft", "grpo", "retrieval", "progress"}
    # the report and its plots
    report = Path(result["report"]).read_text()
    assert "| repository | trainer | metrics |" in report
    assert "backward transfer (BWT)" in report
    plots = sorted((run_dir / "plots").glob("*.png"))
    assert any(p.name == "sft_loss.png" for p in plots)
    assert {"sft_forgetting.png", "retrieval_forgetting.png", "progress_forgetting.png"} <= {
        p.name for p in plots
    }
    for p in plots:
        assert p.read_bytes()[:8] == PNG
        assert f"plots/{p.name}" in report
    # every step's export used the novel-premises rate pinned over all the repositories
    pinned = json.loads((run_dir / "data" / "lifelong.json").read_text())
    assert pinned["repos"] == result["repos"]
    for meta in (run_dir / "data").glob("0*/metadata.json"):
        assert (
            json.loads(meta.read_text())["leantrain"]["novel_premise_rate"]
            == pinned["novel_premise_rate"]
        )
    # a second run does nothing new
    again = Pipeline(cfg).run()
    assert _metric_events(run_dir) == counts
    assert again["repos"] == result["repos"]
    # the report re-renders from the run directory alone
    (run_dir / "report.md").unlink()
    assert render_report(run_dir).is_file()


def test_killed_pipeline_resumes_where_it_stopped(tmp_path):
    run_dir = tmp_path / "run"
    cfg = tiny_pipeline_config(run_dir, trainers=["sft", "progress"])
    cfg_path = tmp_path / "cfg.json"
    cfg_path.write_text(json.dumps(cfg))
    script = (
        "import json, sys\n"
        "from leantrain.pipeline import Pipeline\n"
        f"Pipeline(json.load(open({str(cfg_path)!r}))).run()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        env=quiet_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 300
    try:
        while time.time() < deadline and proc.poll() is None:
            if sum(_metric_events(run_dir).values()) >= 1:
                break
            time.sleep(0.5)
    finally:
        proc.kill()
        proc.wait()
    before = _metric_events(run_dir)
    assert 1 <= sum(before.values()) < 4, "the kill should land midway"
    result = Pipeline(cfg).run()
    after = _metric_events(Path(result["run_dir"]))
    assert set(after.values()) == {1}, f"finished work was redone: {after}"
    assert sum(after.values()) == 4
    for key in before:
        assert after[key] == 1


def test_bad_pipeline_configs_are_clear(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key 'trainer'.*did you mean 'trainers'"):
        Pipeline({"trainer": ["sft"]})
    with pytest.raises(ConfigError, match="'trainers' cannot be 'ppo'"):
        Pipeline({"trainers": ["ppo"]})
    cfg = tiny_pipeline_config(tmp_path / "run")
    cfg["repos"] = ["no-such-repo"]
    with pytest.raises(ConfigError, match=r"'no-such-repo'.*not imported"):
        Pipeline(cfg).run()


def test_a_bad_key_in_a_trainer_section_fails_before_any_work(tmp_path):
    cfg = tiny_pipeline_config(tmp_path / "run")
    cfg["progress"]["lr_typo"] = 1
    with pytest.raises(ConfigError, match=r"section 'progress:'.*unknown key 'lr_typo'"):
        Pipeline(cfg)
    assert not (tmp_path / "run").exists()
    cfg = tiny_pipeline_config(tmp_path / "run", trainers=["progress"])
    cfg["sft"] = {"max_steps": 1}
    with pytest.raises(ConfigError, match="'sft' is not in 'trainers'"):
        Pipeline(cfg)


def test_a_rerun_with_another_config_is_refused(tmp_path):
    cfg = tiny_pipeline_config(tmp_path / "run", trainers=["progress"], repos=1)
    Pipeline(cfg).run()
    cfg["progress"]["learning_rate"] = 0.01
    with pytest.raises(ConfigError, match=r"progress\.learning_rate"):
        Pipeline(cfg).run()
    cfg["overwrite"] = True  # starts over: one step, with the new config
    Pipeline(cfg).run()
    manifest = RunManifest.load(tmp_path / "run")
    assert manifest.config["progress"]["learning_rate"] == 0.01
    assert len(manifest.steps) == 1


def test_a_run_dir_with_other_files_is_refused(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "thesis.tex").write_text("mine")
    cfg = tiny_pipeline_config(tmp_path / "run", trainers=["progress"], repos=1)
    cfg["overwrite"] = True
    with pytest.raises(ConfigError, match="did not write"):
        Pipeline(cfg).run()
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["thesis.tex"]
