from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from leantrain.lean import ReplBackend

FAKE = Path(__file__).parent / "fake_repl.py"
sys.path.insert(0, str(Path(__file__).parent))  # fake_lean_dojo


MATHLIB_HEADER = (
    "import Mathlib.Algebra.BigOperators.Group.Finset.Basic\nimport Mathlib.Data.Real.Basic\n"
    "import Mathlib.Data.Complex.Basic\nimport Mathlib.Data.Nat.Log\n"
    "import Mathlib.Analysis.Complex.Exponential\nimport Mathlib.NumberTheory.Divisors\n"
    "import Mathlib.Data.ZMod.Defs\nimport Mathlib.Data.ZMod.Basic\nimport Mathlib.Topology.Basic\n"
    "import Mathlib.Data.Nat.Digits.Lemmas\nimport Mathlib.Tactic.NormNum.GCD\nopen BigOperators\n"
    "open Real\nopen Nat\nopen Topology"
)


@pytest.fixture
def mathlib_header() -> str:
    """The header of the REPL's Mathlib/test/H20231020.in, as recorded."""
    return MATHLIB_HEADER


class Fake:
    """Builds :class:`ReplBackend`\\ s on the fake REPL and reads what it was sent."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.log = tmp_path / "sent.log"
        self.backends: list[ReplBackend] = []

    def argv(self, *uses: str, fault: str | None = None, once: bool = True, extra=()) -> list[str]:
        argv = [sys.executable, str(FAKE), "--log", str(self.log)]
        for u in uses:
            argv += ["--use", u]
        if fault:
            argv += ["--fault", fault]
            if once:
                argv += ["--once", str(self.tmp / "fired")]
        return [*argv, *extra]

    def backend(self, *uses: str, fault: str | None = None, once: bool = True, extra=(), **kw):
        b = ReplBackend(self.argv(*uses, fault=fault, once=once, extra=extra), **kw)
        self.backends.append(b)
        return b

    def sent(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[Fake]:
    f = Fake(tmp_path)
    yield f
    for b in f.backends:
        b.close()
