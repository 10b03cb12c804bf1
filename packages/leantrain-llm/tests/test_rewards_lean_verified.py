"""LeanVerifiedReward up to the Dojo call, with a fake Dojo factory."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from leantrain.core.errors import LeanTrainError, MissingDependencyError
from leantrain.llm.rewards import LeanVerifiedReward, build_reward_funcs


# Result types named like lean_dojo's (the reward classifies them by class name).
@dataclass(frozen=True)
class TacticState:
    pp: str
    id: int = field(default=0, compare=False)


@dataclass(frozen=True)
class ProofFinished:
    id: int = 0


@dataclass(frozen=True)
class LeanError:
    error: str


@dataclass(frozen=True)
class ProofGivenUp:
    pass


class DojoTacticTimeoutError(Exception):
    pass


class DojoCrashError(Exception):
    pass


class FakeDojo:
    """A scripted Lean: ``script[(state_pp, tactic)]`` is the result (or an exception to raise)."""

    def __init__(self, world, theorem, timeout):
        self.world = world
        self.theorem = theorem
        self.timeout = timeout

    def __enter__(self):
        self.world.opened.append((self.theorem["full_name"], self.timeout))
        return self, TacticState("⊢ start")

    def __exit__(self, *exc):
        self.world.closed += 1
        return False

    def run_tac(self, state, tactic):
        self.world.calls.append((self.theorem["full_name"], state.pp, tactic))
        result = self.world.script.get((state.pp, tactic), LeanError(f"unknown tactic {tactic}"))
        if isinstance(result, Exception):
            raise result
        return result


class World:
    def __init__(self, script):
        self.script = script
        self.opened: list = []
        self.calls: list = []
        self.closed = 0

    def factory(self, theorem, timeout):
        return FakeDojo(self, theorem, timeout)


SCRIPT = {
    ("⊢ start", "intro a b"): TacticState("a b : Nat\n⊢ goal"),
    ("a b : Nat\n⊢ goal", "constructor"): TacticState("a b : Nat\n⊢ left"),
    ("a b : Nat\n⊢ left", "simp"): ProofFinished(),
    ("a b : Nat\n⊢ left", "rw [foo]"): TacticState("a b : Nat\n⊢ left'"),
    ("a b : Nat\n⊢ left", "skip"): TacticState("a b : Nat\n⊢ left"),
    ("a b : Nat\n⊢ left", "slow"): DojoTacticTimeoutError("5s"),
    ("a b : Nat\n⊢ left", "crash"): DojoCrashError("OOM"),
}


def columns(n, prefix=("intro a b", "constructor"), name="thm"):
    return {
        "url": ["https://github.com/x/y"] * n,
        "commit": ["c0ffee"] * n,
        "file_path": ["Y.lean"] * n,
        "full_name": [name] * n,
        "proof_prefix": [list(prefix)] * n,
    }


def test_scores_finished_advancing_error_noprogress_timeout():
    world = World(SCRIPT)
    reward = LeanVerifiedReward(dojo_factory=world.factory, timeout=5)
    completions = [
        "simp",
        [{"role": "assistant", "content": "rw [foo]"}],
        "nonsense",
        "skip",
        "slow",
    ]
    assert reward(None, completions, **columns(5)) == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert reward.stats == {
        "finished": 1,
        "accepted": 1,
        "error": 1,
        "no_progress": 1,
        "timeout": 1,
    }
    assert world.opened == [("thm", 5.0)] and world.closed == 1


def test_prefix_replayed_in_order_once_per_theorem_then_candidates():
    world = World(SCRIPT)
    reward = LeanVerifiedReward(dojo_factory=world.factory)
    reward(None, ["simp", "skip", "simp"], **columns(3))
    assert world.calls == [
        ("thm", "⊢ start", "intro a b"),
        ("thm", "a b : Nat\n⊢ goal", "constructor"),
        ("thm", "a b : Nat\n⊢ left", "simp"),  # the duplicate "simp" runs once
        ("thm", "a b : Nat\n⊢ left", "skip"),
    ]


def test_results_are_cached_across_calls():
    world = World(SCRIPT)
    reward = LeanVerifiedReward(dojo_factory=world.factory)
    first = reward(None, ["simp", "nonsense", "slow"], **columns(3))
    n_calls = len(world.calls)
    second = reward(None, ["nonsense", "simp", "slow"], **columns(3))
    assert second == [first[1], first[0], first[2]]
    assert len(world.calls) == n_calls and len(world.opened) == 1
    assert reward.stats["cache_hits"] == 3


def test_cache_is_bounded():
    world = World(SCRIPT)
    reward = LeanVerifiedReward(dojo_factory=world.factory, cache_size=1)
    reward(None, ["simp", "skip"], **columns(2))
    assert len(reward.cache) == 1


def test_sorry_and_empty_score_zero_without_lean():
    world = World(SCRIPT)
    reward = LeanVerifiedReward(dojo_factory=world.factory)
    assert reward(None, ["sorry", "  ", "exact admit"], **columns(3)) == [0.0, 0.0, 0.0]
    assert world.opened == []


def test_unreplayable_prefix_is_unscorable_not_zero():
    world = World(SCRIPT)
    reward = LeanVerifiedReward(dojo_factory=world.factory)
    assert reward(None, ["simp"], **columns(1, prefix=("intro a b", "bogus"))) == [None]
    assert reward.stats["prefix_failed"] == 1
    # the failure is remembered: no second Dojo for that prefix
    assert reward(None, ["simp"], **columns(1, prefix=("intro a b", "bogus"))) == [None]
    assert len(world.opened) == 1


def test_crash_scores_zero_is_not_cached_and_stops_the_session():
    world = World(SCRIPT)
    reward = LeanVerifiedReward(dojo_factory=world.factory)
    assert reward(None, ["crash", "simp"], **columns(2)) == [0.0, None]
    assert reward.stats["crash"] == 1
    assert reward(None, ["simp"], **columns(1)) == [1.0]  # a fresh session later works
    assert all(k[-1] != "crash" for k in reward.cache)


def test_dojo_that_fails_to_open_gives_none():
    def factory(theorem, timeout):
        raise RuntimeError("DojoInitError: cannot build repo")

    reward = LeanVerifiedReward(dojo_factory=factory)
    assert reward(None, ["simp"], **columns(1)) == [None]
    assert reward.stats["dojo_failed"] == 1


def test_groups_by_theorem():
    world = World(SCRIPT)
    reward = LeanVerifiedReward(dojo_factory=world.factory)
    cols = columns(2)
    cols["full_name"] = ["thm_a", "thm_b"]
    assert reward(None, ["simp", "simp"], **cols) == [1.0, 1.0]
    assert [name for name, _ in world.opened] == ["thm_a", "thm_b"]


def test_missing_columns_is_a_clear_error():
    reward = LeanVerifiedReward(dojo_factory=World(SCRIPT).factory)
    with pytest.raises(LeanTrainError, match="proof_prefix"):
        reward(None, ["simp"], url=["u"], commit=["c"], file_path=["f"], full_name=["n"])


def test_without_toolchain_construction_fails_loudly(monkeypatch):
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "lean_dojo" else real_find_spec(name, *a),
    )
    with pytest.raises(MissingDependencyError, match=r"leantrain-llm\[lean\]"):
        LeanVerifiedReward()
    with pytest.raises(MissingDependencyError):
        build_reward_funcs(["lean_verified"])


def test_without_lean_on_path(monkeypatch):
    import importlib.util
    import shutil

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: object() if name == "lean_dojo" else real_find_spec(name, *a),
    )
    monkeypatch.setattr(shutil, "which", lambda tool: None)
    with pytest.raises(MissingDependencyError, match="lean and lake not found on PATH"):
        LeanVerifiedReward()


def test_build_with_injected_factory():
    world = World(SCRIPT)
    funcs, weights = build_reward_funcs(
        [{"name": "lean_verified", "weight": 2.0, "dojo_factory": world.factory}]
    )
    assert funcs[0].__name__ == "lean_verified" and weights == [2.0]
    assert funcs[0](prompts=None, completions=["simp"], **columns(1)) == [1.0]
