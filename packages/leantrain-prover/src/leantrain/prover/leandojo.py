"""The ``leandojo`` backend: Lean 4 itself, through LeanDojo's ``Dojo`` (lean-dojo >= 4.20).

``Dojo(theorem, timeout=…)`` is entered once per theorem and gives the initial
``TacticState``; ``dojo.run_tac(state, tactic)`` answers with a ``TacticState``,
``ProofFinished``, ``LeanError`` or ``ProofGivenUp``, and raises ``DojoTacticTimeoutError``
when Lean does not answer within ``timeout`` seconds (the per-tactic timeout) and
``DojoCrashError`` when the Lean process died. LeanDojo needs a Lean 4 toolchain (``lake``)
and a repository it has traced; without lean-dojo installed, or without ``lake`` on ``PATH``,
the backend refuses to start in one line that says what to install — before any model loads.

After a tactic timeout the Lean process is still busy with that tactic and would answer the
next request with the old reply, so the session is closed and the search of the theorem ends
(as in ReProver, where a tactic timeout ends the search).
"""

from __future__ import annotations

import importlib
import math
import shutil
from pathlib import Path
from typing import Any

from leantrain.core.errors import MissingDependencyError
from leantrain.core.schemas import Theorem
from leantrain.prover.backend import BackendError, Outcome, SessionCrashed, State

INSTALL_HINT = "install it with: pip install 'leantrain-prover[leandojo]'  (or: uv add 'leantrain-prover[leandojo]')"


def import_lean_dojo() -> Any:
    """The ``lean_dojo`` module; :class:`MissingDependencyError` with the install command."""
    try:
        return importlib.import_module("lean_dojo")
    except ImportError as e:
        raise MissingDependencyError(
            f"the leandojo backend needs lean-dojo>=4.20, which is not installed ({e.msg})",
            hint=INSTALL_HINT + "; or use --backend replay, which needs no Lean",
        ) from None


def check_lean_toolchain() -> None:
    """:class:`MissingDependencyError` unless Lean's build tool ``lake`` is on ``PATH``."""
    if shutil.which("lake") is None:
        raise MissingDependencyError(
            "the leandojo backend needs a Lean 4 toolchain, and 'lake' is not on PATH",
            hint="install elan (https://github.com/leanprover/elan), which brings lean and lake; "
            "or use --backend replay, which needs no Lean",
        )


class LeanDojoSession:
    """One ``Dojo`` context: entered on creation, exited by :meth:`close`."""

    def __init__(self, lean_dojo: Any, theorem: Theorem, tactic_timeout: float) -> None:
        self._ld = lean_dojo
        entry = lean_dojo.Theorem(
            lean_dojo.LeanGitRepo(theorem.url, theorem.commit),
            Path(theorem.file_path),
            theorem.full_name,
        )
        self._context = lean_dojo.Dojo(entry, timeout=max(1, math.ceil(tactic_timeout)))
        try:
            self._dojo, init = self._context.__enter__()
        except Exception as e:  # DojoInitError, or LeanDojo failing to set the theorem up
            # one theorem LeanDojo cannot open must not end the run over all the others
            raise BackendError(
                f"{theorem.full_name}: LeanDojo cannot start the theorem: "
                f"{type(e).__name__}: {e}".replace("\n", " "),
                hint="is the repository traced by lean-dojo (leantrain export trace)?",
            ) from None
        self._open = True
        self._stuck = ""
        self.initial_state = self._state(init)

    def _state(self, tactic_state: Any) -> State:
        return State(tactic_state.pp, tactic_state)

    def run(self, state: State, tactic: str) -> Outcome:
        """``dojo.run_tac`` on the ``TacticState`` behind ``state``."""
        if self._stuck:
            raise SessionCrashed(self._stuck)
        ld = self._ld
        try:
            result = self._dojo.run_tac(state.handle, tactic)
        except ld.DojoTacticTimeoutError:
            self._stuck = "Lean is still running a timed-out tactic; the session ended"
            return Outcome("timeout", message="the tactic ran past the tactic timeout")
        except ld.DojoCrashError as e:
            self._stuck = f"the Lean process crashed: {e}"
            raise SessionCrashed(self._stuck) from None
        if isinstance(result, ld.TacticState):
            return Outcome("state", self._state(result))
        if isinstance(result, ld.ProofFinished):
            return Outcome("proved", message=result.message or "")
        if isinstance(result, ld.ProofGivenUp):
            return Outcome("error", message="the proof gave up (sorry)")
        if isinstance(result, ld.LeanError):
            return Outcome("error", message=str(result.error))
        return Outcome("error", message=f"unexpected LeanDojo result {type(result).__name__}")

    def close(self) -> None:
        """Exit the ``Dojo`` context (ends the Lean process); a second call does nothing."""
        if self._open:
            self._open = False
            self._context.__exit__(None, None, None)


class LeanDojoBackend:
    """Sessions on Lean through LeanDojo; ``tactic_timeout`` seconds per tactic.

    ``lean_dojo`` is the module to use (tests pass a fake with LeanDojo's API); by default the
    installed ``lean_dojo`` is imported and ``lake`` must be on ``PATH``. Both are checked here,
    so constructing the backend is the early check.
    """

    name = "leandojo"
    metric = "proof rate"

    def __init__(self, tactic_timeout: float = 60.0, *, lean_dojo: Any = None) -> None:
        if lean_dojo is None:
            lean_dojo = import_lean_dojo()
            check_lean_toolchain()
        self.lean_dojo = lean_dojo
        self.tactic_timeout = tactic_timeout

    def start(self, theorem: Theorem) -> LeanDojoSession:
        """Enter a ``Dojo`` on ``theorem``; :class:`BackendError` if LeanDojo cannot."""
        return LeanDojoSession(self.lean_dojo, theorem, self.tactic_timeout)
