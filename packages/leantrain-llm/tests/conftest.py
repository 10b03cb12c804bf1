"""Shared fixtures: tiny hand-made tactic datasets and the shared Lean data location."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SHARED_DATA = (Path(__file__).resolve().parents[3] / "../shared/data").resolve()

TAUGHT = [
    ("n : ℕ\n⊢ n + 0 = n", "simp"),
    ("a b : ℕ\n⊢ a * b = b * a", "rw [Nat.mul_comm]"),
    ("p q : Prop\nhp : p\n⊢ p ∨ q", "exact Or.inl hp"),
]


@pytest.fixture(autouse=True)
def _one_thread():
    import torch

    # 2 CPU cores are shared by several test runs: one thread each is fastest overall
    torch.set_num_threads(1)


@pytest.fixture
def taught():
    """(state, tactic) pairs of :func:`sft_rows`."""
    return list(TAUGHT)


@pytest.fixture
def sft_rows():
    """Three proof states, each with the tactic to teach, as TRL prompt/completion rows."""
    import datasets
    from leantrain.tactics import build_messages

    rows = [
        {"prompt": build_messages(s), "completion": [{"role": "assistant", "content": t}]}
        for s, t in TAUGHT
    ]
    return datasets.Dataset.from_list(rows)


@pytest.fixture
def lean4_example() -> Path:
    path = SHARED_DATA / "lean4-example"
    if not (path / "random" / "train.json").is_file():
        pytest.skip(f"shared Lean data not found at {path}")
    return path


class TaughtDatabase:
    """A database stand-in: each repository holds the taught theorems (train, val and test),
    and ``export_merged_data`` writes the repositories so far in the LeanDojo layout."""

    def export_merged_data(self, repos, path):
        rows = []
        for repo in repos:
            url, _, commit = repo.rpartition("@")
            for i, (state, tactic) in enumerate(TAUGHT):
                rows.append(
                    {
                        "url": url,
                        "commit": commit,
                        "file_path": "T.lean",
                        "full_name": f"t{i}",
                        "start": [i, 1],
                        "end": [i, 9],
                        "traced_tactics": [
                            {"tactic": tactic, "state_before": state, "state_after": "no goals"}
                        ],
                    }
                )
        for strategy in ("random", "novel_premises"):
            (Path(path) / strategy).mkdir(parents=True)
            for split in ("train", "val", "test"):
                (Path(path) / strategy / f"{split}.json").write_text(json.dumps(rows))


@pytest.fixture
def database():
    return TaughtDatabase()
