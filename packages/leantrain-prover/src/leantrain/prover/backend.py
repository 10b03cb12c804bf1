"""The protocol between the proof search and a Lean backend.

The contract is leantrain-lean's (:mod:`leantrain.lean.contract`): :class:`State`,
:class:`Outcome`, :class:`BackendError`, :class:`SessionCrashed` and :data:`NO_GOALS` are
re-exported from there, so one set of names serves the search, the prover and every Lean
reward. A :class:`Backend` here starts a *theorem record* of an export (or of a benchmark file,
see :mod:`leantrain.prover.theorems`) and returns a :class:`Session`; the session holds the
initial :class:`State` and runs one tactic on a state at a time, answering with an
:class:`Outcome`: a new state, the proof finished, an error, or a timeout. The search never
sees the backend's own objects: a state carries them in ``handle``, and states are compared by
their pretty-printed text alone.

The backends (:func:`leantrain.prover.prover.make_backend`): ``replay`` (offline, from the
traced proofs of an export), ``repl`` and ``pantograph`` (leantrain-lean's, through
:class:`LeanContractBackend`, which reads each theorem's statement), ``leandojo``
(:class:`leantrain.lean.LeanDojoBackend`, on the records themselves).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from leantrain.core.errors import ConfigError
from leantrain.core.schemas import Theorem
from leantrain.lean.contract import (
    NO_GOALS,
    BackendError,
    CheckResult,
    LeanTheorem,
    Outcome,
    Session,
    SessionCrashed,
    State,
)

__all__ = [
    "NO_GOALS",
    "Backend",
    "BackendError",
    "LeanContractBackend",
    "Outcome",
    "Session",
    "SessionCrashed",
    "State",
    "lean_theorem_of",
]


@runtime_checkable
class Backend(Protocol):
    """Starts sessions; ``name`` is what results record (``replay``…), ``metric`` the name of
    the proof rate it measures (``replay proof rate`` for the replay backend). Backends over
    Lean also have ``check(theorem, proof)`` (:class:`leantrain.lean.Backend`)."""

    name: str
    metric: str

    def start(self, theorem: Theorem) -> Session:
        """A session on ``theorem``; :class:`BackendError` when it cannot be started."""
        ...


def lean_theorem_of(theorem: Theorem, sources: Any = None) -> LeanTheorem:
    """The :class:`LeanTheorem` of a theorem record: from its own ``header`` and
    ``theorem_statement`` (a benchmark row, see :func:`leantrain.prover.theorems.load_split`),
    else read from the Lean project (``sources``: a :class:`leantrain.lean.ProjectSources`)
    at its ``file_path`` and ``start``. :class:`BackendError` saying what is missing."""
    extra = theorem.model_extra or {}
    if theorem.header is not None and theorem.theorem_statement:
        try:
            return LeanTheorem.parse(
                theorem.theorem_statement,
                theorem.header,
                name=theorem.full_name,
                source=str(extra.get("source", "")),
            )
        except ValueError as e:
            raise BackendError(f"{theorem.full_name}: {e}") from None
    if sources is None:
        raise BackendError(
            f"{theorem.full_name}: the statement of an export's theorem is read from the Lean "
            "project, and none is given",
            hint="pass --lean-project DIR (the traced repository at its commit)",
        )
    try:
        return sources.theorem(theorem)
    except ValueError as e:
        raise BackendError(str(e)) from None


class LeanContractBackend:
    """A leantrain-lean backend (``repl``, ``pantograph``) behind the prover's protocol: each
    theorem record becomes a :class:`LeanTheorem` (:func:`lean_theorem_of`) before it is
    started or checked."""

    def __init__(self, inner: Any, lean_project: str | None = None) -> None:
        from leantrain.lean import ProjectSources

        self.inner = inner
        self.name: str = inner.name
        self.metric: str = inner.metric
        self.sources = ProjectSources(lean_project) if lean_project else None

    def lean_theorem(self, theorem: Theorem) -> LeanTheorem:
        """The :class:`LeanTheorem` Lean is asked about for ``theorem``."""
        return lean_theorem_of(theorem, self.sources)

    def check_theorems(self, theorems: Sequence[Theorem]) -> None:
        """:class:`ConfigError` (one line) when an export's theorem is to be proved and no
        Lean project to read its statement from is given."""
        if self.sources is None:
            for t in theorems:
                if t.header is None:
                    raise ConfigError(
                        f"--backend {self.name} reads an export theorem's statement from the "
                        f"Lean project, and no --lean-project is given ({t.full_name})",
                        hint="pass --lean-project DIR: the traced repository at its commit",
                    )

    def start(self, theorem: Theorem) -> Session:
        """A session of the inner backend on ``theorem``'s statement."""
        session: Session = self.inner.start(self.lean_theorem(theorem))
        return session

    def check(self, theorem: Theorem, proof: str) -> CheckResult:
        """The inner backend's whole-theorem check."""
        result: CheckResult = self.inner.check(self.lean_theorem(theorem), proof)
        return result

    def close(self) -> None:
        """Close the inner backend."""
        self.inner.close()
