"""leantrain-lean's fake REPL for the whole-proof tests (its transcripts; a Lean error is the
composed answer to ``def f : Nat := by skip`` of ``unfinished_tactic_block``)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

LEAN_TESTS = Path(__file__).resolve().parents[2] / "leantrain-lean" / "tests"
sys.path.insert(0, str(LEAN_TESTS))
from conftest import MATHLIB_HEADER  # noqa: E402

__all__ = ["MATHLIB_HEADER", "fake_repl_command"]


def fake_repl_command(*uses: str) -> str:
    """The command of the fake REPL answering the transcripts ``uses``."""
    argv = [sys.executable, str(LEAN_TESTS / "fake_repl.py")]
    for use in uses:
        argv += ["--use", use]
    return shlex.join(argv)
