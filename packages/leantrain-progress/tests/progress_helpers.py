"""Helpers of the leantrain-progress tests (imported by name: conftest puts this dir on sys.path)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[3]
SHARED_DATA = (REPO_ROOT / "../shared/data").resolve()


def tactic(text: str, before: str, after: str = "no goals") -> dict[str, Any]:
    return {
        "tactic": text,
        "annotated_tactic": [text, []],
        "state_before": before,
        "state_after": after,
    }


def theorem(
    name: str, tactics: list[dict[str, Any]], file_path: str = "Demo.lean"
) -> dict[str, Any]:
    return {
        "url": "https://github.com/example/demo",
        "commit": "0" * 40,
        "file_path": file_path,
        "full_name": name,
        "theorem_statement": f"theorem {name} : True",
        "start": [1, 1],
        "end": [3, 1],
        "traced_tactics": tactics,
    }


def write_json(path: Path, obj: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


FILLER = ["x", "y", "n", "m", "ℕ", "⊢", "+", "=", "h", "a", "b", "*", "<", "≤"]
MARKERS = {1: "alpha", 2: "bravo", 3: "charlie", 4: "delta", 5: "echo", 6: "foxtrot"}


def learnable_rows(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """Rows whose label is given away by one marker word among random Lean-looking filler."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        k = rng.randint(1, 6)
        words = [rng.choice(FILLER) for _ in range(rng.randint(3, 12))]
        words.insert(rng.randint(0, len(words)), MARKERS[k])
        rows.append(
            {
                "goal": " ".join(words),
                "prefix": "",
                "tactic": rng.choice(["simp", "omega", "ring"]),
                "steps_remaining": k,
                "theorem": f"t{i}",
            }
        )
    return rows


def tiny_options(**extra: Any) -> dict[str, Any]:
    opts = {
        "model_name": "tiny",
        "tiny_hidden_size": 32,
        "tiny_layers": 2,
        "tiny_vocab_size": 200,
        "max_length": 64,
        "batch_size": 16,
        "learning_rate": 3e-3,
        "logging_steps": 1000,
    }
    opts.update(extra)
    return opts
