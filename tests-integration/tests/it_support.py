"""Helpers shared by the integration tests (on sys.path through pytest's ``pythonpath``)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def leantrain_cmd() -> list[str]:
    """The installed ``leantrain`` console script of this environment."""
    exe = Path(sys.executable).parent / "leantrain"
    return [str(exe)] if exe.exists() else [shutil.which("leantrain") or "leantrain"]


def quiet_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "TQDM_DISABLE": "1", "TRANSFORMERS_VERBOSITY": "error", **extra}


def tiny_pipeline_config(
    run_dir: Path, trainers: list[str] | None = None, repos: int | None = 2
) -> dict:
    """A pipeline config small enough for a test: two sample repos, a handful of steps each."""
    from leantrain.core.sample import sample_repo_dirs

    cfg = {
        "name": "it",
        "run_dir": str(run_dir),
        "sources": ["sample"],
        "trainers": trainers or ["sft", "retrieval", "progress"],
        "sft": {
            "model_name": "tiny",
            "max_steps": 4,
            "logging_steps": 1,
            "save_steps": 2,
            "per_device_train_batch_size": 8,
            "learning_rate": 0.001,
            "max_eval_samples": 4,
            "eval_k": 2,
        },
        "grpo": {
            "reward_funcs": ["format", "reference_match"],
            "max_steps": 2,
            "num_generations": 2,
            "per_device_train_batch_size": 2,
            "max_completion_length": 8,
            "max_eval_samples": 2,
            "eval_k": 1,
        },
        "retrieval": {
            "model_name": "tiny",
            "trainer": {"max_steps": 3},
            "batch_size": 4,
            "warmup_steps": 1,
        },
        "progress": {"model_name": "tiny", "epochs": 1, "learning_rate": 0.001},
    }
    for name in ("sft", "grpo", "retrieval", "progress"):
        if name not in cfg["trainers"]:
            del cfg[name]  # a section of a trainer that does not run is an error
    if repos is not None:
        cfg["repos"] = [p.name for p in sample_repo_dirs()][:repos]
    return cfg
