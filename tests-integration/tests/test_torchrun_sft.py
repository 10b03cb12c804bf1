"""SFT under ``torchrun --nproc_per_node 2`` on CPU (gloo DDP): the trainer runs unchanged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from leantrain.core.manifest import RunManifest

DATA = (Path(__file__).resolve().parents[2] / "../shared/data/lean4-example").resolve()


@pytest.mark.slow
@pytest.mark.distributed
def test_torchrun_two_processes_sft(tmp_path):
    if not (DATA / "random" / "train.json").is_file():
        pytest.skip(f"shared Lean data not found at {DATA}")
    out = tmp_path / "sft"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    cmd = [
        sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", "29533",
        "-m", "leantrain.core.cli", "sft", "--model", "tiny", "--data", str(DATA), "--output-dir", str(out),
        "--max-steps", "4", "--batch-size", "2", "--evaluate-each-repo", "false", "--logging-steps", "1", "--use-cpu",
        "--allow-contamination",  # lean4-example: its test statements repeat training ones
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = RunManifest.load(out)
    assert manifest.status == "completed"
    per_repo = manifest.steps[0].metrics
    assert per_repo["global_step"] == 4
    # 2 processes × batch 2: each optimizer step consumed 4 of the 26 training examples
    assert per_repo["num_examples"] == 26
    (model_dir,) = (out / "sft").glob("000-*")
    assert (model_dir / "model.safetensors").is_file()
