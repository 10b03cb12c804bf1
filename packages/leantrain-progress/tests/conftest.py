"""Shared fixtures: hand-made traced proofs, learnable synthetic rows, one trained tiny model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

# --import-mode=importlib: make the helpers module importable from the test files.
sys.path.insert(0, str(Path(__file__).parent))

from progress_helpers import learnable_rows, tiny_options, write_jsonl


@pytest.fixture(autouse=True)
def _single_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    torch.set_num_threads(1)
    monkeypatch.delenv("LEANPROGRESS_MODEL", raising=False)


@pytest.fixture(scope="session")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A tiny model trained on learnable rows; returns the trainer, result and data paths."""
    import torch

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("trained")
    train_rows, eval_rows = learnable_rows(240, seed=1), learnable_rows(60, seed=2)
    train_path = write_jsonl(root / "train.jsonl", train_rows)
    eval_path = write_jsonl(root / "eval.jsonl", eval_rows)
    from leantrain.progress import ProgressTrainer

    kwargs = {
        "output_dir": root / "model",
        "epochs": 20,
        **tiny_options(eval_data_path=str(eval_path)),
    }
    trainer = ProgressTrainer(train_path, **kwargs)
    result = trainer.train()
    return {
        "trainer": trainer,
        "result": result,
        "args": (train_path,),
        "kwargs": kwargs,
        "dir": root / "model",
        "train_rows": train_rows,
        "eval_rows": eval_rows,
        "eval_path": eval_path,
    }
