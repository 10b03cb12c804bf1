"""Run manifests: versions, config, progress, checkpoints with checksums, resume."""

from __future__ import annotations

import json

import pytest
from leantrain.core import CheckpointError, RunManifest


def _ckpt(run, name, content=b"weights"):
    d = run / name
    d.mkdir(parents=True)
    (d / "model.safetensors").write_bytes(content)
    (d / "config.json").write_text("{}")
    return d


def test_new_manifest_records_packages_and_config(tmp_path):
    m = RunManifest.load_or_create(tmp_path, kind="sft", config={"lr": 0.1})
    data = json.loads((tmp_path / "manifest.json").read_text())
    assert data["kind"] == "sft" and data["config"] == {"lr": 0.1}
    assert "leantrain-core" in data["packages"] and data["completed_repos"] == []
    assert m.completed_repos == []


def test_resume_sees_completed_repos_position_and_metrics(tmp_path):
    m = RunManifest.load_or_create(tmp_path, kind="retrieval")
    ck = _ckpt(tmp_path, "ckpt-0")
    m.complete_repo("u@1", {"R@10": 0.5}, ck)
    m.set_position(repo="u@2", repo_index=1, step=7)
    m.set_metrics("final", {"loss": 1.0})
    again = RunManifest.load_or_create(tmp_path, kind="retrieval", config={"x": 1})
    assert (
        again.completed_repos == ["u@1"]
        and again.is_repo_done("u@1")
        and not again.is_repo_done("u@2")
    )
    assert again.data["position"] == {"repo": "u@2", "repo_index": 1, "step": 7}
    assert again.data["metrics"]["per_repo"]["u@1"] == {"R@10": 0.5}
    assert again.data["metrics"]["final"] == {"loss": 1.0} and again.data["config"] == {"x": 1}
    entry = again.latest_checkpoint(repo="u@1")
    assert entry["path"] == "ckpt-0" and set(entry["files"]) == {"model.safetensors", "config.json"}
    assert again.verify_checkpoint(entry) == ck
    again.complete_repo("u@1")  # idempotent
    assert again.completed_repos == ["u@1"]


def test_corrupted_or_missing_checkpoint_detected(tmp_path):
    m = RunManifest.load_or_create(tmp_path, kind="sft")
    ck = _ckpt(tmp_path, "ckpt-1")
    entry = m.add_checkpoint(ck, step=3)
    (ck / "model.safetensors").write_bytes(b"weightz")
    with pytest.raises(CheckpointError, match="corrupted"):
        m.verify_checkpoint(entry)
    (ck / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="missing"):
        m.verify_checkpoint(entry)
    assert m.latest_checkpoint(step=3) is entry and m.latest_checkpoint(step=4) is None


def test_re_adding_a_checkpoint_replaces_its_entry(tmp_path):
    m = RunManifest.load_or_create(tmp_path, kind="sft")
    ck = _ckpt(tmp_path, "ckpt")
    m.add_checkpoint(ck, step=1)
    (ck / "model.safetensors").write_bytes(b"new")
    m.add_checkpoint(ck, step=2)
    assert [c["step"] for c in m.data["checkpoints"]] == [2]
    m.verify_checkpoint(m.latest_checkpoint())


def test_bad_manifests(tmp_path):
    with pytest.raises(CheckpointError, match=r"no manifest\.json"):
        RunManifest.load(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="corrupted manifest"):
        RunManifest.load(tmp_path)
    (tmp_path / "manifest.json").write_text('{"schema": 99}')
    with pytest.raises(CheckpointError, match="not a leantrain manifest"):
        RunManifest.load(tmp_path)
