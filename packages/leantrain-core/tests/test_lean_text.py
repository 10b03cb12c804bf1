"""Lean text helpers on hand-made cases."""

from __future__ import annotations

import pytest
from leantrain.core import (
    PremiseProvenance,
    contains_sorry,
    first_line,
    normalize_tactic,
    premise_mentions,
    strip_marks,
)
from leantrain.core.lean_text import marked_names


def test_strip_and_find_marks():
    text = "rw [<a>Nat.add_comm</a>, <a>List.map_append</a>] at h"
    assert strip_marks(text) == "rw [Nat.add_comm, List.map_append] at h"
    assert marked_names(text) == ["Nat.add_comm", "List.map_append"]
    assert strip_marks("simp") == "simp"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sorry", True),
        ("  exact sorry", True),
        ("admit", True),
        ("· sorry", True),
        ("(sorry)", True),
        ("sorryAx _ false", False),
        ("exact foo.sorry_lemma", False),
        ("admits_x", False),
        ("exact Nat.sorry", False),
        ("simp [sorry']", False),
        ("rw [h]", False),
    ],
)
def test_contains_sorry(text, expected):
    assert contains_sorry(text) is expected


def test_first_line_and_normalisation():
    tac = "\n  induction n with\n  | zero => rfl\n  | succ k ih => simp [ih]"
    assert first_line(tac) == "induction n with"
    assert first_line("") == "" and first_line("  \n ") == ""
    assert normalize_tactic("simp   [a,\n   b]") == "simp [a, b]"
    assert normalize_tactic(tac, first_line_only=True) == "induction n with"


def test_premise_mentions_dedupes_in_order():
    def prov(n):
        return {
            "full_name": n,
            "def_path": "A.lean",
            "def_pos": [1, 1],
            "def_end_pos": [1, 2],
        }

    ann = ["rw [<a>b</a>, <a>a</a>, <a>b</a>]", [prov("b"), prov("a"), prov("b")]]
    assert premise_mentions(ann) == ["b", "a"]
    typed = ("x", [PremiseProvenance.model_validate(prov("c"))])
    assert premise_mentions(typed) == ["c"]
    assert premise_mentions(["simp", []]) == []


def _tt(tactic: str, before: str, after: str) -> dict[str, str]:
    return {"tactic": tactic, "state_before": before, "state_after": after}


def test_top_level_tactics_drop_the_nested_ones():
    from leantrain.core.lean_text import tactics_proof, top_level_tactics

    traced = [  # LeanDojo's order: the `have` first, then the tactic inside its `by`
        _tt("have h : 0 < n := by\n  omega", "n : ℕ\n⊢ P n", "n : ℕ\nh : 0 < n\n⊢ P n"),
        _tt("omega", "n : ℕ\n⊢ 0 < n", "no goals"),
        _tt("exact foo h", "n : ℕ\nh : 0 < n\n⊢ P n", "no goals"),
    ]
    top = top_level_tactics(traced)
    assert top == ["have h : 0 < n := by\n  omega", "exact foo h"]
    assert tactics_proof(top) == "by\n  have h : 0 < n := by\n    omega\n  exact foo h"


def test_top_level_tactics_refuse_a_chain_that_does_not_close_the_goal():
    from leantrain.core.lean_text import top_level_tactics

    assert top_level_tactics([]) is None
    # `constructor <;> simp`'s pieces traced out of order: no chain reaches `no goals`
    assert (
        top_level_tactics([_tt("constructor", "⊢ p ∧ q", "case left\n⊢ p\ncase right\n⊢ q")])
        is None
    )


def test_top_level_tactics_on_real_lb4_records():
    import json
    from pathlib import Path

    from leantrain.core.lean_text import top_level_tactics

    path = Path(__file__).parents[3] / ".." / "shared" / "data" / "leandojo-benchmark-4-head"
    if not (path / "test_head.json").is_file():
        pytest.skip("../shared/data/leandojo-benchmark-4-head is absent")
    theorems = [t for t in json.loads((path / "test_head.json").read_text()) if t["traced_tactics"]]
    nested = [
        t
        for t in theorems
        if (top := top_level_tactics(t["traced_tactics"])) is not None
        and len(top) < len(t["traced_tactics"])
    ]
    assert nested, "the head file has proofs with nested tactics"
    by_name = {t["full_name"]: t["traced_tactics"] for t in theorems}
    # `by simp; simp [m_empty]` in the statement is traced first and closes its own goal: the
    # chain from it is not the proof (`refine le_antisymm …` is left out), so no proof at all
    assert top_level_tactics(by_name["MeasureTheory.OuterMeasure.comap_ofFunction"]) is None
