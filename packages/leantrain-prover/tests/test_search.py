"""Best-first search on hand-made trees: order, budgets, dedupe, timeouts, proof reconstruction."""

from __future__ import annotations

import pytest
from leantrain.prover.backend import NO_GOALS
from leantrain.prover.search import ProofStep, SearchSettings, best_first_search
from prover_helpers import FakeClock, ScriptedGenerator, TreeSession

# root -a-> A (-1.0), root -b-> B (-0.5); A -a2-> A2 (-0.1); B -b2-> B2 (-2.0); A2 -qed-> proof
TREE = {
    ("root", "a"): "A",
    ("root", "b"): "B",
    ("A", "a2"): "A2",
    ("B", "b2"): "B2",
    ("A2", "qed"): NO_GOALS,
}
SCRIPT = {
    "root": [("b", -0.5), ("a", -1.0)],
    "A": [("a2", -0.1)],
    "B": [("b2", -2.0)],
    "A2": [("qed", -0.1)],
    "B2": [("x", -0.1)],
}


def _search(moves=TREE, script=SCRIPT, crash_on="", **settings):
    session = TreeSession("root", moves, crash_on=crash_on)
    gen = ScriptedGenerator(script)
    clock = settings.pop("clock", None)
    kwargs = {"clock": clock} if clock else {}
    result = best_first_search(session, gen, SearchSettings(**settings), **kwargs)
    return result, gen, session


def test_expands_the_most_probable_open_state_first_and_reconstructs_the_proof():
    result, gen, _ = _search()
    # cumulative log-probs: B -0.5, A -1.0, A2 -1.1, B2 -2.5: B, A, A2 in that order
    assert gen.expanded == ["root", "B", "A", "A2"]
    assert result.status == "proved" and result.proved
    assert result.proof == [
        ProofStep("a", "root", "A"),
        ProofStep("a2", "A", "A2"),
        ProofStep("qed", "A2", NO_GOALS),
    ]
    assert result.expansions == 4
    assert result.tactics_tried == 5  # b, a, b2, a2, qed
    assert result.nodes == 5  # root, A, B, B2, A2


def test_length_normalisation_changes_the_order():
    """``depth_exponent`` 1 (SearchSettings' older field ``length_normalize``) divides by
    the depth."""
    script = {**SCRIPT, "B": [("b2", -0.9)]}  # B2: -1.4 in all, -0.7 per tactic
    _, gen_plain, _ = _search(script=script)
    _, gen_normed, _ = _search(script=script, depth_exponent=1.0)
    assert gen_plain.expanded[:3] == ["root", "B", "A"]  # A -1.0 > B2 -1.4
    assert gen_normed.expanded[:3] == ["root", "B", "B2"]  # B2 -0.7 > A -1.0


def test_the_depth_exponent_divides_by_a_power_of_the_depth():
    """BFS-Prover-V2's exponent 2: B2 (-1.6 at depth 2: -0.4) and B3 (-2.7 at depth 3: -0.3)
    are expanded before A (-1.0), which the raw sums (-1.6, -2.7) rank after A."""
    tree = {**TREE, ("B2", "b3"): "B3"}
    script = {**SCRIPT, "B": [("b2", -1.1)], "B2": [("b3", -1.1)]}
    r0, plain, _ = _search(tree, script)
    r2, squared, _ = _search(tree, script, depth_exponent=2.0)
    assert plain.expanded[:3] == ["root", "B", "A"]
    assert squared.expanded[:4] == ["root", "B", "B2", "B3"]
    # the trace logs each expanded node's terms: B3's score is -2.7 / 3**2
    b3 = r2.trace[3]
    assert b3["depth"] == 3 and b3["score"] == pytest.approx(-2.7 / 9)
    assert b3["steps"] == 0.0 and b3["priority"] == pytest.approx(b3["score"])
    assert [t["depth"] for t in r0.trace[:3]] == [0, 1, 1]


def test_the_progress_model_can_read_the_child_state_lean_returned():
    """``progress_input: child``: the model is asked about the new state after the path (its
    tactics as the prefix, no tactic), not about the parent goal and the tactic."""

    class Steps:
        def __init__(self):
            self.calls = []

        def predict_many(self, goals, prefixes, tactics):
            self.calls += list(zip(goals, prefixes, tactics))
            return [5.0 if g == "B" else 1.0 for g in goals]

    steps = Steps()
    gen = ScriptedGenerator(SCRIPT)
    settings = SearchSettings(progress_weight=0.5, progress_input="child")
    result = best_first_search(TreeSession("root", TREE), gen, settings, progress=steps)
    assert ("B", "b", "") in steps.calls and ("A2", "a\na2", "") in steps.calls
    assert gen.expanded == ["root", "A", "A2"] and result.proved


def test_progress_predictions_join_the_priority():
    class Steps:
        def __init__(self):
            self.calls = []

        def predict_many(self, goals, prefixes, tactics):
            self.calls += list(zip(goals, prefixes, tactics))
            return [5.0 if t == "b" else 1.0 for t in tactics]

    steps = Steps()

    session = TreeSession("root", TREE)
    gen = ScriptedGenerator(SCRIPT)
    settings = SearchSettings(progress_weight=0.5)
    result = best_first_search(session, gen, settings, progress=steps)
    # B: -0.5 - 0.5*5 = -3.0 now ranks below A: -1.0 - 0.5 = -1.5, and A2: -1.1 - 0.5 = -1.6
    assert gen.expanded == ["root", "A", "A2"]
    # both terms of each expanded node are in the trace: A's score -1.0, 1 step predicted
    assert result.trace[1] == {"depth": 1, "score": -1.0, "steps": 1.0, "priority": -1.5}
    assert result.proved
    assert ("A", "a", "a2") in steps.calls  # goal = state before, prefix = tactics so far


def test_expansion_budget():
    result, gen, _ = _search(max_expansions=2)
    assert result.status == "budget" and not result.proved
    assert result.expansions == 2 and gen.expanded == ["root", "B"]


def test_node_budget():
    result, _, _ = _search(max_nodes=3)  # root, B, A; B2 would be the fourth
    assert result.status == "budget" and result.nodes == 3


def test_states_reached_twice_are_one_node_and_cycles_are_not_followed():
    moves = {
        ("root", "a"): "A",
        ("root", "a'"): "A",  # same state by another tactic
        ("root", "loop"): "root",  # back to the start
        ("A", "back"): "root",
    }
    script = {"root": [("a", -0.1), ("a'", -0.2), ("loop", -0.3)], "A": [("back", -0.1)]}
    result, gen, _ = _search(moves=moves, script=script)
    assert result.status == "failed"  # nothing left to expand
    assert result.nodes == 2 and gen.expanded == ["root", "A"]
    assert result.tactics_tried == 4


def test_the_first_path_to_a_state_is_the_proof_path():
    moves = {
        ("root", "a"): "A",
        ("root", "b"): "B",
        ("B", "to_a"): "A",  # reaches A again, via B
        ("A", "qed"): NO_GOALS,
    }
    script = {"root": [("b", -0.1), ("a", -3.0)], "B": [("to_a", -0.1)], "A": [("qed", 0.0)]}
    result, _, _ = _search(moves=moves, script=script)
    assert [s.tactic for s in result.proof] == ["a", "qed"]  # A was first reached from root


def test_timeout_per_theorem():
    # every clock read advances 1 s: the search cannot run past 5 s
    result, _, session = _search(timeout=5.0, clock=FakeClock(1.0))
    assert result.status == "timeout" and not result.proved
    assert len(session.runs) < 5


def test_only_k_tactics_are_run():
    script = {"root": [("b", -0.5), ("a", -1.0)]}
    _, _, session = _search(script=script, num_sampled_tactics=1, max_expansions=1)
    assert session.runs == [("root", "b")]


def test_a_crashed_backend_ends_the_search():
    result, _, _ = _search(crash_on="a2")
    assert result.status == "crashed" and "fake Lean died" in (result.error or "")


def test_expansion_batch_asks_the_generator_for_several_states_at_once():
    result, gen, _ = _search(expansion_batch=2)
    assert gen.calls[0] == ["root"] and gen.calls[1] == ["B", "A"]
    assert result.proved


@pytest.mark.parametrize("field", ["num_sampled_tactics", "max_expansions", "expansion_batch"])
def test_settings_are_checked_by_the_config(field):
    from leantrain.core.errors import ConfigError
    from leantrain.prover import ProverConfig

    with pytest.raises(ConfigError, match=field):
        ProverConfig(**{field: 0})


def test_a_generator_answering_for_other_states_is_an_error():
    class Short:
        def propose(self, states, k):
            return []

    with pytest.raises(ValueError, match="0 lists for 1 states"):
        best_first_search(TreeSession("root", TREE), Short(), SearchSettings())


def test_the_node_budget_does_not_skip_a_proving_tactic():
    """A full node budget keeps no new state, but the next tactic of the same state, which
    finishes the proof, is still run (it was skipped: the search ended at the new state)."""
    moves = {("root", "a"): "A", ("root", "b"): "B", ("root", "qed"): NO_GOALS}
    script = {"root": [("a", -0.1), ("b", -0.2), ("qed", -0.3)]}
    result, _, session = _search(moves=moves, script=script, max_nodes=2)
    assert result.proved and [s.tactic for s in result.proof] == ["qed"]
    assert session.runs == [("root", "a"), ("root", "b"), ("root", "qed")]
    assert result.nodes == 2  # root, A: B was not kept


def test_the_node_budget_still_expands_the_open_states():
    moves = {("root", "a"): "A", ("root", "b"): "B", ("A", "qed"): NO_GOALS}
    script = {"root": [("b", -0.1), ("a", -0.2)], "A": [("qed", -0.1)], "B": [("x", -0.1)]}
    result, gen, _ = _search(moves=moves, script=script, max_nodes=2)  # root, B; A not kept
    assert result.status == "budget" and gen.expanded == ["root", "B"]
    result, gen, _ = _search(moves=moves, script=script, max_nodes=3)
    assert result.proved and gen.expanded == ["root", "B", "A"]


def test_expansions_are_counted_when_done_not_when_asked():
    """A batch of 2 whose first state finishes the proof expanded one state, not 2 (issue 34:
    expansions were counted for the whole batch before it ran)."""
    moves = {("root", "a"): "A", ("root", "b"): "B", ("A", "qed"): NO_GOALS, ("B", "x"): "C"}
    script = {"root": [("a", -0.1), ("b", -0.2)], "A": [("qed", -0.1)], "B": [("x", -0.1)]}
    result, gen, session = _search(moves=moves, script=script, expansion_batch=2)
    assert gen.calls == [["root"], ["A", "B"]] and result.proved
    assert result.expansions == 2  # root, A; B was proposed for but never expanded
    assert ("B", "x") not in session.runs


def test_failed_tactics_of_expanded_states_are_kept_as_negatives():
    result, _, _ = _search()
    # root: b, a work; B: b2 works; A: a2; A2: qed — nothing failed on the way
    assert result.negatives == []
    script = {**SCRIPT, "root": [("b", -0.5), ("nope", -0.7), ("a", -1.0)]}
    result, _, _ = _search(script=script)
    assert [(n.state, n.tactic, n.error, n.logprob) for n in result.negatives] == [
        ("root", "nope", "no such move", -0.7)
    ]
