"""Hand-made proof trees for the search tests: a scripted session, generator and clock."""

from __future__ import annotations

from pathlib import Path

from leantrain.prover.backend import NO_GOALS, Outcome, SessionCrashed, State

SHARED_DATA = (Path(__file__).resolve().parents[3] / "../shared/data").resolve()
"""The shared real Lean data (tests that need it skip without it)."""


class TreeSession:
    """A hand-made proof tree: ``moves[(state, tactic)]`` is the state after (``NO_GOALS``
    finishes), anything else is an error. Records each run; ``crash_on`` raises."""

    def __init__(self, root: str, moves: dict[tuple[str, str], str], crash_on: str = "") -> None:
        self.initial_state = State(root)
        self.moves = moves
        self.crash_on = crash_on
        self.runs: list[tuple[str, str]] = []
        self.closed = False

    def run(self, state: State, tactic: str) -> Outcome:
        self.runs.append((state.pp, tactic))
        if tactic == self.crash_on:
            raise SessionCrashed("the fake Lean died")
        after = self.moves.get((state.pp, tactic))
        if after is None:
            return Outcome("error", message="no such move")
        if after == NO_GOALS:
            return Outcome("proved")
        return Outcome("state", State(after))

    def close(self) -> None:
        self.closed = True


class ScriptedGenerator:
    """Proposes ``script[state]`` (``(tactic, logprob)`` pairs) and records the calls."""

    def __init__(self, script: dict[str, list[tuple[str, float]]]) -> None:
        self.script = script
        self.calls: list[list[str]] = []

    def propose(self, states, k):
        self.calls.append(list(states))
        return [list(self.script.get(s, []))[:k] for s in states]

    @property
    def expanded(self) -> list[str]:
        return [s for call in self.calls for s in call]


class FakeClock:
    """A clock that advances ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class TracedOracle:
    """Proposes a wrong tactic, then every traced tactic of a state (of ``theorems``); raises
    ``kill`` at call ``kill_at``. Picklable (Ray workers get copies)."""

    def __init__(self, theorems, kill_at=None, kill=KeyboardInterrupt):
        self.table: dict[str, list[tuple[str, float]]] = {}
        for t in theorems:
            for tt in t.traced_tactics:
                self.table.setdefault(tt.state_before, []).append((tt.tactic, -0.5))
        self.calls = 0
        self.kill_at, self.kill = kill_at, kill

    def propose(self, states, k):
        self.calls += 1
        if self.calls == self.kill_at:
            raise self.kill
        return [[("nonsense", -0.1), *self.table.get(s, [])][:k] for s in states]


class SampledOracle(TracedOracle):
    """Samples with torch's global generator (as ``HFGenerator`` under ``--decoding sample``):
    each of the ``k`` draws is a traced tactic of the state with probability ``p``, else a
    wrong one; the log-probabilities are drawn too."""

    def __init__(self, theorems, p=0.5, **kw):
        super().__init__(theorems, **kw)
        self.p = p

    def propose(self, states, k):
        import torch

        self.calls += 1
        if self.calls == self.kill_at:
            raise self.kill
        out = []
        for s in states:
            good = self.table.get(s, [])
            picks = []
            for _ in range(k):
                u, score = torch.rand(2).tolist()
                if good and u < self.p:
                    picks.append((good[int(u / self.p * len(good))][0], -score))
                else:
                    picks.append((f"wrong {u:.6f}", -score))
            out.append(picks)
        return out
