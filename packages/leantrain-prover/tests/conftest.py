"""Shared fixtures: offline, one thread, the sample data; helpers in prover_helpers.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from leantrain.core.sample import sample_data_dir

sys.path.insert(0, str(Path(__file__).parent))
# leantrain-lean's fakes (fake_lean_dojo, fake_repl) serve the prover's backend tests too
sys.path.insert(1, str(Path(__file__).resolve().parents[2] / "leantrain-lean" / "tests"))


@pytest.fixture(autouse=True)
def _offline_one_thread(monkeypatch):
    import torch

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # never download
    torch.set_num_threads(1)  # 2 CPU cores shared by several test runs


@pytest.fixture
def nat_basics() -> Path:
    """The nat-basics sample export (3 test theorems, 6 traced tactics)."""
    return sample_data_dir() / "nat-basics"
