"""The leandojo backend against a faithful fake of lean-dojo 4.20; its one-line refusals."""

from __future__ import annotations

import importlib.util
import sys

import fake_lean_dojo as ld
import pytest
from leantrain.core.errors import MissingDependencyError
from leantrain.core.schemas import Theorem
from leantrain.prover import (
    BackendError,
    LeanDojoBackend,
    Prover,
    SearchSettings,
    SessionCrashed,
    best_first_search,
)
from prover_helpers import ScriptedGenerator


def _theorem(name="t.or"):
    return Theorem.model_validate(
        {
            "url": "https://github.com/x/r",
            "commit": "abc",
            "file_path": "R/Basic.lean",
            "full_name": name,
            "start": [1, 1],
            "end": [2, 1],
        }
    )


@pytest.fixture(autouse=True)
def _fresh_log():
    ld.LOG.clear()


def test_a_session_maps_leandojo_results():
    backend = LeanDojoBackend(tactic_timeout=2.5, lean_dojo=ld)
    session = backend.start(_theorem())
    assert ld.LOG[0] == ("enter", "t.or", 3)  # the per-tactic timeout, whole seconds up
    root = session.initial_state
    assert root.pp == "p q : Prop\n⊢ p → p ∨ q" and isinstance(root.handle, ld.TacticState)
    assert session.run(root, "simp").kind == "error"
    given_up = session.run(root, "sorry")
    assert given_up.kind == "error" and "sorry" in given_up.message
    out = session.run(root, "intro h")
    assert out.kind == "state" and out.state.pp == "p q : Prop\nh : p\n⊢ p ∨ q"
    assert out.state.handle.id == 1  # the TacticState goes back to run_tac
    assert session.run(out.state, "exact Or.inl h").kind == "proved"
    session.close()
    session.close()
    assert ld.LOG.count(("exit",)) == 1


def test_search_proves_through_the_dojo():
    gen = ScriptedGenerator(
        {
            "p q : Prop\n⊢ p → p ∨ q": [("intro h", -0.1), ("simp", -0.5)],
            "p q : Prop\nh : p\n⊢ p ∨ q": [("exact Or.inl h", -0.1)],
        }
    )
    session = LeanDojoBackend(lean_dojo=ld).start(_theorem())
    result = best_first_search(session, gen, SearchSettings())
    assert result.proved and [s.tactic for s in result.proof] == ["intro h", "exact Or.inl h"]


def test_a_tactic_timeout_ends_the_session():
    session = LeanDojoBackend(lean_dojo=ld).start(_theorem())
    out = session.run(session.initial_state, "slow")
    assert out.kind == "timeout"
    with pytest.raises(SessionCrashed, match="timed-out"):
        session.run(session.initial_state, "intro h")
    gen = ScriptedGenerator({"p q : Prop\n⊢ p → p ∨ q": [("slow", -0.1), ("intro h", -0.2)]})
    result = best_first_search(
        LeanDojoBackend(lean_dojo=ld).start(_theorem()), gen, SearchSettings()
    )
    assert result.status == "crashed" and not result.proved


def test_a_crash_ends_the_search_and_init_errors_are_backend_errors():
    gen = ScriptedGenerator({"p q : Prop\n⊢ p → p ∨ q": [("crash", -0.1)]})
    result = best_first_search(
        LeanDojoBackend(lean_dojo=ld).start(_theorem()), gen, SearchSettings()
    )
    assert result.status == "crashed" and "Unexpected EOF" in result.error
    with pytest.raises(BackendError, match="cannot start"):
        LeanDojoBackend(lean_dojo=ld).start(_theorem("t.unknown"))


def test_the_prover_records_a_theorem_leandojo_cannot_start():
    prover = Prover(
        tactic_generator=ScriptedGenerator({}),
        lean_backend=LeanDojoBackend(lean_dojo=ld),
        backend="leandojo",
        progress_bar=False,
    )
    row = prover.prove(_theorem("t.unknown"), "test")
    assert row["status"] == "crashed" and not row["proved"] and "t.unknown" in row["error"]


def test_without_lean_dojo_it_fails_in_one_line_with_the_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "lean_dojo", None)  # as if not installed
    with pytest.raises(MissingDependencyError) as info:
        LeanDojoBackend()
    line = info.value.one_line()
    assert "\n" not in line and "pip install 'leantrain-prover[leandojo]'" in line


def test_without_a_lean_toolchain_it_fails_in_one_line(monkeypatch):
    if importlib.util.find_spec("lean_dojo") is None:
        monkeypatch.setitem(sys.modules, "lean_dojo", ld)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(MissingDependencyError, match="lake") as info:
        LeanDojoBackend()
    assert "elan" in info.value.one_line()
