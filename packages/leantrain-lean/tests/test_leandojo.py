"""The leandojo backend against a faithful fake of lean-dojo 4.20: results, the restart and
replay after a tactic timeout, its own start-up timeout, one LeanGitRepo per repository, the
trace-cache check, any exception becoming a BackendError, and its one-line refusals."""

from __future__ import annotations

import importlib.util
import sys
from types import SimpleNamespace

import fake_lean_dojo as ld
import pytest
from leantrain.core.errors import ConfigError, MissingDependencyError
from leantrain.lean import BackendError, LeanArgs, LeanDojoBackend, build_backend, check_proof


def _theorem(name="t.or", url="https://github.com/x/r", commit="abc"):
    return SimpleNamespace(url=url, commit=commit, file_path="R/Basic.lean", full_name=name)


@pytest.fixture(autouse=True)
def _fresh_fake():
    ld.LOG.clear()
    ld.REPOS.clear()
    ld.SLOW_TIMEOUTS["left"] = None
    yield
    ld.SLOW_TIMEOUTS["left"] = None


def _backend(**kw):
    return LeanDojoBackend(lean_dojo=ld, **kw)


def test_a_session_maps_leandojo_results_and_has_its_own_start_up_timeout():
    session = _backend(tactic_timeout=2.5, start_timeout=600).start(_theorem())
    assert ld.LOG[0] == ("enter", "t.or", 600)  # the start-up timeout enters the Dojo
    assert session._dojo.timeout == 3  # then tactics get theirs, whole seconds up
    root = session.initial_state
    assert root.pp == "p q : Prop\n⊢ p → p ∨ q"
    assert session.run(root, "simp").kind == "error"
    assert session.run(root, "sorry").kind == "error"  # never sent to Lean
    assert ("run", 0, "sorry") not in ld.LOG
    out = session.run(root, "intro h")
    assert out.kind == "state" and out.state.pp == "p q : Prop\nh : p\n⊢ p ∨ q"
    assert session.run(out.state, "exact Or.inl h").kind == "proved"
    session.close()
    session.close()
    assert ld.LOG.count(("exit",)) == 1


def test_a_tactic_timeout_restarts_the_dojo_and_replays_the_open_nodes_path():
    backend = _backend()
    session = backend.start(_theorem())
    h = session.run(session.initial_state, "intro h").state
    ld.SLOW_TIMEOUTS["left"] = 1
    out = session.run(h, "slow")
    assert out.kind == "timeout"
    assert ld.LOG[-1] == ("exit",)  # the busy Dojo is left at once
    # the next tactic on the open node gets a new Dojo, reached by replaying 'intro h'
    done = session.run(h, "slow")
    assert done.kind == "proved"
    assert [e for e in ld.LOG if e[0] == "enter"] == [("enter", "t.or", 600)] * 2
    assert ("run", 0, "intro h") in ld.LOG[ld.LOG.index(("exit",)) :]
    assert backend.restarts == 1
    # the root still works (generation 0's state, replayed with the empty path)
    assert session.run(session.initial_state, "intro h").kind == "state"
    session.close()


def test_a_crash_restarts_too():
    session = _backend().start(_theorem())
    out = session.run(session.initial_state, "crash")
    assert out.kind == "error" and "crashed" in out.message
    assert session.run(session.initial_state, "intro h").kind == "state"


def test_one_leangitrepo_per_repository():
    backend = _backend()
    for _ in range(3):
        backend.start(_theorem()).close()
    with pytest.raises(BackendError):
        backend.start(_theorem("t.unknown"))
    assert ld.REPOS == [("https://github.com/x/r", "abc")]


def test_every_exception_of_leandojo_at_start_is_a_backend_error_with_its_class():
    backend = _backend()
    with pytest.raises(BackendError, match="DojoInitError"):
        backend.start(_theorem("t.unknown"))
    with pytest.raises(BackendError, match="ConnectionError: GitHub API rate limit") as info:
        backend.start(_theorem(url="https://github.com/x/offline"))
    assert "\n" not in info.value.one_line()


def test_the_trace_cache_is_checked_naming_the_command_that_traces():
    backend = _backend()
    backend.check_traced([_theorem(), _theorem()])  # traced: no error
    with pytest.raises(ConfigError) as info:
        backend.check_traced([_theorem(), _theorem(url="https://github.com/x/new", commit="def")])
    line = info.value.one_line()
    assert "has not traced https://github.com/x/new@def" in line
    assert "leantrain export trace https://github.com/x/new def" in line
    with pytest.raises(ConfigError, match="cannot open the repository"):
        backend.check_traced([_theorem(url="https://github.com/x/offline")])
    assert ld.LOG == []  # no Dojo entered


def test_a_whole_proof_is_rechecked_in_a_new_dojo():
    backend = _backend()
    assert check_proof(backend, _theorem(), "intro h\nexact Or.inl h").status == "proved"
    assert ld.LOG.count(("exit",)) == 1
    rejected = check_proof(backend, _theorem(), "intro h")
    assert rejected.status == "rejected" and "goals remain" in rejected.reason
    assert check_proof(backend, _theorem(), "intro h\nsorry").status == "rejected"
    native = check_proof(backend, _theorem(), "native_decide")
    assert native.status == "rejected" and "native_decide" in native.reason


def test_build_backend_makes_it_with_the_lean_args():
    backend = build_backend("leandojo", LeanArgs(tactic_timeout=5, start_timeout=900), lean_dojo=ld)
    assert isinstance(backend, LeanDojoBackend)
    assert (backend.tactic_timeout, backend.start_timeout) == (5.0, 900.0)


def test_without_lean_dojo_it_fails_in_one_line_with_the_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "lean_dojo", None)  # as if not installed
    with pytest.raises(MissingDependencyError) as info:
        LeanDojoBackend()
    line = info.value.one_line()
    assert "\n" not in line and "pip install 'leantrain-lean[leandojo]'" in line


def test_without_a_lean_toolchain_it_fails_in_one_line(monkeypatch):
    if importlib.util.find_spec("lean_dojo") is None:
        monkeypatch.setitem(sys.modules, "lean_dojo", ld)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(MissingDependencyError, match="lake") as info:
        LeanDojoBackend()
    assert "elan" in info.value.one_line()


def test_a_multi_line_tactic_stays_one_tactic_in_the_recheck():
    from leantrain.lean.leandojo import split_tactics

    assert split_tactics("intro h\ncases h with\n  | inl a => simp\n\nexact x") == [
        "intro h",
        "cases h with\n  | inl a => simp",
        "exact x",
    ]
