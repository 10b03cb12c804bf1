"""The protocol between the proof search and a Lean backend.

A :class:`Backend` starts a theorem and returns a :class:`Session`; the session holds the
initial :class:`State` and runs one tactic on a state at a time, answering with an
:class:`Outcome`: a new state, the proof finished, an error, or a timeout. The search never
sees the backend's own objects: a state carries them in ``handle`` (LeanDojo's
``TacticState`` with its id), and states are compared by their pretty-printed text alone, as
LeanDojo compares its ``TacticState``\\ s.

Two backends implement it: :class:`~leantrain.prover.replay.ReplayBackend` (offline, from the
traced proofs of an export) and :class:`~leantrain.prover.leandojo.LeanDojoBackend` (Lean
itself, through LeanDojo's ``Dojo``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from leantrain.core.errors import LeanTrainError
from leantrain.core.schemas import Theorem

NO_GOALS = "no goals"
"""The state text LeanDojo writes after the last tactic of a finished proof."""


@dataclass(frozen=True)
class State:
    """A proof state: Lean's pretty-printed goals (``pp``) and the backend's own handle."""

    pp: str
    handle: Any = field(default=None, compare=False, repr=False)


OutcomeKind = Literal["state", "proved", "error", "timeout"]


@dataclass(frozen=True)
class Outcome:
    """What running a tactic gave: ``state`` (a new :class:`State` in ``state``), ``proved``
    (no goals left), ``error`` (Lean refused it; ``message`` says why) or ``timeout`` (it ran
    past the backend's per-tactic timeout)."""

    kind: OutcomeKind
    state: State | None = None
    message: str = ""


class BackendError(LeanTrainError):
    """A theorem could not be started (the backend cannot set it up)."""


class SessionCrashed(LeanTrainError):
    """The backend of a running session stopped answering; the search of this theorem ends."""


@runtime_checkable
class Session(Protocol):
    """One theorem being proved: its initial state, tactics run on states, then closed."""

    initial_state: State

    def run(self, state: State, tactic: str) -> Outcome:
        """Run ``tactic`` on ``state`` (a state of this session) and say what came of it."""
        ...

    def close(self) -> None:
        """Release what the session holds (a Lean process, temporary files)."""
        ...


@runtime_checkable
class Backend(Protocol):
    """Starts sessions; ``name`` is what results record (``replay``…), ``metric`` the name of
    the proof rate it measures (``replay proof rate`` for the replay backend)."""

    name: str
    metric: str

    def start(self, theorem: Theorem) -> Session:
        """A session on ``theorem``; :class:`BackendError` when it cannot be started."""
        ...
