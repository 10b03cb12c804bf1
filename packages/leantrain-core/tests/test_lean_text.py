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
