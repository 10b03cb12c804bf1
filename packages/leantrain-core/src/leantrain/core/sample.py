"""The sample data shipped with leantrain-core, and where to find it.

``sample_data_dir()`` holds one LeanDojo-v2 export directory per sample repository
(``random/``, ``novel_premises/``, ``corpus.jsonl``, ``traced_files.jsonl``,
``metadata.json``), hand-written in realistic Lean 4, for the demo and tests.
"""

from __future__ import annotations

from pathlib import Path


def sample_data_dir() -> Path:
    """Directory holding one LeanDojo-v2 export directory per sample repository."""
    return Path(__file__).parent / "sample_data"


def sample_repo_dirs() -> list[Path]:
    """The sample repositories' export directories, sorted by name."""
    return sorted(p for p in sample_data_dir().iterdir() if (p / "metadata.json").is_file())
