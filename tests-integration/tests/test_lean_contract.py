"""The prover's best-first search runs on a leantrain-lean session unchanged (issue 33).

``leantrain.lean``'s ``repl`` session, driven against the fake REPL process of leantrain-lean's
tests (which answers as the REPL's recorded transcripts), is searched by
``leantrain.prover.search.best_first_search``; the found proof is then judged by the
whole-theorem check. This is the contract phase 2 switches the prover onto.
"""

from __future__ import annotations

import sys
from pathlib import Path

from leantrain.lean import LeanTheorem, ReplBackend, check_proof
from leantrain.lean import Session as LeanSession
from leantrain.prover.backend import Session as ProverSession
from leantrain.prover.search import SearchSettings, best_first_search

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "packages" / "leantrain-lean" / "tests" / "fake_repl.py"


class Scripted:
    """A generator proposing fixed tactics per state (best first)."""

    def __init__(self, table: dict[str, list[tuple[str, float]]]) -> None:
        self.table = table

    def propose(self, states, k):
        return [self.table.get(s, [])[:k] for s in states]


def test_best_first_search_runs_on_a_repl_session():
    backend = ReplBackend([sys.executable, str(FAKE), "--use", "proof_branching"])
    try:
        theorem = LeanTheorem.parse(
            "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r"
        )
        session = backend.start(theorem)
        assert isinstance(session, LeanSession) and isinstance(session, ProverSession)
        s0 = session.initial_state.pp
        left = "case left\np q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ p"
        right = "case right\np q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ r"
        generator = Scripted(
            {
                s0: [("apply And.intro", -0.1)],
                f"{left}\n\n{right}": [("exact h1.left", -0.1)],
                right: [("apply h2", -0.1)],
                "case right\np q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ q": [("exact h1.right", -0.1)],
            }
        )
        result = best_first_search(session, generator, SearchSettings(timeout=None))
        assert result.status == "proved"
        tactics = [step.tactic for step in result.proof]
        assert tactics == ["apply And.intro", "exact h1.left", "apply h2", "exact h1.right"]
        assert result.proof[-1].state_after == "no goals"
        # a proof counts only after the whole-theorem check; one Lean cannot answer (here the
        # fake has no recording for the 4-line check and exits) is an error, never proved
        verdict = check_proof(backend, theorem, "\n".join(tactics))
        assert verdict.status == "error"
    finally:
        backend.close()
