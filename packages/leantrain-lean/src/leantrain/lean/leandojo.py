"""The ``leandojo`` backend: Lean 4 through LeanDojo's ``Dojo`` (lean-dojo >= 4.20).

``Dojo(theorem)`` is entered once per theorem and gives the initial ``TacticState``;
``dojo.run_tac(state, tactic)`` answers with a ``TacticState``, ``ProofFinished``,
``LeanError`` or ``ProofGivenUp``, and raises ``DojoTacticTimeoutError`` when Lean does not
answer in time and ``DojoCrashError`` when the Lean process died. LeanDojo needs a Lean 4
toolchain (``lake``) and a repository it has traced; without lean-dojo installed, or without
``lake`` on ``PATH``, the backend refuses to start in one line that says what to install.

What this backend does beyond a bare ``Dojo``:

- **A tactic timeout does not end the theorem.** Lean is still busy with the timed-out
  tactic, so the Dojo is left (its process killed) and the next tactic enters a new one and
  replays the tactics that led to the state it is given (states carry their path); a crash
  is handled the same way. Only when the replay itself fails does the session end.
- **Its own start-up timeout** (``start_timeout``, default 600 s, as ReProver gives):
  ``Dojo(…, timeout=start_timeout)`` elaborates the file up to the theorem, then the Dojo's
  timeout is set to ``tactic_timeout`` for the tactics.
- **One ``LeanGitRepo`` per (url, commit)**, built inside the theorem's ``try`` (it may call
  GitHub's API); :meth:`LeanDojoBackend.check_traced` says, before any model loads, which
  repositories LeanDojo has not traced, naming the command that traces them.
- **Any exception of LeanDojo** while starting a theorem becomes a :class:`BackendError` naming
  its class, so the run goes on with the next theorem.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leantrain.core.errors import ConfigError, MissingDependencyError
from leantrain.core.lean_text import contains_sorry
from leantrain.lean.contract import (
    BackendError,
    CheckResult,
    Outcome,
    SessionCrashed,
    State,
)

INSTALL_HINT = (
    "install it with: pip install 'leantrain-lean[leandojo]' (for the prover: pip install "
    "'leantrain-prover[leandojo]'; or: uv add 'leantrain-lean[leandojo]')"
)
TRACE_COMMAND = "leantrain export trace {url} {commit} --out DIR"
"""The command that traces a repository with LeanDojo (leantrain-export)."""


def import_lean_dojo() -> Any:
    """The ``lean_dojo`` module; :class:`MissingDependencyError` with the install command."""
    try:
        return importlib.import_module("lean_dojo")
    except ImportError as e:
        raise MissingDependencyError(
            f"the leandojo backend needs lean-dojo>=4.20, which is not installed ({e.msg})",
            hint=INSTALL_HINT + "; or use --backend repl (the Lean REPL) or replay (no Lean)",
        ) from None


def check_lean_toolchain() -> None:
    """:class:`MissingDependencyError` unless Lean's build tool ``lake`` is on ``PATH``."""
    if shutil.which("lake") is None:
        raise MissingDependencyError(
            "the leandojo backend needs a Lean 4 toolchain, and 'lake' is not on PATH",
            hint="install elan (https://github.com/leanprover/elan), which brings lean and lake; "
            "or use --backend replay, which needs no Lean",
        )


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


@dataclass(frozen=True)
class _Handle:
    generation: int  # which Dojo the TacticState belongs to
    tactic_state: Any
    path: tuple[str, ...]  # the tactics from the theorem's start


class LeanDojoBackend:
    """Sessions on Lean through LeanDojo (see the module docstring).

    ``tactic_timeout``: seconds per tactic; ``start_timeout``: seconds to enter a Dojo
    (elaborating the file up to the theorem). ``lean_dojo`` is the module to use (tests pass a
    fake with LeanDojo's API); by default the installed ``lean_dojo`` is imported and ``lake``
    must be on ``PATH``. Both are checked here, so constructing the backend is the early check.
    Theorems are LeanDojo theorem records: anything with ``url``, ``commit``, ``file_path`` and
    ``full_name`` (a :class:`leantrain.core.schemas.Theorem`).
    """

    name = "leandojo"
    metric = "proof rate"

    def __init__(
        self,
        tactic_timeout: float = 60.0,
        start_timeout: float = 600.0,
        *,
        lean_dojo: Any = None,
    ) -> None:
        if lean_dojo is None:
            lean_dojo = import_lean_dojo()
            check_lean_toolchain()
        for flag, value in (("tactic_timeout", tactic_timeout), ("start_timeout", start_timeout)):
            if not value > 0:
                raise ConfigError(f"--{flag.replace('_', '-')} must be > 0 (got {value})")
        self.lean_dojo = lean_dojo
        self.tactic_timeout = float(tactic_timeout)
        self.start_timeout = float(start_timeout)
        self._repos: dict[tuple[str, str], Any] = {}
        self.restarts = 0

    def repo(self, url: str, commit: str) -> Any:
        """The one ``LeanGitRepo`` of ``(url, commit)`` (LeanDojo may ask GitHub for it)."""
        key = (url, commit)
        if key not in self._repos:
            self._repos[key] = self.lean_dojo.LeanGitRepo(url, commit)
        return self._repos[key]

    def check_traced(self, theorems: Iterable[Any]) -> None:
        """:class:`ConfigError` (one line naming the command that traces it) for the first
        repository of ``theorems`` that LeanDojo's cache does not hold — before any model
        loads, instead of tracing it (hours) inside the first theorem. Without
        ``is_available_in_cache`` in the module (older lean-dojo) nothing is checked."""
        available = getattr(self.lean_dojo, "is_available_in_cache", None)
        if not callable(available):
            return
        seen: set[tuple[str, str]] = set()
        for t in theorems:
            key = (str(t.url), str(t.commit))
            if key in seen:
                continue
            seen.add(key)
            try:
                repo = self.repo(*key)
                traced = bool(available(repo))
            except Exception as e:  # LeanGitRepo asks GitHub; offline or rate-limited
                raise ConfigError(
                    f"LeanDojo cannot open the repository {key[0]}@{key[1]}: {_one_line(e)}",
                    hint="check the URL, the commit and the network (or set GITHUB_ACCESS_TOKEN)",
                ) from None
            if not traced:
                raise ConfigError(
                    f"LeanDojo has not traced {key[0]}@{key[1]} (its cache holds no trace of it)",
                    hint="trace it first: " + TRACE_COMMAND.format(url=key[0], commit=key[1]),
                )

    def open(self, theorem: Any) -> tuple[Any, Any, Any]:
        """Enter a new ``Dojo`` on ``theorem``: ``(context, dojo, initial TacticState)``;
        :class:`BackendError` naming LeanDojo's exception when it cannot."""
        ld = self.lean_dojo
        try:
            entry = ld.Theorem(
                self.repo(str(theorem.url), str(theorem.commit)),
                Path(theorem.file_path),
                theorem.full_name,
            )
            context = ld.Dojo(entry, timeout=max(1, math.ceil(self.start_timeout)))
            dojo, init = context.__enter__()
        except Exception as e:  # DojoInitError, an assert, GitHub: this theorem only
            raise BackendError(
                f"{theorem.full_name}: LeanDojo cannot start the theorem: {_one_line(e)}",
                hint="is the repository traced by lean-dojo (leantrain export trace)?",
            ) from None
        tactic_timeout = max(1, math.ceil(self.tactic_timeout))
        dojo.timeout = tactic_timeout  # the start-up is done: tactics get their own timeout
        proc = getattr(dojo, "proc", None)
        if proc is not None and hasattr(proc, "timeout"):
            proc.timeout = tactic_timeout  # pexpect reads with the spawn's timeout
        return context, dojo, init

    def start(self, theorem: Any) -> LeanDojoSession:
        """Enter a ``Dojo`` on ``theorem``; :class:`BackendError` if LeanDojo cannot."""
        return LeanDojoSession(self, theorem)

    def check(self, theorem: Any, proof: str) -> CheckResult:
        """Re-check ``proof`` (tactics, one per line; :func:`split_tactics`) in a new ``Dojo``:
        the tactics run in order from the theorem's start and must finish it. LeanDojo prints no axiom report, so
        ``axioms`` is ``()`` and ``detail`` says so; ``native_decide`` is refused by name
        (it would add ``Lean.ofReduceBool`` unseen)."""
        if "native_decide" in proof or "ofReduceBool" in proof:
            return CheckResult(
                "ok",
                errors=("native_decide: LeanDojo cannot list the axioms it adds",),
                axioms=(),
            )
        try:
            context, dojo, state = self.open(theorem)
        except BackendError as e:
            return CheckResult("error", detail=e.one_line())
        ld = self.lean_dojo
        try:
            tactics = split_tactics(proof)
            for i, tactic in enumerate(tactics):
                result = dojo.run_tac(state, tactic)
                if isinstance(result, ld.ProofFinished):
                    if i != len(tactics) - 1:
                        return CheckResult("ok", errors=("tactics after the proof finished",))
                    return CheckResult("ok", axioms=(), detail="LeanDojo lists no axioms")
                if isinstance(result, ld.ProofGivenUp):
                    return CheckResult("ok", sorries=1, axioms=())
                if not isinstance(result, ld.TacticState):
                    return CheckResult("ok", errors=(str(getattr(result, "error", result)),))
                state = result
            return CheckResult("ok", errors=("goals remain after the last tactic",))
        except ld.DojoTacticTimeoutError:
            return CheckResult("timeout", detail="a tactic of the proof timed out in LeanDojo")
        except Exception as e:
            return CheckResult("error", detail=f"LeanDojo failed: {_one_line(e)}")
        finally:
            _exit(context)

    def close(self) -> None:
        """Nothing held between theorems (each session holds its own Dojo)."""


def split_tactics(proof: str) -> list[str]:
    """The tactics of a proof text, one per line; an indented line continues the tactic above
    it (a multi-line tactic of a search's proof)."""
    tactics: list[str] = []
    for line in proof.split("\n"):
        if not line.strip():
            continue
        if line[:1].isspace() and tactics:
            tactics[-1] += "\n" + line
        else:
            tactics.append(line)
    return tactics


def _exit(context: Any) -> None:
    with contextlib.suppress(Exception):  # the process may be gone already
        context.__exit__(None, None, None)


class LeanDojoSession:
    """One theorem on LeanDojo: a ``Dojo`` context, replaced (and the path replayed) after a
    tactic timeout or a crash."""

    def __init__(self, backend: LeanDojoBackend, theorem: Any) -> None:
        self.backend = backend
        self.theorem = theorem
        self._ld = backend.lean_dojo
        self.generation = 0
        self._context, self._dojo, init = backend.open(theorem)
        self._open = True
        self._revived: dict[tuple[str, ...], Any] = {}
        self.initial_state = State(init.pp, _Handle(0, init, ()))

    def _leave(self) -> None:
        if self._open:
            self._open = False
            _exit(self._context)

    def _restart(self) -> Any:
        """A new Dojo after a timeout or a crash; its initial ``TacticState``."""
        self._leave()
        self.generation += 1
        self.backend.restarts += 1
        try:
            self._context, self._dojo, init = self.backend.open(self.theorem)
        except BackendError as e:
            raise SessionCrashed(f"LeanDojo could not be restarted: {e.one_line()}") from None
        self._open = True
        return init

    def _tactic_state(self, handle: _Handle) -> Any:
        """``handle``'s ``TacticState`` in the current Dojo, replayed after a restart."""
        if handle.generation == self.generation and self._open:
            return handle.tactic_state
        if not self._open:
            self._revived = {(): self._restart()}
        state = self._revived[()]
        ld = self._ld
        for i, tactic in enumerate(handle.path):
            prefix = handle.path[: i + 1]
            if prefix in self._revived:
                state = self._revived[prefix]
                continue
            try:
                result = self._dojo.run_tac(state, tactic)
            except Exception as e:
                self._leave()
                raise SessionCrashed(
                    f"{self.theorem.full_name}: LeanDojo failed again while replaying: "
                    f"{_one_line(e)}"
                ) from None
            if not isinstance(result, ld.TacticState):
                raise SessionCrashed(
                    f"{self.theorem.full_name}: after a LeanDojo restart, tactic {i + 1} of the "
                    f"path ({tactic!r}) no longer replays"
                )
            state = self._revived[prefix] = result
        return state

    def run(self, state: State, tactic: str) -> Outcome:
        """``dojo.run_tac`` on the ``TacticState`` behind ``state``; a timeout or a crash
        leaves the Dojo and the next call works on a new one."""
        if contains_sorry(tactic):
            return Outcome("error", message="sorry/admit is never sent to Lean")
        handle = state.handle
        if not isinstance(handle, _Handle):
            raise TypeError("the state does not come from a LeanDojo session")
        ld = self._ld
        tactic_state = self._tactic_state(handle)
        try:
            result = self._dojo.run_tac(tactic_state, tactic)
        except ld.DojoTacticTimeoutError:
            self._leave()  # Lean is still busy with it: the next tactic gets a new Dojo
            return Outcome("timeout", message="the tactic ran past the tactic timeout; restarting")
        except ld.DojoCrashError as e:
            self._leave()
            return Outcome("error", message=f"the Lean process crashed ({e}); restarting")
        if isinstance(result, ld.TacticState):
            new = _Handle(self.generation, result, (*handle.path, tactic))
            return Outcome("state", State(result.pp, new))
        if isinstance(result, ld.ProofFinished):
            return Outcome("proved", message=result.message or "")
        if isinstance(result, ld.ProofGivenUp):
            return Outcome("error", message="the proof gave up (sorry)")
        if isinstance(result, ld.LeanError):
            return Outcome("error", message=str(result.error))
        return Outcome("error", message=f"unexpected LeanDojo result {type(result).__name__}")

    def close(self) -> None:
        """Exit the ``Dojo`` context (ends the Lean process); a second call does nothing."""
        self._leave()
