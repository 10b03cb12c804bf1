"""The ``replay`` backend: Lean's answers read off the traced proofs of an export.

A tactic succeeds exactly when it equals (after whitespace normalisation) a traced tactic of
the theorem that starts from the same state (also compared after whitespace normalisation),
and it leads to the traced state after it; ``no goals`` after it finishes the proof. Anything
else is an error, so another proof that Lean would accept counts as a failure here: the share
of theorems proved under this backend is the **replay proof rate**, a lower bound on the real
proof rate. Tactics using ``sorry`` or ``admit`` never succeed.

No Lean is needed, so the whole search runs and is tested offline.
"""

from __future__ import annotations

from leantrain.core.lean_text import contains_sorry, normalize_tactic, normalize_whitespace
from leantrain.core.schemas import Theorem
from leantrain.prover.backend import NO_GOALS, BackendError, Outcome, State

REPLAY_METRIC = "replay proof rate"
"""The name of the proof rate measured with this backend, everywhere it is reported."""


def _key(state: str) -> str:
    return normalize_whitespace(state)


class ReplaySession:
    """A theorem's traced proof as a transition table: (state, tactic) -> state after."""

    def __init__(self, theorem: Theorem) -> None:
        tactics = [t for t in theorem.traced_tactics if t.tactic.strip()]
        if not tactics:
            raise BackendError(
                f"{theorem.full_name}: no traced tactics to replay",
                hint="the replay backend proves only theorems with a traced tactic proof",
            )
        self.initial_state = State(tactics[0].state_before)
        self._moves: dict[tuple[str, str], str] = {}
        for t in tactics:
            if contains_sorry(t.tactic):
                continue  # an unfinished proof step is no move
            self._moves.setdefault(
                (_key(t.state_before), normalize_tactic(t.tactic)), t.state_after
            )

    def run(self, state: State, tactic: str) -> Outcome:
        """The traced state after ``tactic`` from ``state``; an error if it was never traced."""
        if contains_sorry(tactic):
            return Outcome("error", message="the tactic uses sorry/admit")
        after = self._moves.get((_key(state.pp), normalize_tactic(tactic)))
        if after is None:
            return Outcome("error", message="not a traced tactic of this state (replay backend)")
        if _key(after) == NO_GOALS:
            return Outcome("proved")
        return Outcome("state", State(after))

    def close(self) -> None:
        """Nothing to release."""


class ReplayBackend:
    """Sessions over each theorem's own traced proof (see the module docstring)."""

    name = "replay"
    metric = REPLAY_METRIC

    def start(self, theorem: Theorem) -> ReplaySession:
        """A replay session; :class:`BackendError` for a theorem without traced tactics."""
        return ReplaySession(theorem)
