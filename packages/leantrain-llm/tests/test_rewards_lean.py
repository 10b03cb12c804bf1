"""The ``lean`` reward over leantrain-lean's contract: tactic level on the leandojo backend
(leantrain-lean's fake of lean-dojo 4.20) and on the repl backend (its fake REPL process
answering as the REPL's recorded transcripts), whole-proof level with the soundness rules and
Kimina's batches, the old name ``lean_verified``, the GRPO settings it is built from."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from leantrain.core.errors import ConfigError, LeanTrainError, MissingDependencyError
from leantrain.lean import CheckResult
from leantrain.llm.rewards import LeanReward, build_reward_funcs

LEAN_TESTS = Path(__file__).resolve().parents[2] / "leantrain-lean" / "tests"
sys.path.insert(0, str(LEAN_TESTS))
import fake_lean_dojo as ld  # noqa: E402

FAKE_REPL = LEAN_TESTS / "fake_repl.py"


@pytest.fixture(autouse=True)
def _fresh_fake():
    ld.LOG.clear()
    ld.SLOW_TIMEOUTS["left"] = None


def dojo_columns(n, prefix=("intro h",), name="t.or"):
    return {
        "url": ["https://github.com/x/r"] * n,
        "commit": ["abc"] * n,
        "file_path": ["R/Basic.lean"] * n,
        "full_name": [name] * n,
        "proof_prefix": [list(prefix)] * n,
    }


def test_tactic_level_on_leandojo():
    reward = LeanReward(backend="leandojo", lean_dojo=ld)
    completions = ["exact Or.inl h", "slow", "simp", "sorry", "", "exact?"]
    assert reward(None, completions, **dojo_columns(6)) == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    # one Dojo for the group, one fresh Dojo re-checking the finished proof, one restart
    # after the timeout (the prefix replayed in it before 'simp')
    assert ld.LOG.count(("enter", "t.or", 600)) == 3
    assert ("run", 1, "sorry") not in ld.LOG and ("run", 1, "exact?") not in ld.LOG
    assert reward.stats["proved"] == 1 and reward.stats["refused"] == 2
    # a tactic that changes the state scores; an unknown theorem is unscorable (None)
    assert reward(None, ["intro h"], **dojo_columns(1, prefix=())) == [1.0]
    assert reward(None, ["intro h"], **dojo_columns(1, prefix=(), name="t.none")) == [None]
    # cached: Lean is not asked again
    before = len(ld.LOG)
    assert reward(None, ["exact Or.inl h"], **dojo_columns(1)) == [1.0]
    assert len(ld.LOG) == before and reward.stats["cache_hits"] == 1


def test_a_prefix_that_does_not_replay_is_unscorable():
    reward = LeanReward(backend="leandojo", lean_dojo=ld)
    assert reward(None, ["simp"], **dojo_columns(1, prefix=("nonsense",))) == [None]
    assert reward.stats["prefix_failed"] == 1


def test_tactic_level_on_the_repl_with_statements_from_the_rows():
    cmd = shlex.join([sys.executable, str(FAKE_REPL), "--use", "proof_branching"])
    reward = LeanReward(backend="repl", repl_command=cmd)
    try:
        statement = "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r"
        cols = {
            "full_name": ["complex_and"] * 2,
            "formal_statement": [statement] * 2,
            "header": [""] * 2,
            "proof_prefix": [[]] * 2,
        }
        assert reward(None, ["apply And.intro", "exact?"], **cols) == [1.0, 0.0]
    finally:
        reward.close()


class FakeChecker:
    """A whole-proof backend: proofs through sorryAx are what Lean reports for 'bad'."""

    name, metric = "kimina", "proof rate"

    def __init__(self, batched):
        self.calls = []
        if batched:
            self.check_many = self._many

    def check(self, theorem, proof):
        self.calls.append(("check", theorem.name))
        return self._result(theorem, proof)

    def _many(self, items):
        self.calls.append(("batch", [t.name for t, _ in items]))
        return [self._result(t, p) for t, p in items]

    @staticmethod
    def _result(theorem, proof):
        if proof == "timeout":
            return CheckResult("timeout", detail="slow")
        if proof == "down":
            return CheckResult("error", detail="HTTP 500")
        axioms = ("sorryAx",) if proof == "bad" else ("propext", "Classical.choice")
        return CheckResult("ok", axioms=axioms)

    def close(self):
        pass


@pytest.mark.parametrize("batched", [True, False])
def test_whole_proof_level_judges_with_the_soundness_rules(batched):
    checker = FakeChecker(batched)
    reward = LeanReward(backend="kimina", level="proof", lean_backend=checker)
    cols = {
        "full_name": ["a", "b", "c", "d", "e"],
        "formal_statement": [f"theorem {x} : True := by" for x in "abcde"],
        "header": ["import Mathlib"] * 5,
    }
    scores = reward(None, ["norm_num", "bad", "timeout", "down", "sorry"], **cols)
    assert scores == [1.0, 0.0, 0.0, None, 0.0]
    if batched:
        assert checker.calls == [("batch", ["a", "b", "c", "d"])]  # sorry: never sent
    else:
        assert [c[1] for c in checker.calls] == ["a", "b", "c", "d"]


def test_bad_settings_and_a_missing_repl_are_one_line():
    with pytest.raises(ConfigError, match="checks whole proofs only, not tactics"):
        LeanReward(backend="kimina")
    with pytest.raises(ConfigError, match="not a Lean backend"):
        LeanReward(backend="replay")
    with pytest.raises(ConfigError, match="choose tactic or proof"):
        LeanReward(backend="repl", level="step")
    with pytest.raises(MissingDependencyError, match="no-such-repl") as info:
        build_reward_funcs([{"name": "lean", "repl_command": "no-such-repl"}])
    assert "\n" not in info.value.one_line()


def test_missing_columns_are_clear():
    reward = LeanReward(backend="leandojo", lean_dojo=ld)
    with pytest.raises(LeanTrainError, match="full_name"):
        reward(None, ["simp"], url=["u"])


def test_the_old_name_is_the_same_reward_with_its_timeout_option():
    funcs, weights = build_reward_funcs(
        [
            {
                "name": "lean_verified",
                "weight": 2.0,
                "backend": "leandojo",
                "lean_dojo": ld,
                "timeout": 5,
            }
        ]
    )
    assert funcs[0].__name__ == "lean_verified" and weights == [2.0]
    assert funcs[0](prompts=None, completions=["intro h"], **dojo_columns(1, prefix=())) == [1.0]


def test_grpo_gives_the_reward_its_lean_settings(tmp_path):
    from leantrain.core.parser import parse
    from leantrain.llm.grpo_config import GRPOConfig
    from leantrain.llm.grpo_trainer import GRPOTrainer

    project = tmp_path / "repo"
    project.mkdir()
    cfg = parse(
        GRPOConfig,
        [
            "--reward", "lean", "--lean-backend", "repl", "--repl-command", "lake env repl",
            "--lean-project", str(project), "--output-dir", str(tmp_path / "g"),
            "--max-steps", "2", "--start-timeout", "120",
        ],
    )  # fmt: skip
    assert (cfg.backend, cfg.repl_command, cfg.lean_project) == (
        "repl",
        "lake env repl",
        str(project),
    )
    trainer = SimpleNamespace(config=cfg)
    spec = GRPOTrainer._with_lean_settings(trainer, "lean")
    assert spec["name"] == "lean" and spec["backend"] == "repl" and spec["level"] == "tactic"
    assert spec["lean_project"] == str(project) and spec["start_timeout"] == 120.0
    own = GRPOTrainer._with_lean_settings(trainer, {"name": "lean", "level": "proof"})
    assert own["level"] == "proof"
    assert GRPOTrainer._with_lean_settings(trainer, "format") == "format"
    with pytest.raises(ConfigError, match="replay is no Lean backend"):
        parse(GRPOConfig, ["--lean-backend", "replay", "--output-dir", str(tmp_path / "h")])
    with pytest.raises(ConfigError, match="backend"):
        parse(GRPOConfig, ["--lean-backend", "nope", "--output-dir", str(tmp_path / "h")])
    # unset, the reward's backend is repl
    plain = parse(GRPOConfig, ["--reward", "lean", "--output-dir", str(tmp_path / "i")])
    assert (
        GRPOTrainer._with_lean_settings(SimpleNamespace(config=plain), "lean")["backend"] == "repl"
    )


@pytest.mark.slow
def test_grpo_trains_with_the_lean_reward_on_a_repl_process(sft_rows, tmp_path):
    """``GRPOTrainer(reward_funcs=["lean"], lean_backend="repl", repl_command=…)``: the config's
    Lean settings reach the reward, which asks a REPL process (the fake, answering as the
    recorded transcripts) about each completion; training runs through its steps."""
    from leantrain.llm import GRPOTrainer

    log = tmp_path / "sent.log"
    repl = shlex.join([sys.executable, str(FAKE_REPL), "--use", "tactic_sorry", "--log", str(log)])
    rows = sft_rows.map(
        lambda r: {
            "full_name": "f",
            "formal_statement": "def f : Nat := by",
            "header": "",
            "proof_prefix": [],
        },
        remove_columns=["completion"],
    )
    trainer = GRPOTrainer(
        model_name="tiny",
        output_dir=tmp_path / "g",
        reward_funcs=["lean"],
        lean_backend="repl",  # GRPO's flag name of LeanArgs' backend
        repl_command=repl,
        tactic_timeout=20,
        max_steps=2,
        max_completion_length=4,
        num_generations=4,
        batch_size=4,
        evaluate_each_repo=False,
        logging_steps=1,
    )
    trainer.train(rows)
    sent = [s.strip() for s in log.read_text().splitlines()]
    assert '{"cmd": "def f : Nat := by sorry"}' in sent  # the theorem was started in Lean
    assert (tmp_path / "g" / "grpo" / "logs" / "000-dataset.jsonl").is_file()
