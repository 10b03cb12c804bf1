"""leantrain-lean's fake REPL with one answer more, for the whole-proof tests: a Lean error."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

LEAN_TESTS = Path(__file__).resolve().parents[2] / "leantrain-lean" / "tests"
sys.path.insert(0, str(LEAN_TESTS))
from conftest import MATHLIB_HEADER  # noqa: E402

# The REPL's recorded answer to `def f : Nat := by` (transcripts/unfinished_tactic_block): an
# empty tactic block leaves the goal unsolved; `by skip` leaves it the same.
LEAN_ERROR = {
    "cmd": "def f : Nat := by skip",
    "out": {
        "messages": [
            {
                "severity": "error",
                "pos": {"line": 1, "column": 15},
                "endPos": {"line": 1, "column": 17},
                "data": "unsolved goals\n⊢ Nat",
            }
        ],
        "env": 0,
    },
}

WRAPPER = """import json, sys
sys.path.insert(0, {lean_tests!r})
import fake_repl
_load = fake_repl.load
def load(names, composed):
    table = _load(names, composed)
    table[fake_repl.key({{"cmd": {cmd!r}}})] = json.dumps({out!r})
    return table
fake_repl.load = load
fake_repl.main()
"""


def fake_repl_command(tmp_path: Path, *uses: str) -> str:
    """The command of the fake REPL answering ``uses``' transcripts and :data:`LEAN_ERROR`."""
    script = tmp_path / "fake_repl_whole.py"
    script.write_text(
        WRAPPER.format(lean_tests=str(LEAN_TESTS), cmd=LEAN_ERROR["cmd"], out=LEAN_ERROR["out"])
    )
    argv = [sys.executable, str(script)]
    for use in uses:
        argv += ["--use", use]
    return shlex.join(argv)


__all__ = ["MATHLIB_HEADER", "fake_repl_command", "json"]
