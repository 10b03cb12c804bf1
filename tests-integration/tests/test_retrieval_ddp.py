"""The premise retriever trained with Lightning DDP on 2 CPU processes (gloo), in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from leantrain.core.manifest import RunManifest


@pytest.mark.slow
@pytest.mark.distributed
def test_retriever_trains_with_ddp_on_two_cpu_processes(tmp_path):
    from leantrain_tools.synthetic_retrieval import write_synthetic_export

    data = write_synthetic_export(tmp_path / "data", num_premises=24, num_theorems=60, seed=0)
    out = tmp_path / "ret"
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "MASTER_PORT": "29541",
    }
    cmd = [
        sys.executable, "-m", "leantrain.core.cli", "retrieval", "train", "--model", "tiny", "--data", str(data),
        "--output-dir", str(out), "--max-steps", "5", "--batch-size", "4", "--tiny-d-model", "32",
        "--context-max-len", "64", "--premise-max-len", "64", "--accelerator", "cpu", "--devices", "2",
        "--strategy", "ddp", "--learning-rate", "1e-3", "--warmup-steps", "0",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = json.loads(proc.stdout)  # only rank 0 prints
    manifest = RunManifest.load(out)
    assert manifest.status == "completed"
    metrics = manifest.steps[0].metrics
    assert metrics["world_size"] == 2 and metrics["global_step"] == 5
    assert printed["final"]["val_R@10"] == metrics["val_R@10"]
    model_dir = Path(printed["model_dir"])
    assert model_dir.parent == out / "retrieval" and model_dir.name.startswith("000-")
    assert (model_dir / "encoder" / "model.safetensors").is_file()

    from leantrain.retrieval import PremiseRetriever

    model = PremiseRetriever.from_pretrained(model_dir)
    assert type(model.tokenizer).__name__ == "ByT5Tokenizer"
    assert model.encode_texts(["x : Nat\n⊢ x = x"]).shape == (1, 32)


@pytest.mark.slow
@pytest.mark.distributed
def test_lifelong_ddp_exports_once_and_trains_every_repo(tmp_path):
    from leantrain.export import Database

    db = Database(tmp_path / "lt.db")
    repos = db.import_sample()[:2]
    order = [r for r in db.curriculum() if r in repos]
    db.close()
    out = tmp_path / "life"
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "MASTER_PORT": "29542",
    }
    cmd = [
        sys.executable, "-m", "leantrain.core.cli", "retrieval", "train", "--model", "tiny",
        "--database", str(tmp_path / "lt.db"), *[a for r in order for a in ("--repos", r)],
        "--output-dir", str(out), "--max-steps", "2", "--batch-size", "2", "--tiny-d-model", "32",
        "--context-max-len", "64", "--premise-max-len", "64", "--accelerator", "cpu", "--devices", "2",
        "--strategy", "ddp", "--warmup-steps", "0",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = RunManifest.load(out)
    assert manifest.completed_repos == order and manifest.status == "completed"
    for step in manifest.trained_steps("retrieval"):
        assert step.metrics["world_size"] == 2
    # one merged export per step, written by rank 0 only
    assert len([p for p in (out / "data").glob("0*") if p.is_dir()]) == len(order)
