"""The ``repl`` backend: the Lean REPL (leanprover-community/repl) over a process's pipes.

Any Lean version the REPL has a tag for works: the process is whatever ``repl_command``
starts (default ``lake env repl``, run in ``lean_project``). A theorem's header (imports,
``open``…) is elaborated once per process, with the start-up timeout, and theorems reuse that
environment (``"env": n``). A session starts with ``STATEMENT := by sorry``: the REPL answers
with the sorry's proof state, and tactics run on proof states (``{"tactic", "proofState"}``).

Crash-proof: a command that gets no answer within its timeout, a process that dies, an answer
that is not JSON or is cut off — the process is killed with its process group and the call
answers ``timeout`` or ``error`` saying what happened. The next call starts a new process and,
for a state of the old one, first replays the tactics that led to it (states carry their
path), so the search goes on. A whole-theorem check runs the declaration in the header's
environment and then ``#print axioms NAME`` in the environment it made.
"""

from __future__ import annotations

from collections.abc import Sequence
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
)
from leantrain.lean.repl_process import (
    ReplFailure,
    ReplProcess,
    check_executable,
    parse_command,
)
from leantrain.lean.soundness import result_from_messages

DEFAULT_REPL_COMMAND = "lake env repl"


@dataclass(frozen=True)
class _Handle:
    generation: int  # which process the proof state number belongs to
    proof_state: int
    path: tuple[str, ...]  # the tactics from the theorem's start


def _first_error(answer: dict[str, Any]) -> str | None:
    for m in answer.get("messages") or []:
        if isinstance(m, dict) and m.get("severity") == "error":
            return str(m.get("data", ""))
    return None


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


class ReplBackend:
    """Sessions and whole-theorem checks on Lean REPL processes.

    ``repl_command``: what starts the REPL (string or argv); ``lean_project``: the directory it
    runs in. ``start_timeout``: seconds for the header (imports) and for setting a theorem up;
    ``tactic_timeout``: per tactic; ``check_timeout``: per whole-theorem check (default: the
    start-up timeout). ``memory_limit_mb`` caps each process (``RLIMIT_AS``). The executable
    is checked here, so constructing the backend is the early check.
    """

    name = "repl"
    metric = "proof rate"

    def __init__(
        self,
        repl_command: str | Sequence[str] = DEFAULT_REPL_COMMAND,
        lean_project: str | Path | None = None,
        *,
        tactic_timeout: float = 60.0,
        start_timeout: float = 600.0,
        check_timeout: float | None = None,
        memory_limit_mb: int | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.argv = parse_command(repl_command)
        if lean_project is not None and not Path(lean_project).is_dir():
            raise ConfigError(
                f"--lean-project: {lean_project} is not a directory",
                hint="give the Lean project the REPL runs in",
            )
        self.cwd = None if lean_project is None else str(lean_project)
        check_executable(self.argv, self.cwd)
        for flag, value in (("tactic_timeout", tactic_timeout), ("start_timeout", start_timeout)):
            if not value > 0:
                raise ConfigError(f"--{flag.replace('_', '-')} must be > 0 (got {value})")
        self.tactic_timeout = float(tactic_timeout)
        self.start_timeout = float(start_timeout)
        self.check_timeout = float(check_timeout if check_timeout is not None else start_timeout)
        self.memory_limit_mb = memory_limit_mb
        self.env = env
        self.generation = 0
        self.restarts = 0
        self._proc: ReplProcess | None = None
        self._headers: dict[str, int | None] = {}

    # -- the process ----------------------------------------------------------------------

    def _process(self) -> ReplProcess:
        if self._proc is not None and not self._proc.alive:
            self._discard()
            self.restarts += 1
        if self._proc is None:
            self._proc = ReplProcess(
                self.argv, cwd=self.cwd, memory_limit_mb=self.memory_limit_mb, env=self.env
            )
        return self._proc

    def _discard(self) -> None:
        """Forget the process (killed with its group); its proof states become stale."""
        if self._proc is not None:
            self._proc.kill()
        self._proc = None
        self._headers = {}
        self.generation += 1

    def send(self, command: dict[str, Any], timeout: float) -> dict[str, Any]:
        """One command to the REPL (started if needed); :class:`ReplFailure` on a fault, after
        which the next command goes to a new process."""
        proc = self._process()
        try:
            return proc.request(command, timeout)
        except ReplFailure:
            self._discard()
            self.restarts += 1
            raise

    def header_env(self, header: str) -> int | None:
        """The environment of ``header`` in the current process (elaborated once); ``None``
        for an empty header. :class:`BackendError` when Lean refuses the header."""
        header = header.strip()
        if not header:
            return None
        self._process()
        if header not in self._headers:
            answer = self.send({"cmd": header}, self.start_timeout)
            error = _first_error(answer)
            if error is not None or not isinstance(answer.get("env"), int):
                raise BackendError(
                    f"the header does not elaborate: {_one_line(error or str(answer))[:300]}",
                    hint="check the header's imports against --lean-project",
                )
            self._headers[header] = answer["env"]
        return self._headers[header]

    def _with_env(self, command: dict[str, Any], env: int | None) -> dict[str, Any]:
        return command if env is None else {**command, "env": env}

    # -- the contract ---------------------------------------------------------------------

    def start(self, theorem: LeanTheorem) -> ReplSession:
        """A session on ``theorem``; :class:`BackendError` if the REPL cannot set it up."""
        return ReplSession(self, theorem)

    def open_theorem(self, theorem: LeanTheorem) -> tuple[int, str]:
        """``(proof state, goal text)`` of ``theorem`` in the current process."""
        what = f"{theorem.name}: the REPL cannot start the theorem"
        try:
            env = self.header_env(theorem.header)
            answer = self.send(
                self._with_env({"cmd": f"{theorem.statement} := by sorry"}, env),
                self.start_timeout,
            )
        except ReplFailure as e:
            raise BackendError(f"{what}: {e.message}") from None
        error = _first_error(answer)
        sorries = answer.get("sorries") or []
        if error is not None or len(sorries) != 1 or "proofState" not in sorries[0]:
            detail = error if error is not None else f"{len(sorries)} proof states"
            raise BackendError(f"{what}: {_one_line(detail)[:300]}")
        return int(sorries[0]["proofState"]), str(sorries[0].get("goal", ""))

    def check(self, theorem: LeanTheorem, proof: str) -> CheckResult:
        """Check ``theorem`` with ``proof`` in the header's environment, then
        ``#print axioms NAME`` in the environment that made."""
        try:
            env = self.header_env(theorem.header)
            answer = self.send(
                self._with_env({"cmd": theorem.code(proof)}, env), self.check_timeout
            )
            if "message" in answer and "env" not in answer:
                return CheckResult("error", detail=f"REPL: {_one_line(answer['message'])}")
            messages = list(answer.get("messages") or [])
            new_env = answer.get("env")
            if isinstance(new_env, int) and _first_error(answer) is None:
                report = self.send(
                    {"cmd": f"#print axioms {theorem.name}", "env": new_env}, self.check_timeout
                )
                messages += report.get("messages") or []
        except ReplFailure as e:
            return CheckResult("timeout" if e.kind == "timeout" else "error", detail=e.message)
        except (BackendError, MissingDependencyError) as e:
            return CheckResult("error", detail=e.one_line())
        return result_from_messages(messages, len(answer.get("sorries") or []), theorem.name)

    def close(self) -> None:
        """Kill the REPL process (and its group); a second call does nothing."""
        if self._proc is not None:
            self._discard()


class ReplSession:
    """One theorem on a :class:`ReplBackend`; states carry REPL proof states and their path."""

    def __init__(self, backend: ReplBackend, theorem: LeanTheorem) -> None:
        self.backend = backend
        self.theorem = theorem
        ps, goal = backend.open_theorem(theorem)
        self._revived: dict[tuple[str, ...], int] = {}
        self._revived_generation = backend.generation
        self.initial_state = State(goal, _Handle(backend.generation, ps, ()))

    def _proof_state(self, handle: _Handle) -> int:
        """``handle``'s proof state in the current process: replayed from the theorem's start
        when the process that made it is gone."""
        b = self.backend
        if handle.generation == b.generation:
            return handle.proof_state
        if self._revived_generation != b.generation:
            self._revived, self._revived_generation = {}, b.generation
        if handle.path in self._revived:
            return self._revived[handle.path]
        try:
            ps, _ = b.open_theorem(self.theorem)
            for i, tactic in enumerate(handle.path):
                answer = b.send({"tactic": tactic, "proofState": ps}, b.tactic_timeout)
                if "proofState" not in answer or _first_error(answer) is not None:
                    raise SessionCrashed(
                        f"{self.theorem.name}: after a REPL restart, tactic {i + 1} of the "
                        f"path ({tactic!r}) no longer replays"
                    )
                ps = int(answer["proofState"])
                self._revived[handle.path[: i + 1]] = ps
        except ReplFailure as e:
            raise SessionCrashed(
                f"{self.theorem.name}: the REPL failed again while replaying: {e.message}"
            ) from None
        except (BackendError, MissingDependencyError) as e:
            raise SessionCrashed(e.one_line()) from None
        return ps

    def run(self, state: State, tactic: str) -> Outcome:
        """Run ``tactic`` on ``state``; a REPL fault answers ``timeout``/``error`` and the next
        call works on a new process."""
        if contains_sorry(tactic):
            return Outcome("error", message="sorry/admit is never sent to Lean")
        handle = state.handle
        if not isinstance(handle, _Handle):
            raise TypeError("the state does not come from a REPL session")
        b = self.backend
        ps = self._proof_state(handle)
        try:
            answer = b.send({"tactic": tactic, "proofState": ps}, b.tactic_timeout)
        except ReplFailure as e:
            if e.kind == "timeout":
                return Outcome("timeout", message=f"the tactic {e.message}; the REPL was restarted")
            return Outcome("error", message=f"REPL fault: {e.message}; the REPL was restarted")
        return self._outcome(answer, handle, tactic)

    def _outcome(self, answer: dict[str, Any], handle: _Handle, tactic: str) -> Outcome:
        if "message" in answer and "proofState" not in answer:
            return Outcome("error", message=_one_line(answer["message"]))
        error = _first_error(answer)
        if error is not None:
            return Outcome("error", message=_one_line(error))
        if answer.get("sorries"):
            return Outcome("error", message="the tactic left a sorry")
        goals = answer.get("goals")
        status = answer.get("proofStatus")
        if not isinstance(goals, list) or not isinstance(answer.get("proofState"), int):
            return Outcome("error", message=f"unexpected REPL answer: {str(answer)[:200]}")
        if not goals:
            if status in (None, "Completed"):
                return Outcome("proved")
            # e.g. "Incomplete: contains sorry": no goals, but no proof either
            return Outcome("error", message=f"REPL: {status}")
        new = _Handle(self.backend.generation, answer["proofState"], (*handle.path, tactic))
        return Outcome("state", State("\n\n".join(str(g) for g in goals), new))

    def close(self) -> None:
        """Nothing to release: the process belongs to the backend and serves the next theorem."""
