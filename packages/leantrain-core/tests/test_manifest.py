"""The run manifest: a typed, versioned record of a run, saved atomically, refused in one line
when it cannot be read; derived facts follow from the steps."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from leantrain.core import CheckpointError, RunManifest
from leantrain.core.manifest import FORMAT_VERSION, EvalRecord, StepRecord


def _ckpt(run: Path, name: str, content: bytes = b"weights") -> Path:
    d = run / name
    d.mkdir(parents=True)
    (d / "model.safetensors").write_bytes(content)
    (d / "config.json").write_text("{}")
    return d


def _new(run: Path) -> RunManifest:
    return RunManifest.create(run, kind="lifelong", trainers=["sft", "grpo"], config={"sft": {}})


def _step(m: RunManifest, trainer: str, index: int, repo: str) -> StepRecord:
    ckpt = m.checksum(_ckpt(m.run_dir, f"{trainer}/{index:03d}"))
    record = StepRecord(trainer=trainer, index=index, repo=repo, checkpoint=ckpt, metrics={"l": 1})
    m.record_step(record)
    return record


def test_a_new_manifest_is_readable_versioned_json(tmp_path: Path) -> None:
    m = RunManifest.create(tmp_path, kind="sft", trainers=["sft"], config={"sft": {"lr": 0.1}})
    text = (tmp_path / "manifest.json").read_text()
    data = json.loads(text)
    assert text.startswith('{\n  "format_version": 1,')  # indented, the version first
    assert data["kind"] == "sft" and data["config"] == {"sft": {"lr": 0.1}}
    assert data["trainers"] == ["sft"] and "leantrain-core" in data["packages"]
    assert m.completed_repos == [] and m.status == "running" and m.steps == []


def test_facts_are_stored_once_and_the_rest_derived(tmp_path: Path) -> None:
    m = _new(tmp_path)
    m.order = ["u@1", "u@2"]
    sft0 = _step(m, "sft", 0, "u@1")
    m.mark_done(sft0)
    grpo0 = _step(m, "grpo", 0, "u@1")
    m.record_eval(
        EvalRecord(
            trainer="grpo",
            step=0,
            repo_index=0,
            repo="u@1",
            score_key="acc",
            higher_is_better=True,
            metrics={"acc": 0.5},
        )
    )
    m.mark_done(grpo0)
    again = RunManifest.load(tmp_path)
    assert again.completed_repos == ["u@1"] and again.status == "running"
    assert [c.path for c in again.checkpoints] == ["sft/000", "grpo/000"]
    assert again.eval_rows("grpo")[0]["metrics"] == {"acc": 0.5} and again.eval_rows("sft") == []
    data = json.loads(again.path.read_text())
    assert not {"completed_repos", "status", "checkpoints"} & set(data)
    for trainer in ("sft", "grpo"):
        again.mark_done(_step(again, trainer, 1, "u@2"))
    assert again.status == "completed"
    assert [s.index for s in again.trained_steps("sft")] == [0, 1]


def test_re_recording_a_step_replaces_it(tmp_path: Path) -> None:
    m = _new(tmp_path)
    _step(m, "sft", 0, "u@1")
    (tmp_path / "sft" / "000" / "model.safetensors").write_bytes(b"new")
    record = StepRecord(
        trainer="sft", index=0, repo="u@1", checkpoint=m.checksum(tmp_path / "sft" / "000")
    )
    m.record_step(record)
    assert len(RunManifest.load(tmp_path).steps) == 1
    assert m.verify_checkpoint(record.checkpoint) == tmp_path / "sft" / "000"


def test_corrupted_or_missing_checkpoint_detected(tmp_path: Path) -> None:
    m = _new(tmp_path)
    ck = _step(m, "sft", 0, "u@1").checkpoint
    (tmp_path / "sft" / "000" / "model.safetensors").write_bytes(b"weightz")
    with pytest.raises(CheckpointError, match="corrupted"):
        m.verify_checkpoint(ck)
    (tmp_path / "sft" / "000" / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="missing"):
        m.verify_checkpoint(ck)


def test_set_metrics_keeps_named_run_results(tmp_path: Path) -> None:
    _new(tmp_path).set_metrics("evaluation", {"R@10": 0.5})
    assert RunManifest.load(tmp_path).metrics == {"evaluation": {"R@10": 0.5}}


def test_the_manifest_gets_the_mode_the_umask_gives(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        _new(tmp_path)
    finally:
        os.umask(old)
    assert (tmp_path / "manifest.json").stat().st_mode & 0o777 == 0o640
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_missing_manifest_is_named(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match=r"no manifest\.json"):
        RunManifest.load(tmp_path)


_GOOD = {"format_version": FORMAT_VERSION, "kind": "k", "created": "", "updated": ""}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"{not json", "corrupted manifest"),
        (b"[1, 2, 3]", "a JSON list, not an object"),
        (
            b'{"schema": 1, "kind": "sft", "steps": {}}',
            r"format_version None, .*a development version",
        ),
        (
            json.dumps({**_GOOD, "format_version": 2}).encode(),
            "format_version 2, this leantrain-core reads 1",
        ),
        (json.dumps({**_GOOD, "format_version": "1"}).encode(), "format_version '1'"),
        (json.dumps({**_GOOD, "format_version": True}).encode(), "format_version True"),
        (
            json.dumps({**_GOOD, "trainers": ["t"], "steps": 5}).encode(),
            "malformed manifest: steps",
        ),
        (json.dumps(_GOOD).encode(), "malformed manifest: trainers: Field required"),
        (
            json.dumps({**_GOOD, "trainers": [], "evals": [{"trainer": "t"}]}).encode(),
            r"malformed manifest: evals\.0\.step",
        ),
    ],
)
def test_an_unreadable_manifest_is_one_line_naming_the_file(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "manifest.json"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=expected) as info:
        RunManifest.load(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert ("upgrade leantrain-core" in message) == ("format_version 2" in message)
    assert "overwrite" in message or "upgrade" in message


def test_a_nan_metric_leaves_the_manifest_readable(tmp_path: Path) -> None:
    """A diverged step's train_loss NaN (or an infinite metric) was written as JSON's non-value
    NaN, and every later load, the resume included, failed: 'corrupted manifest'."""
    m = _new(tmp_path)
    ckpt = m.checksum(_ckpt(tmp_path, "sft/000"))
    m.record_step(
        StepRecord(
            trainer="sft",
            index=0,
            repo="u@1",
            checkpoint=ckpt,
            metrics={"train_loss": float("nan"), "ppl": float("inf"), "acc": 0.5},
        )
    )
    m.set_metrics("forgetting", {"sft": {"bwt": float("-inf"), "forgetting": [float("nan")]}})
    loaded = RunManifest.load(tmp_path)
    assert loaded.steps[0].metrics == {"train_loss": None, "ppl": None, "acc": 0.5}
    assert loaded.metrics["forgetting"] == {"sft": {"bwt": None, "forgetting": [None]}}
    json.loads((tmp_path / "manifest.json").read_text(), parse_constant=pytest.fail)
