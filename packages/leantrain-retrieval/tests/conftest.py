"""Shared fixtures: tiny configs, synthetic exports, the sample and shared data."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from leantrain.core.sample import sample_repo_dirs
from leantrain.retrieval import RetrievalConfig
from leantrain_tools.synthetic_retrieval import write_synthetic_export

torch.set_num_threads(1)  # the CI machine is small and shared

SHARED_DATA = (Path(__file__).resolve().parents[3] / ".." / "shared" / "data").resolve()


def tiny_config(tmp: Path, max_steps: int = 6, **overrides) -> RetrievalConfig:
    """A config that trains the tiny encoder in seconds on CPU."""
    trainer = {"max_steps": max_steps, "accelerator": "cpu", "devices": 1, "log_every_n_steps": 1}
    base = dict(
        model_name="tiny",
        output_dir=str(tmp / "run"),
        tiny_d_model=32,
        tiny_layers=2,
        context_max_len=64,
        premise_max_len=64,
        batch_size=8,
        eval_batch_size=64,
        learning_rate=1e-3,
        warmup_steps=0,
        seed=0,
    )
    base.update(overrides)
    base["trainer"] = {**trainer, **base.get("trainer", {})}
    return RetrievalConfig(**base)


@pytest.fixture
def make_config(tmp_path):
    return lambda **kw: tiny_config(tmp_path, **kw)


@pytest.fixture(scope="session")
def synthetic_export(tmp_path_factory) -> Path:
    return write_synthetic_export(
        tmp_path_factory.mktemp("syn") / "export", num_premises=40, num_theorems=120, seed=0
    )


@pytest.fixture(scope="session")
def two_repos(tmp_path_factory) -> list[Path]:
    base = tmp_path_factory.mktemp("repos")
    return [
        write_synthetic_export(
            base / "a", num_premises=24, num_theorems=48, namespace="Alpha", seed=1
        ),
        write_synthetic_export(
            base / "b", num_premises=24, num_theorems=48, namespace="Beta", seed=2
        ),
    ]


class ExportDirs:
    """A stand-in database: repository ``URL@COMMIT`` → a prepared export directory, which
    ``export_merged_data`` copies (the merged export is the newest repository's own here)."""

    def __init__(self, dirs: dict[str, Path]) -> None:
        self.dirs = dirs
        self.repos = list(dirs)

    def export_merged_data(self, repos: list[str], out: Path) -> None:
        shutil.copytree(self.dirs[repos[-1]], out)


REPO_A, REPO_B = (f"https://example.com/{n}@{'0' * 40}" for n in ("alpha", "beta"))


@pytest.fixture
def repo_db(two_repos):
    a, b = two_repos
    return ExportDirs({REPO_A: a, REPO_B: b})


@pytest.fixture(scope="session")
def sample_export() -> Path:
    dirs = sample_repo_dirs()
    if not dirs:
        pytest.skip("leantrain-core ships no sample data")
    return next((d for d in dirs if d.name == "nat-basics"), dirs[0])


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared Lean data not found at {SHARED_DATA}")
    return SHARED_DATA
