"""The replay backend: a tactic succeeds exactly when it is a traced tactic of that state."""

from __future__ import annotations

import pytest
from leantrain.core.schemas import Theorem
from leantrain.prover import BackendError, ReplayBackend, SearchSettings, best_first_search
from leantrain.prover.backend import State
from leantrain.prover.theorems import load_split
from prover_helpers import SHARED_DATA


def _theorem(tactics):
    return Theorem.model_validate(
        {
            "url": "https://x/r",
            "commit": "c",
            "file_path": "R.lean",
            "full_name": "r",
            "start": [1, 1],
            "end": [3, 1],
            "traced_tactics": [
                {"tactic": t, "state_before": b, "state_after": a} for t, b, a in tactics
            ],
        }
    )


THM = _theorem(
    [
        ("intro  h", "p q : Prop\n⊢ p → p ∨ q", "p q : Prop\nh : p\n⊢ p ∨ q"),
        ("exact Or.inl h", "p q : Prop\nh : p\n⊢ p ∨ q", "no goals"),
    ]
)


def test_traced_tactics_lead_to_the_traced_states():
    session = ReplayBackend().start(THM)
    assert session.initial_state.pp == "p q : Prop\n⊢ p → p ∨ q"
    out = session.run(session.initial_state, "intro h")  # whitespace-normalised match
    assert out.kind == "state" and out.state.pp == "p q : Prop\nh : p\n⊢ p ∨ q"
    assert session.run(out.state, " exact  Or.inl h ").kind == "proved"


def test_anything_else_fails():
    session = ReplayBackend().start(THM)
    root = session.initial_state
    assert session.run(root, "exact Or.inl h").kind == "error"  # traced, but from another state
    assert session.run(root, "intros").kind == "error"  # a valid Lean tactic, never traced
    assert session.run(root, "sorry").kind == "error"
    assert session.run(State("p q : Prop\n⊢ q"), "intro h").kind == "error"


def test_a_traced_sorry_is_no_move_and_a_theorem_without_tactics_cannot_start():
    session = ReplayBackend().start(_theorem([("sorry", "⊢ False", "no goals")]))
    assert session.run(session.initial_state, "sorry").kind == "error"
    with pytest.raises(BackendError, match="no traced tactics"):
        ReplayBackend().start(_theorem([]))


def _oracle(theorems):
    """A generator that proposes every traced tactic of a state: the replay ceiling."""
    table = {}
    for t in theorems:
        for tt in t.traced_tactics:
            table.setdefault(tt.state_before, []).append((tt.tactic, -1.0))

    class Oracle:
        def propose(self, states, k):
            return [table.get(s, [])[:k] for s in states]

    return Oracle()


def test_an_oracle_generator_proves_every_sample_theorem(nat_basics):
    theorems = load_split(nat_basics, "test")
    results = [
        best_first_search(ReplayBackend().start(t), _oracle(theorems), SearchSettings())
        for t in theorems
    ]
    assert all(r.proved for r in results)
    for thm, r in zip(theorems, results):
        assert [s.tactic for s in r.proof] == [t.tactic for t in thm.traced_tactics]


def test_replay_ceiling_on_real_mathlib_theorems():
    """Real LeanDojo data: most traced proofs replay (some traces are not one linear path)."""
    path = SHARED_DATA / "mathlib-sample" / "test.json"
    if not path.is_file():
        pytest.skip(f"shared Lean data not found at {path}")
    theorems = [t for t in load_split(path, "test") if t.traced_tactics]
    settings = SearchSettings(num_sampled_tactics=64, max_expansions=200)
    proved = sum(
        best_first_search(ReplayBackend().start(t), _oracle(theorems), settings).proved
        for t in theorems
    )
    assert proved >= len(theorems) // 2, (proved, len(theorems))
