"""Soundness: the deny list, the axiom report, the verdicts, and the false-acceptance cases."""

from __future__ import annotations

import pytest
from leantrain.lean import (
    DEFAULT_ALLOWED_AXIOMS,
    DENY_LIST,
    CheckResult,
    LeanTheorem,
    check_proof,
    judge,
    parse_axioms,
    screen_proof,
)

# one proof text per deny-list rule, each refused; and a near miss each must pass
REFUSED = {
    "axiom": "exact (my_false_axiom).elim\naxiom my_false_axiom : False",
    "implemented_by": "exact foo\n@[implemented_by one] def zero := 0",
    "debug option": "set_option debug.skipKernelTC true in\n  decide",
    "unsafe": "exact unsafe (unsafeCast ())",
    "new syntax": 'macro "decide" : tactic => `(tactic| trivial)\n  decide',
    "meta code": "run_tac Lean.Elab.Tactic.closeMainGoal (Lean.mkConst ``True.intro)",
    "new command": "trivial\ntheorem helper : 1 = 1 := rfl",
    "search tactic": "exact?",
}
PASSING = {
    "axiom": "exact h_axiom",
    "implemented_by": "simp [implemented]",
    "debug option": "set_option maxHeartbeats 400000 in\n  norm_num",
    "unsafe": "exact unsafeness_lemma",
    "new syntax": "simp [syntax_tree_size]",
    "meta code": "exact evaluation",
    "new command": "classical\n  exact h",
    "search tactic": "exact h",
}


def test_every_deny_rule_has_a_case():
    assert {r.name for r in DENY_LIST} == set(REFUSED) == set(PASSING)


@pytest.mark.parametrize("rule", sorted(REFUSED))
def test_each_deny_rule_refuses_its_construct(rule):
    reason = screen_proof(REFUSED[rule])
    assert reason is not None
    expected = next(r.reason for r in DENY_LIST if r.name == rule)
    assert expected in reason


@pytest.mark.parametrize("rule", sorted(PASSING))
def test_each_deny_rule_lets_a_near_miss_pass(rule):
    assert screen_proof(PASSING[rule]) is None


@pytest.mark.parametrize("proof", ["sorry", "  nlinarith\n  sorry", "admit", "exact (by admit)"])
def test_sorry_and_admit_are_refused(proof):
    assert screen_proof(proof) == "the proof contains sorry/admit"


def test_the_other_debug_and_extern_forms_are_refused():
    assert screen_proof("set_option debug.skipKernelTC true in decide") is not None
    assert screen_proof('exact x\n@[extern "lean_foo"] opaque foo : Nat') is not None
    assert screen_proof('elab "t" : tactic => pure ()') is not None
    assert screen_proof("trivial\n#exit") is not None
    assert screen_proof("apply?") is not None and screen_proof("rw?") is not None


# -- the axiom report: texts as Lean pins them with #guard_msgs -----------------------------

INFO = "info"


def _info(data: str) -> dict[str, str]:
    return {"severity": INFO, "data": data}


def test_parse_axioms_reads_lean_reports():
    msgs = [
        _info(
            "'Foam.Bridges.planes_meet_covBy' depends on axioms: [propext, Classical.choice, Quot.sound]"
        )
    ]
    assert parse_axioms(msgs, "planes_meet_covBy") == ("Classical.choice", "Quot.sound", "propext")
    # the pretty-printer breaks a long list over lines
    long = (
        "'Nightstream.Implementation.NebulaV2.ProductPiCcsTranscriptGeometryFor.rows_length_exact'"
        " depends on axioms: [propext,\n Classical.choice,\n Quot.sound]"
    )
    assert parse_axioms([_info(long)], "rows_length_exact") == (
        "Classical.choice",
        "Quot.sound",
        "propext",
    )
    none = [
        _info(
            "'LocalBasenameLaws.unnamed_temporary_preserves_payload' does not depend on any axioms"
        )
    ]
    assert parse_axioms(none, "unnamed_temporary_preserves_payload") == ()
    assert parse_axioms([_info("'ex1' depends on axioms: [Lean.ofReduceBool]")], "ex1") == (
        "Lean.ofReduceBool",
    )


def test_parse_axioms_wants_the_report_of_that_theorem():
    msgs = [_info("'other' does not depend on any axioms")]
    assert parse_axioms(msgs, "mine") is None
    assert (
        parse_axioms(
            [{"severity": "warning", "data": "'mine' does not depend on any axioms"}], "mine"
        )
        is None
    )
    assert parse_axioms([_info("'xmine' does not depend on any axioms")], "mine") is None


# -- verdicts ---------------------------------------------------------------------------------


def test_judge_accepts_only_a_clean_check_with_allowed_axioms():
    ok = CheckResult("ok", axioms=("Classical.choice", "Quot.sound", "propext"))
    assert judge(ok, "t").status == "proved"
    assert judge(CheckResult("ok", axioms=()), "t").status == "proved"
    cases = {
        "Lean error: unsolved goals": CheckResult(
            "ok", errors=("unsolved goals\n⊢ False",), axioms=()
        ),
        "sorry": CheckResult("ok", sorries=1, axioms=("sorryAx",)),
        "no axiom report": CheckResult("ok", axioms=None),
        "sorryAx": CheckResult("ok", axioms=("sorryAx",)),
        "outside the allow-list: my_false_axiom": CheckResult(
            "ok", axioms=("my_false_axiom", "propext")
        ),
    }
    for words, result in cases.items():
        v = judge(result, "t")
        assert v.status == "rejected" and words in v.reason, (words, v)


def test_timeouts_and_backend_errors_are_not_rejections():
    assert judge(CheckResult("timeout", detail="no answer"), "t").status == "timeout"
    assert judge(CheckResult("error", detail="HTTP 500"), "t").status == "error"


def test_native_decide_is_named_and_can_be_allowed():
    r = CheckResult("ok", axioms=("Lean.ofReduceBool",))
    v = judge(r, "ex1")
    assert v.status == "rejected" and "Lean.ofReduceBool (native_decide" in v.reason
    assert judge(r, "ex1", (*DEFAULT_ALLOWED_AXIOMS, "Lean.ofReduceBool")).status == "proved"


# -- regression cases through the real REPL path ------------------------------------------


def test_a_proof_closed_with_sorry_is_rejected_before_lean(fake):
    b = fake.backend("tactic_sorry")
    v = check_proof(b, LeanTheorem.parse("def f : Nat"), "sorry")
    assert v.status == "rejected" and "sorry" in v.reason
    assert fake.sent() == []  # Lean never saw it


def test_a_sorry_lean_reports_is_rejected_even_past_the_screen(fake):
    # the check itself (no screen): the REPL's recorded answer lists the sorry and warns
    b = fake.backend("tactic_sorry")
    result = b.check(LeanTheorem.parse("def f : Nat"), "sorry")
    assert result.sorries == 1 and result.axioms == ("sorryAx",)
    v = judge(result, "f")
    assert v.status == "rejected" and "sorry" in v.reason


def test_a_new_axiom_in_the_proof_is_rejected(fake):
    b = fake.backend("readme")
    v = check_proof(b, LeanTheorem.parse("theorem t : False"), "exact ax\naxiom ax : False")
    assert v.status == "rejected" and "new axiom" in v.reason
    assert fake.sent() == []


def test_native_decide_is_rejected_unless_allowed(fake):
    b = fake.backend("native_decide")
    t = LeanTheorem.parse("theorem ex1 : True")
    v = check_proof(b, t, "native_decide")
    assert v.status == "rejected"
    assert "Lean.ofReduceBool" in v.reason
    allowed = check_proof(b, t, "native_decide", (*DEFAULT_ALLOWED_AXIOMS, "Lean.ofReduceBool"))
    assert allowed.status == "proved"
