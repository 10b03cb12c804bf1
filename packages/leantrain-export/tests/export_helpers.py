"""Helpers of the leantrain-export tests (imported by name: conftest puts this dir on sys.path)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SHARED_DATA = (Path(__file__).resolve().parents[3] / ".." / "shared" / "data").resolve()
LEAN4_EXAMPLE = SHARED_DATA / "lean4-example"
BENCHMARK_HEAD = SHARED_DATA / "leandojo-benchmark-4-head"


def tactic(
    text: str, premises: list[str] = (), *, before: str = "⊢ p", after: str = "no goals"
) -> dict[str, Any]:
    """A traced tactic whose annotation marks each premise name."""
    marked = text
    for p in premises:
        marked = marked.replace(p, f"<a>{p}</a>")
    provenance = [
        {
            "full_name": p,
            "def_path": "Lib/Defs.lean",
            "def_pos": [i + 1, 1],
            "def_end_pos": [i + 1, 9],
        }
        for i, p in enumerate(premises)
    ]
    return {
        "tactic": text,
        "annotated_tactic": [marked, provenance],
        "state_before": before,
        "state_after": after,
    }


def theorem(
    url: str,
    commit: str,
    name: str,
    tactics: list[dict[str, Any]],
    *,
    file: str = "Lib/Main.lean",
    line: int = 1,
) -> dict[str, Any]:
    return {
        "url": url,
        "commit": commit,
        "file_path": file,
        "full_name": name,
        "theorem_statement": f"theorem {name} : p := by",
        "start": [line, 1],
        "end": [line + 2, 10],
        "traced_tactics": tactics,
    }


def write_export(
    root: Path,
    url: str,
    commit: str,
    theorems: list[dict[str, Any]],
    *,
    date: str = "2024-01-01T00:00:00",
    corpus: list[dict[str, Any]] | None = None,
) -> Path:
    """A minimal LeanDojo-v2 (lean_dojo trace) export directory."""
    (root / "random").mkdir(parents=True, exist_ok=True)
    (root / "random" / "train.json").write_text(
        json.dumps(theorems, ensure_ascii=False), encoding="utf-8"
    )
    (root / "random" / "val.json").write_text("[]", encoding="utf-8")
    (root / "random" / "test.json").write_text("[]", encoding="utf-8")
    meta = {
        "creation_time": date,
        "from_repo": {"url": url, "commit": commit},
        "leandojo_version": "4.20.0",
    }
    (root / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    if corpus is not None:
        (root / "corpus.jsonl").write_text(
            "".join(json.dumps(c) + "\n" for c in corpus), encoding="utf-8"
        )
    (root / "traced_files.jsonl").write_text(
        json.dumps({"traced_file_path": "Lib/Main.lean"}) + "\n", encoding="utf-8"
    )
    return root


def load_split_dir(out: Path, strategy: str) -> dict[str, list[dict[str, Any]]]:
    return {
        s: json.loads((out / strategy / f"{s}.json").read_text(encoding="utf-8"))
        for s in ("train", "val", "test")
    }


def key(t: dict[str, Any]) -> tuple[Any, ...]:
    return (t["file_path"], t["full_name"], tuple(t["start"]), tuple(t["end"]))
