"""The ``pantograph`` backend: PyPantograph's ``Server`` (stanford-centaur/PyPantograph), as
LeanDojo-v2's provers use it.

A theorem starts with ``server.goal_start("∀ binders, type")`` (or, when its header opens
namespaces, ``server.load_sorry("STATEMENT := by sorry")``), tactics run with
``server.goal_tactic``, and a whole theorem is checked with
``server.check_compile`` (the code, then ``#print axioms NAME``). One server per header: its
``import`` lines become ``Server(imports=…)``, the rest of the header is put before the code.
The server's ``timeout`` is set to the start-up timeout for loading and checking and to the
tactic timeout for tactics. A server that times out or fails is restarted; a state of the old
server is first rebuilt by replaying its tactics.

Goal states with no goals count as ``proved`` here, as Pantograph reports them — and that is
not a proof (PyPantograph #106: with collected sorries, ``exact?`` empties any goal). The
whole-theorem check of :mod:`leantrain.lean.soundness` decides.

PyPantograph is not on the package registry and installs only from git (it builds a Lean
executable): without it the backend refuses in one line with the install command.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leantrain.core.errors import ConfigError, MissingDependencyError
from leantrain.core.lean_text import contains_sorry
from leantrain.lean.contract import (
    BackendError,
    CheckResult,
    LeanTheorem,
    Outcome,
    SessionCrashed,
    State,
    split_header,
)
from leantrain.lean.soundness import result_from_messages

INSTALL_HINT = (
    "install PyPantograph from git: pip install "
    "'pantograph @ git+https://github.com/stanford-centaur/PyPantograph' (needs elan; "
    "see its README), or use --backend repl"
)


def import_pantograph() -> Any:
    """The ``pantograph.server`` module; :class:`MissingDependencyError` with the install line."""
    try:
        return importlib.import_module("pantograph.server")
    except ImportError as e:
        raise MissingDependencyError(
            f"the pantograph backend needs PyPantograph, which is not installed ({e.msg})",
            hint=INSTALL_HINT,
        ) from None


@dataclass(frozen=True)
class _Handle:
    generation: int
    goal_state: Any
    path: tuple[str, ...]


def _message_dict(m: Any) -> dict[str, Any]:
    severity = getattr(m, "severity", "error")
    severity = getattr(severity, "name", str(severity)).lower()
    # PyPantograph's Severity is INFORMATION / WARNING / ERROR; the REPL's "info"
    severity = {"information": "info"}.get(severity, severity)
    return {"severity": severity, "data": str(getattr(m, "data", m))}


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


class PantographBackend:
    """Sessions and checks on PyPantograph servers in ``lean_project``.

    ``pantograph`` is the ``pantograph.server`` module to use (tests pass a fake with its
    ``Server``, ``TacticFailure`` and ``ServerError``); by default the installed one."""

    name = "pantograph"
    metric = "proof rate"

    def __init__(
        self,
        lean_project: str | Path | None = None,
        *,
        tactic_timeout: float = 60.0,
        start_timeout: float = 600.0,
        pantograph: Any = None,
    ) -> None:
        if lean_project is not None and not Path(lean_project).is_dir():
            raise ConfigError(
                f"--lean-project: {lean_project} is not a directory",
                hint="give the (built) Lean project Pantograph runs in",
            )
        self.pg = pantograph if pantograph is not None else import_pantograph()
        self.lean_project = None if lean_project is None else str(lean_project)
        self.tactic_timeout = float(tactic_timeout)
        self.start_timeout = float(start_timeout)
        self.generation = 0
        self.restarts = 0
        self._server: Any = None
        self._imports: tuple[str, ...] | None = None
        self._sig_goal_id: bool | None = None

    def server(self, imports: list[str]) -> Any:
        """The server for ``imports`` (a new one when they change)."""
        key = tuple(imports) or ("Init",)
        if self._server is None or self._imports != key:
            self.discard()
            self._server = self.pg.Server(
                imports=list(key), project_path=self.lean_project, timeout=self.start_timeout
            )
            self._imports = key
        return self._server

    def discard(self) -> None:
        """Drop the server (its goal states become stale)."""
        if self._server is not None:
            close = getattr(self._server, "_close", None)
            if callable(close):
                with contextlib.suppress(Exception):  # a server that already died
                    close()
            self._server = None
            self.generation += 1

    def _fault(self, e: Exception) -> Outcome:
        self.discard()
        self.restarts += 1
        text = _one_line(e)
        if "timeout" in text.lower() or "timed out" in text.lower():
            return Outcome("timeout", message=f"Pantograph: {text}; the server was restarted")
        return Outcome("error", message=f"Pantograph fault: {text}; the server was restarted")

    def load(self, theorem: LeanTheorem) -> Any:
        """The initial goal state of ``theorem`` in the current server.

        A header of imports only: ``goal_start("∀ binders, type")``, as LeanDojo-v2 starts a
        theorem. A header with more (``open``, ``set_option``) needs the file's context:
        ``load_sorry("… STATEMENT := by sorry")`` — the sorry-collecting path of PyPantograph
        #106, which the whole-theorem check guards."""
        imports, preamble = split_header(theorem.header)
        what = f"{theorem.name}: Pantograph cannot start the theorem"
        try:
            server = self.server(imports)
            server.timeout = self.start_timeout
            if not preamble:
                return server.goal_start(theorem.as_forall())
            source = f"{preamble}\n\n{theorem.statement} := by sorry"
            targets = server.load_sorry(source)
        except (self.pg.ServerError, self.pg.TacticFailure, RuntimeError, OSError, ValueError) as e:
            self.discard()
            raise BackendError(f"{what}: {_one_line(e)[:300]}") from None
        states = [t.goal_state for t in targets if getattr(t, "goal_state", None) is not None]
        if len(states) != 1:
            raise BackendError(f"{what}: {len(states)} goal states for its sorry")
        return states[0]

    def tactic(self, goal_state: Any, tactic: str) -> Any:
        """``goal_tactic`` on the first goal (old and new PyPantograph signatures)."""
        server = self._server
        if self._sig_goal_id is None:
            self._sig_goal_id = "goal_id" in inspect.signature(server.goal_tactic).parameters
        server.timeout = self.tactic_timeout
        if self._sig_goal_id:
            return server.goal_tactic(goal_state, goal_id=0, tactic=tactic)
        return server.goal_tactic(goal_state, tactic=tactic)

    def start(self, theorem: LeanTheorem) -> PantographSession:
        """A session on ``theorem``; :class:`BackendError` if Pantograph cannot set it up."""
        return PantographSession(self, theorem)

    def check(self, theorem: LeanTheorem, proof: str) -> CheckResult:
        """``check_compile`` of the declaration and ``#print axioms NAME``."""
        imports, preamble = split_header(theorem.header)
        code = "\n\n".join(
            p for p in (preamble, theorem.code(proof), f"#print axioms {theorem.name}") if p
        )
        try:
            server = self.server(imports)
            server.timeout = self.start_timeout
            units = server.check_compile(code)
        except (self.pg.ServerError, self.pg.TacticFailure, RuntimeError, OSError) as e:
            outcome = self._fault(e)
            if outcome.kind == "timeout":
                return CheckResult("timeout", detail=outcome.message)
            return CheckResult("error", detail=outcome.message)
        messages = [_message_dict(m) for u in units for m in (getattr(u, "messages", None) or [])]
        return result_from_messages(messages, 0, theorem.name)

    def close(self) -> None:
        """End the server; a second call does nothing."""
        self.discard()


class PantographSession:
    """One theorem on a :class:`PantographBackend`."""

    def __init__(self, backend: PantographBackend, theorem: LeanTheorem) -> None:
        self.backend = backend
        self.theorem = theorem
        gs = backend.load(theorem)
        self.initial_state = State(self._pp(gs), _Handle(backend.generation, gs, ()))

    @staticmethod
    def _pp(goal_state: Any) -> str:
        return "\n\n".join(str(g) for g in goal_state.goals)

    def _goal_state(self, handle: _Handle) -> Any:
        b = self.backend
        if handle.generation == b.generation:
            return handle.goal_state
        try:
            gs = b.load(self.theorem)
            for tactic in handle.path:
                gs = b.tactic(gs, tactic)
        except (BackendError, b.pg.ServerError, b.pg.TacticFailure) as e:
            b.discard()
            raise SessionCrashed(
                f"{self.theorem.name}: after a Pantograph restart the path no longer replays "
                f"({_one_line(e)[:200]})"
            ) from None
        return gs

    def run(self, state: State, tactic: str) -> Outcome:
        """Run ``tactic`` on the first goal of ``state``."""
        if contains_sorry(tactic):
            return Outcome("error", message="sorry/admit is never sent to Lean")
        handle = state.handle
        if not isinstance(handle, _Handle):
            raise TypeError("the state does not come from a Pantograph session")
        b = self.backend
        gs = self._goal_state(handle)
        try:
            new = b.tactic(gs, tactic)
        except b.pg.TacticFailure as e:
            return Outcome("error", message=_one_line(e)[:500])
        except (b.pg.ServerError, RuntimeError, OSError) as e:
            return b._fault(e)
        if not new.goals:
            return Outcome("proved")
        return Outcome(
            "state", State(self._pp(new), _Handle(b.generation, new, (*handle.path, tactic)))
        )

    def close(self) -> None:
        """Nothing to release: the server serves the next theorem."""
