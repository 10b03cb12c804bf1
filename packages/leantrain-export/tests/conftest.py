"""Fixtures: the shared real data and synthetic repositories."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from export_helpers import BENCHMARK_HEAD, LEAN4_EXAMPLE


@pytest.fixture
def lean4_example() -> Path:
    if not (LEAN4_EXAMPLE / "metadata.json").is_file():
        pytest.skip(f"shared data not found at {LEAN4_EXAMPLE}")
    return LEAN4_EXAMPLE


@pytest.fixture
def benchmark_head() -> Path:
    if not (BENCHMARK_HEAD / "test_head.json").is_file():
        pytest.skip(f"shared data not found at {BENCHMARK_HEAD}")
    return BENCHMARK_HEAD


@pytest.fixture(scope="session")
def synthetic_repos(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three small synthetic LeanDojo-v2 repositories (leantrain_tools.synthetic)."""
    from leantrain_tools.synthetic import generate_synthetic

    return generate_synthetic(tmp_path_factory.mktemp("synth"), 450, n_repos=3, seed=1)
