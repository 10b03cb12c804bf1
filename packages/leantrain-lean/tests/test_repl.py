"""The ``repl`` backend against a fake REPL process that answers as the REPL's transcripts."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from leantrain.core.errors import ConfigError, MissingDependencyError
from leantrain.lean import BackendError, LeanTheorem, ReplBackend, SessionCrashed, check_proof

BRANCHING = LeanTheorem.parse(
    "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r"
)
README_F = LeanTheorem.parse("def f (x : Unit) : Nat")


def test_a_session_walks_the_recorded_proof_to_proved(fake):
    b = fake.backend("proof_branching")
    s = b.start(BRANCHING)
    assert s.initial_state.pp == "p q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ p ∧ r"
    o1 = s.run(s.initial_state, "apply And.intro")
    assert o1.kind == "state"
    # two goals, joined by a blank line as LeanDojo prints them
    assert o1.state.pp == (
        "case left\np q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ p\n\n"
        "case right\np q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ r"
    )
    o2 = s.run(o1.state, "exact h1.left")
    o3 = s.run(o2.state, "apply h2")
    assert o3.state.pp.endswith("⊢ q")
    assert s.run(o3.state, "exact h1.right").kind == "proved"
    assert b.restarts == 0


def test_states_branch_from_any_earlier_state(fake):
    b = fake.backend("proof_step")
    s = b.start(LeanTheorem.parse("def f : Nat"))
    root = s.initial_state
    assert s.run(root, "apply Int.natAbs").state.pp == "⊢ Int"
    have = s.run(root, "have t : Nat := 42")  # from the root again, as a search does
    assert have.state.pp == "t : Nat\n⊢ Nat"
    assert s.run(have.state, "exact t").kind == "proved"


def test_a_lean_error_is_an_error_outcome(fake):
    b = fake.backend("unknown_tactic")
    s = b.start(LeanTheorem.parse("def f : Nat"))
    o = s.run(s.initial_state, "exat 42")
    assert o.kind == "error"
    assert "unknown tactic" in o.message


def test_no_goals_with_contains_sorry_is_not_a_proof(fake):
    # the REPL answers goals [] with "Incomplete: contains sorry" and an error for an unknown
    # identifier: counting empty goals as proved would accept it
    b = fake.backend("invalid_tactic")
    s = b.start(LeanTheorem.parse("theorem my_theorem (x : Nat) : x = x"))
    o = s.run(s.initial_state, "exact my_fake_premise")
    assert o.kind == "error"
    assert "Unknown identifier" in o.message


def test_a_tactic_that_leaves_a_sorry_is_an_error(fake):
    b = fake.backend("have_by_sorry")
    s = b.start(LeanTheorem.parse("theorem foo (x : Int) : x = x"))
    o = s.run(s.initial_state, "have h : x = 1 := by sorry")
    assert o.kind == "error"
    assert "never sent" in o.message  # refused before Lean: sorry is never sent
    assert not any("have h" in line for line in fake.sent())


def test_the_header_is_elaborated_once_and_its_env_reused(fake):
    b = fake.backend("mathlib_exact")
    t1 = LeanTheorem.parse("theorem test : 0 < 1", "import Mathlib")
    s1 = b.start(t1)
    assert s1.initial_state.pp == "⊢ 0 < 1"
    assert s1.run(s1.initial_state, "exact?").kind == "proved"
    s2 = b.start(LeanTheorem.parse("theorem test : 3 = 7", "import Mathlib"))
    o = s2.run(s2.initial_state, "exact?")
    assert o.kind == "error" and "could not close the goal" in o.message
    sent = fake.sent()
    assert sum('"import Mathlib"' in line for line in sent) == 1
    assert all('"env": 0' in line for line in sent if line.startswith('{"cmd": "theorem'))


def test_a_header_lean_refuses_is_one_backend_error(fake):
    b = fake.backend("no_goal_sorry_2")
    bad = LeanTheorem.parse("theorem t : True", "example : True := by\n  sorry\n  sorry")
    with pytest.raises(BackendError, match="header does not elaborate: No goals to be solved"):
        b.start(bad)


def test_a_process_dying_at_start_is_a_backend_error_saying_so(fake):
    b = fake.backend("readme")
    # the fake has no answer for this statement and exits (code 3), as a crashing REPL would
    with pytest.raises(BackendError, match=r"cannot start the theorem: the REPL process exited"):
        b.start(LeanTheorem.parse("theorem other : True"))


def test_check_of_a_recorded_mathlib_proof_is_proved(fake, mathlib_header):
    b = fake.backend("mathlib_H20231020")
    t = LeanTheorem.parse("theorem mathd_numbertheory_188 : Nat.gcd 180 168 = 12", mathlib_header)
    result = b.check(t, "norm_num")
    assert result.ok
    assert result.axioms == ("Classical.choice", "Quot.sound", "propext")
    assert check_proof(b, t, "norm_num").status == "proved"


def test_checks_of_several_theorems_share_the_header_env(fake, mathlib_header):
    b = fake.backend("mathlib_H20231020")
    t = LeanTheorem.parse("theorem mathd_numbertheory_188 : Nat.gcd 180 168 = 12", mathlib_header)
    assert b.check(t, "norm_num").ok
    assert b.check(t, "norm_num").ok
    assert sum("import Mathlib.Algebra" in line for line in fake.sent()) == 1


def test_missing_executable_is_one_line_naming_it():
    with pytest.raises(MissingDependencyError) as e:
        ReplBackend("no-such-repl")
    assert "'no-such-repl'" in e.value.one_line()
    assert "\n" not in e.value.one_line()


def test_lean_project_must_be_a_directory(tmp_path):
    with pytest.raises(ConfigError, match="--lean-project"):
        ReplBackend("python3", tmp_path / "absent")


# -- faults -----------------------------------------------------------------------------------


def test_a_hung_tactic_times_out_and_the_search_goes_on(fake):
    b = fake.backend("proof_branching", fault="hang:exact h1.left", tactic_timeout=1.0)
    s = b.start(BRANCHING)
    o1 = s.run(s.initial_state, "apply And.intro")
    t0 = time.monotonic()
    hung = s.run(o1.state, "exact h1.left")
    assert hung.kind == "timeout"
    assert time.monotonic() - t0 < 5
    assert b.restarts == 1
    # the next call works: a new process, the state's path replayed
    again = s.run(o1.state, "exact h1.left")
    assert again.kind == "state" and again.state.pp.endswith("⊢ r")
    assert s.run(s.run(again.state, "apply h2").state, "exact h1.right").kind == "proved"


def test_a_kill_reaches_the_whole_process_group(fake, tmp_path):
    pid_file = tmp_path / "child.pid"
    b = fake.backend(
        "proof_branching",
        fault="hang:apply And.intro",
        extra=["--child-pid-file", str(pid_file)],
        tactic_timeout=0.5,
    )
    s = b.start(BRANCHING)
    child = int(pid_file.read_text())
    assert s.run(s.initial_state, "apply And.intro").kind == "timeout"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
            # killed but not yet reaped by init counts as gone
            if Path(f"/proc/{child}/stat").read_text().split(")")[-1].split()[0] == "Z":
                break
        except (ProcessLookupError, FileNotFoundError):
            break
        time.sleep(0.05)
    else:
        pytest.fail("the REPL's child process outlived the kill")


def test_a_process_dying_mid_answer_is_an_error_then_restarts(fake):
    b = fake.backend("proof_branching", fault="die:apply h2")
    s = b.start(BRANCHING)
    o2 = s.run(s.run(s.initial_state, "apply And.intro").state, "exact h1.left")
    died = s.run(o2.state, "apply h2")
    assert died.kind == "error"
    assert "exited" in died.message and "restarted" in died.message
    o3 = s.run(o2.state, "apply h2")
    assert o3.kind == "state" and o3.state.pp.endswith("⊢ q")


def test_a_partial_answer_that_stalls_is_a_timeout_then_restarts(fake):
    b = fake.backend("proof_branching", fault="stall:apply And.intro", tactic_timeout=0.5)
    s = b.start(BRANCHING)
    assert s.run(s.initial_state, "apply And.intro").kind == "timeout"
    assert s.run(s.initial_state, "apply And.intro").kind == "state"


def test_garbage_output_is_an_error_then_restarts(fake):
    b = fake.backend("proof_branching", fault="garbage:apply And.intro")
    s = b.start(BRANCHING)
    bad = s.run(s.initial_state, "apply And.intro")
    assert bad.kind == "error" and "non-JSON" in bad.message
    assert s.run(s.initial_state, "apply And.intro").kind == "state"


def test_a_slow_answer_within_the_timeout_is_fine_and_past_it_a_timeout(fake):
    b = fake.backend("proof_branching", fault="slow:0.3:apply And.intro", once=False)
    s = b.start(BRANCHING)
    assert s.run(s.initial_state, "apply And.intro").kind == "state"
    b2 = fake.backend("proof_branching", fault="slow:3:apply And.intro", tactic_timeout=0.5)
    s2 = b2.start(BRANCHING)
    assert s2.run(s2.initial_state, "apply And.intro").kind == "timeout"
    assert s2.run(s2.initial_state, "apply And.intro").kind == "state"


def test_a_hung_start_up_is_a_backend_error_with_its_own_timeout(fake):
    b = fake.backend(
        "mathlib_exact", fault="hang:import Mathlib", start_timeout=0.5, tactic_timeout=30
    )
    t0 = time.monotonic()
    with pytest.raises(BackendError, match=r"no answer within 0\.5 s"):
        b.start(LeanTheorem.parse("theorem test : 0 < 1", "import Mathlib"))
    assert time.monotonic() - t0 < 5
    s = b.start(LeanTheorem.parse("theorem test : 0 < 1", "import Mathlib"))  # fired once
    assert s.initial_state.pp == "⊢ 0 < 1"


def test_a_path_that_no_longer_replays_ends_the_session(fake):
    b = fake.backend("proof_branching", fault="die:exact h1.left", once=False)
    s = b.start(BRANCHING)
    o1 = s.run(s.initial_state, "apply And.intro")
    o2 = s.run(o1.state, "exact h1.left")
    assert o2.kind == "error"
    # every process dies on that tactic: a state behind it cannot be rebuilt
    with pytest.raises(SessionCrashed):
        s._proof_state(o1.state.handle.__class__(0, 2, ("apply And.intro", "exact h1.left")))


def test_a_check_that_hangs_is_a_timeout_result(fake):
    b = fake.backend("readme", fault="hang:#print axioms", check_timeout=0.5)
    r = b.check(README_F, "exact 3")
    assert r.status in ("timeout", "error")


def test_memory_limit_is_applied_to_the_process(fake):
    # the fake allocates 512 MB at start: under a 256 MB cap it dies (MemoryError) and the
    # call says so; without the cap the same process answers
    capped = fake.backend("readme", memory_limit_mb=256, extra=["--allocate-mb", "512"])
    with pytest.raises(BackendError, match="exited"):
        capped.start(README_F)
    free = fake.backend("readme", extra=["--allocate-mb", "512"])
    assert free.start(README_F).initial_state.pp == "x : Unit\n⊢ Nat"
