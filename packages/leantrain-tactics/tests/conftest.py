"""Hand-made LeanDojo theorems for the tactics tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

SHARED_DATA = (Path(__file__).resolve().parents[3] / "../shared/data").resolve()


def traced(
    tactic: str, before: str, after: str = "no goals", premises: list[str] | None = None
) -> dict[str, Any]:
    provs = [
        {"full_name": p, "def_path": "Init/Core.lean", "def_pos": [1, 1], "def_end_pos": [1, 9]}
        for p in premises or []
    ]
    marked = tactic
    for p in premises or []:
        marked = marked.replace(p, f"<a>{p}</a>")
    return {
        "tactic": tactic,
        "annotated_tactic": [marked, provs],
        "state_before": before,
        "state_after": after,
    }


def theorem(
    name: str, tactics: list[dict[str, Any]], file_path: str = "Demo.lean"
) -> dict[str, Any]:
    return {
        "url": "https://github.com/example/demo",
        "commit": "abc123",
        "file_path": file_path,
        "full_name": name,
        "theorem_statement": f"theorem {name} : True",
        "start": [1, 1],
        "end": [3, 10],
        "traced_tactics": tactics,
    }


@pytest.fixture
def theorems() -> list[dict[str, Any]]:
    """Three theorems: 7 tactics, one `sorry`, one empty, one multi-line, one duplicate pair."""
    return [
        theorem(
            "add_comm'",
            [
                traced("intro a b", "⊢ ∀ (a b : Nat), a + b = b + a", "a b : Nat\n⊢ a + b = b + a"),
                traced(
                    "rw [Nat.add_comm]", "a b : Nat\n⊢ a + b = b + a", premises=["Nat.add_comm"]
                ),
            ],
        ),
        theorem(
            "two_steps",
            [
                traced("constructor\n  · simp\n  · simp", "⊢ True ∧ True"),
                traced("sorry", "⊢ 1 = 1"),
                traced("  ", "⊢ 2 = 2"),
            ],
        ),
        theorem(
            "again",
            [
                traced("intro a b", "⊢ ∀ (a b : Nat), a + b = b + a", "a b : Nat\n⊢ a + b = b + a"),
                traced("exact Nat.le_refl _", "n : Nat\n⊢ <a>n</a> ≤ n", premises=["Nat.le_refl"]),
            ],
        ),
    ]


@pytest.fixture
def export_dir(tmp_path: Path, theorems: list[dict[str, Any]]) -> Path:
    """A LeanDojo-v2 style export dir with random/{train,val}.json."""
    root = tmp_path / "export"
    (root / "random").mkdir(parents=True)
    (root / "random" / "train.json").write_text(json.dumps(theorems, indent=1), encoding="utf-8")
    (root / "random" / "val.json").write_text(json.dumps(theorems[:1]), encoding="utf-8")
    return root


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real Lean data not found at {SHARED_DATA} (only in CI / the dev checkout)")
    return SHARED_DATA


@pytest.fixture
def make():
    """The record builders, for tests that need their own theorems."""
    from types import SimpleNamespace

    return SimpleNamespace(theorem=theorem, traced=traced)
