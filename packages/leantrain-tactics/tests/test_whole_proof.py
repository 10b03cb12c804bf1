"""Whole-proof examples from theorem records, and statement normalisation for the guard."""

import json
from pathlib import Path

import pytest
from leantrain.core.schemas import Theorem
from leantrain.tactics.whole_proof import (
    normalize_statement,
    statement_hash,
    tactics_proof,
    top_level_tactics,
    whole_proof_example,
    whole_proof_examples,
)

LEAN4_EXAMPLE = Path(__file__).parents[3] / ".." / "shared" / "data" / "lean4-example"


def _theorem(**fields):
    base = {"url": "u", "commit": "c", "file_path": "F.lean", "full_name": "foo"}
    base |= {"start": [1, 1], "end": [2, 1]}
    return Theorem.model_validate(base | fields)


def _traced(tactic):
    return {"tactic": tactic, "state_before": "⊢ p", "state_after": "no goals"}


def test_top_level_traced_tactics_join_as_a_by_block():
    induction = "induction n with\n| zero => rfl\n| succ n ih => simp"
    t = _theorem(
        theorem_statement="theorem foo (n : Nat) : n + 0 = n :=",
        traced_tactics=[
            {"tactic": induction, "state_before": "n : Nat\n⊢ n + 0 = n", "state_after": "no goals"},
            # traced inside the induction's `succ` case: its text is already there
            {"tactic": "<a>simp</a>", "state_before": "case succ\n⊢ n + 1 + 0 = n + 1",
             "state_after": "no goals"},
        ],
    )  # fmt: skip
    ex = whole_proof_example(t)
    assert ex.origin == "tactics"
    assert ex.proof == "by\n  induction n with\n  | zero => rfl\n  | succ n ih => simp"
    # traced tactics whose states do not chain to `no goals`: no proof rather than a wrong one
    gap = {"tactic": "intro h", "state_before": "⊢ p → p", "state_after": "h : p\n⊢ p"}
    assert whole_proof_example(t.model_copy(update={"traced_tactics": [gap]})) is None
    assert ex.theorem_text.startswith("theorem foo (n : Nat) : n + 0 = n := by\n  induction")


def test_formal_proof_wins_and_statement_gets_its_assign():
    t = _theorem(
        theorem_statement="theorem foo : 1 + 1 = 2",
        formal_proof="by norm_num",
        proof_origin="imported",
        header="import Mathlib",
        difficulty=0.25,
        traced_tactics=[_traced("rfl")],
    )
    ex = whole_proof_example(t)
    assert (ex.statement, ex.proof, ex.origin) == (
        "theorem foo : 1 + 1 = 2 :=",
        "by norm_num",
        "imported",
    )
    assert (ex.header, ex.difficulty) == ("import Mathlib", 0.25)


def test_records_without_statement_or_proof_are_skipped():
    # no statement and no traced state (a blank state_before is none): nothing to state it by
    blank = {"tactic": "rfl", "state_before": " ", "state_after": "no goals"}
    assert whole_proof_example(_theorem(traced_tactics=[blank])) is None
    assert whole_proof_example(_theorem()) is None
    assert whole_proof_example(_theorem(theorem_statement="theorem foo : True :=")) is None
    assert tactics_proof([]) == tactics_proof(["  "]) == "by"
    sorry = _theorem(theorem_statement="theorem foo : True :=", traced_tactics=[_traced("sorry")])
    assert whole_proof_example(sorry) is None
    admitted = _theorem(theorem_statement="theorem foo : True :=", formal_proof="by admit")
    assert whole_proof_example(admitted) is None


def test_normalize_drops_header_lines():
    bench = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen Real\n\n"
    plain = "theorem t (x : ℝ) : x = x := by"
    assert statement_hash(bench + "theorem mathd_1 (x : ℝ) :\n  x = x := by sorry") == (
        statement_hash(plain)
    )
    assert normalize_statement("set_option maxRecDepth 1000 in\ntheorem t : True") == ": True"


def test_normalize_drops_name_comments_whitespace_and_tail():
    a = "theorem foo (n : ℕ) :\n    n + 0 = n := by"
    b = "/-- doc -/ lemma  bar (n : ℕ) : n + 0 = n -- note\n :="
    c = "@[simp] protected theorem X.y (n : ℕ) : n + 0 = n := by sorry"
    assert normalize_statement(a) == "(n : ℕ) : n + 0 = n"
    assert statement_hash(a) == statement_hash(b) == statement_hash(c)
    assert statement_hash(a) != statement_hash("theorem foo (n : ℕ) : 0 + n = n :=")
    assert normalize_statement("theorem t : True") == ": True"


@pytest.mark.skipif(not LEAN4_EXAMPLE.exists(), reason="../shared/data/lean4-example is absent")
def test_real_export_gives_one_example_per_traced_theorem():
    records = json.loads((LEAN4_EXAMPLE / "random" / "train.json").read_text())
    theorems = [Theorem.model_validate(r) for r in records]
    examples = list(whole_proof_examples(theorems))
    assert len(examples) == sum(1 for t in theorems if t.traced_tactics and t.theorem_statement)
    assert all(e.statement.endswith(":=") and e.proof.startswith("by\n  ") for e in examples)


def test_whole_proof_prompt_is_header_and_statement_and_the_target_is_the_proof():
    from leantrain.tactics.whole_proof import (
        WHOLE_PROOF_SYSTEM_PROMPT,
        whole_proof_completion,
        whole_proof_prompt,
    )

    t = _theorem(
        theorem_statement="theorem foo : 1 + 1 = 2 := by sorry",
        header="import Mathlib\nopen Nat",
        formal_proof="by\n  norm_num",
    )
    ex = whole_proof_example(t)
    prompt = whole_proof_prompt(ex)
    assert prompt == [
        {"role": "system", "content": WHOLE_PROOF_SYSTEM_PROMPT},
        {"role": "user", "content": "import Mathlib\nopen Nat\n\ntheorem foo : 1 + 1 = 2 :="},
    ]
    assert whole_proof_completion(ex) == [{"role": "assistant", "content": "by\n  norm_num"}]
    # a record without a proof (a benchmark row) is asked the same way; no header, no system
    assert whole_proof_prompt(t, "") == prompt[1:]
    bare = whole_proof_prompt(_theorem(theorem_statement="theorem foo : True"), None)
    assert bare == [{"role": "user", "content": "theorem foo : True :="}]
    # one round of feedback: the failed attempt and Lean's messages follow the statement
    fed = whole_proof_prompt(ex, feedback=("by simp", "unsolved goals ⊢ 2 = 2"))
    assert fed[1]["content"].startswith(prompt[1]["content"] + "\n\nA previous attempt:\nby simp")
    assert "Lean's answer:\nunsolved goals ⊢ 2 = 2" in fed[1]["content"]


@pytest.mark.parametrize(
    ("reply", "proof"),
    [
        ("by\n  norm_num", "by\n  norm_num"),
        ("```lean4\nby\n  norm_num\n```", "by\n  norm_num"),
        (
            "```lean\nimport Mathlib\ntheorem foo : 1 + 1 = 2 := by\n  norm_num\n```",
            "by\n  norm_num",
        ),
        ("theorem foo (h : a = b := rfl) : b = a := h.symm", "h.symm"),
        ("theorem foo : True", ""),
        ("   ", ""),
    ],
)
def test_extract_proof_reads_the_proof_out_of_a_reply(reply, proof):
    from leantrain.tactics.whole_proof import extract_proof

    assert extract_proof(reply) == proof


@pytest.mark.parametrize(
    ("proof", "script"),
    [
        ("by norm_num", "norm_num"),
        ("by\n  intro h\n  exact h", "intro h\nexact h"),
        ("by intro h\n   exact h", "intro h\nexact h"),
        ("Nat.le_refl _", "exact Nat.le_refl _"),
        ("fun h =>\n  h", "exact\n  fun h =>\n    h"),
    ],
)
def test_proof_script_is_what_the_lean_check_takes(proof, script):
    from leantrain.tactics.whole_proof import proof_script

    assert proof_script(proof) == script


def test_default_system_prompt_by_mode():
    from leantrain.tactics import DEFAULT_SYSTEM_PROMPT
    from leantrain.tactics.whole_proof import WHOLE_PROOF_SYSTEM_PROMPT, default_system_prompt

    assert default_system_prompt("whole") == WHOLE_PROOF_SYSTEM_PROMPT
    assert default_system_prompt("tactic") == DEFAULT_SYSTEM_PROMPT


LB4_HEAD = Path(__file__).parents[3] / ".." / "shared" / "data" / "leandojo-benchmark-4-head"


def test_a_traced_theorem_without_statement_is_stated_by_its_initial_state():
    from leantrain.tactics.whole_proof import STATE_MARKER, whole_proof_prompt

    after = "p q : Prop\nh : p\n⊢ p"
    first = {"tactic": "intro h", "state_before": "p q : Prop\n⊢ p → p", "state_after": after}
    last = {"tactic": "exact h", "state_before": after, "state_after": "no goals"}
    t = _theorem(full_name="Foo.bar", traced_tactics=[first, last])
    ex = whole_proof_example(t)
    assert (ex.form, ex.origin, ex.statement) == ("state", "tactics", "p q : Prop\n⊢ p → p")
    assert ex.proof == "by\n  intro h\n  exact h"
    user = whole_proof_prompt(ex, None)[0]["content"]
    assert user == f"theorem Foo.bar\n{STATE_MARKER}\np q : Prop\n⊢ p → p"
    assert whole_proof_prompt(t, None) == whole_proof_prompt(ex, None)  # the prover asks alike
    with pytest.raises(ValueError, match=r"Foo\.bar: stated by its initial state"):
        _ = ex.theorem_text
    # a statement wins over the state: the source form, as before
    stated = whole_proof_example(t.model_copy(update={"theorem_statement": "theorem bar : p → p"}))
    assert (stated.form, stated.statement) == ("source", "theorem bar : p → p :=")


def test_state_and_statement_hashes_live_in_separate_domains():
    from leantrain.core.lean_text import state_hash

    state = "n : ℕ\n⊢ n + 0 = n"
    assert state_hash(state) == state_hash("n : ℕ  ⊢  n + 0 = n")  # whitespace collapsed
    assert state_hash(state) != state_hash("n : ℕ\n⊢ 0 + n = n")
    # the same text in the two forms never collides
    assert state_hash(": True") != statement_hash("theorem t : True")
    assert state_hash(state) != statement_hash(state)


@pytest.mark.skipif(
    not LB4_HEAD.exists(), reason="../shared/data/leandojo-benchmark-4-head is absent"
)
def test_real_lb4_records_give_state_form_examples():
    from leantrain.tactics.whole_proof import whole_proof_prompt

    records = json.loads((LB4_HEAD / "test_head.json").read_text())[:20]
    theorems = [Theorem.model_validate(r) for r in records]
    assert not any(t.theorem_statement for t in theorems)  # LB4 ships no statements
    examples = list(whole_proof_examples(theorems))
    proved = [t for t in theorems if top_level_tactics(t.traced_tactics) is not None]
    assert len(examples) == len(proved) > 0
    for ex, t in zip(examples, proved):
        assert ex.form == "state" and ex.statement == t.traced_tactics[0].state_before.strip()
        assert "⊢" in ex.statement and ex.proof.startswith("by\n  ")
        user = whole_proof_prompt(ex, None)[0]["content"]
        assert user.startswith(f"theorem {t.full_name}\n") and user.endswith(ex.statement)
