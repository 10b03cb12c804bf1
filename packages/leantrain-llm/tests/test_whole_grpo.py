"""``grpo --mode whole``: the ``lean`` reward at whole-proof level against leantrain-lean's fake
REPL (a correct proof 1, one with ``sorry`` 0, a Lean error 0) and offline under ``replay`` (the
traced proof only), the shaping rewards, the config's implications, the whole-proof rows, and
``llm eval --mode whole`` (held-out proof loss)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from leantrain.core.errors import ConfigError, DataError
from leantrain.core.parser import parse
from leantrain.core.sample import sample_data_dir
from leantrain.llm.rewards import LeanReward, build_reward_funcs

LEAN_TESTS = Path(__file__).resolve().parents[2] / "leantrain-lean" / "tests"
sys.path.insert(0, str(LEAN_TESTS))
from conftest import MATHLIB_HEADER  # noqa: E402

FAKE_REPL = LEAN_TESTS / "fake_repl.py"
STATEMENT = "theorem mathd_numbertheory_188 : Nat.gcd 180 168 = 12 :="


def test_whole_level_on_the_fake_repl_correct_sorry_and_lean_error():
    uses = ("--use", "mathlib_H20231020", "--use", "unfinished_tactic_block")
    reward = LeanReward(
        backend="repl",
        level="whole",
        repl_command=shlex.join([sys.executable, str(FAKE_REPL), *uses]),
    )
    try:
        cols = {
            "full_name": ["mathd_numbertheory_188"] * 2 + ["f"],
            "formal_statement": [STATEMENT] * 2 + ["def f : Nat :="],
            "header": [MATHLIB_HEADER] * 2 + [""],
        }
        replies = [
            "```lean4\nby\n  norm_num\n```",  # a correct proof, fenced: 1
            "by sorry",  # refused before Lean: 0
            "by skip",  # Lean: unsolved goals: 0
        ]
        scores = reward(None, replies, **cols)
        assert scores == [1.0, 0.0, 0.0]
        assert reward.stats == {"proved": 1, "refused": 1, "rejected": 1}
    finally:
        reward.close()


def test_whole_level_offline_under_replay_accepts_only_the_traced_proof():
    reward = LeanReward(backend="replay", level="whole")
    reference = "by\n  obtain ⟨a, rfl⟩ := hm\n  omega"
    replies = ["by obtain ⟨a, rfl⟩ := hm\n   omega", "by omega", "by sorry", ""]
    cols = {"full_name": ["t"] * 4, "reference": [reference] * 4}
    assert reward(None, replies, **cols) == [1.0, 0.0, 0.0, 0.0]
    with pytest.raises(ConfigError, match="not a Lean backend"):
        LeanReward(backend="replay", level="proof")


def test_shaping_rewards_for_whole_proofs():
    funcs, _ = build_reward_funcs(["whole_format", {"name": "proof_length", "max_chars": 10}])
    fmt, length = funcs
    replies = ["by simp", "```lean\nby simp\n```", "```lean\nby simp", "by sorry", "", "x" * 20]
    assert fmt(None, replies) == [1.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    assert length(None, ["by simp", "y" * 15, "y" * 40]) == [0.0, -0.5, -1.0]


def test_mode_whole_implies_the_whole_level_and_whole_rewards(tmp_path):
    from leantrain.llm.grpo_config import GRPOConfig

    out = ["--output-dir", str(tmp_path / "g")]
    cfg = parse(GRPOConfig, ["--mode", "whole", "--lean-backend", "replay", *out])
    assert cfg.lean_level == "whole" and cfg.backend == "replay"
    assert cfg.reward_funcs == ["whole_format", "reference_match"]
    with pytest.raises(ConfigError, match=r"--lean-level whole .* --mode is tactic"):
        parse(GRPOConfig, ["--lean-level", "whole", *out])
    with pytest.raises(ConfigError, match="replay is no Lean backend"):
        parse(GRPOConfig, ["--lean-backend", "replay", *out])


def test_whole_rows_of_an_export():
    from types import SimpleNamespace

    from leantrain.llm.training_data import whole_rows
    from leantrain.tactics.whole_proof import WHOLE_PROOF_SYSTEM_PROMPT

    cfg = SimpleNamespace(split_strategy="random")
    rows = whole_rows(sample_data_dir() / "nat-basics", "test", cfg)
    by_name = {r["full_name"]: r for r in rows}
    row = by_name["NatBasics.add_zero'"]
    assert row["prompt"][0]["content"] == WHOLE_PROOF_SYSTEM_PROMPT
    assert row["prompt"][1]["content"] == "theorem add_zero' (n : ℕ) : n + 0 = n :="
    assert row["reference"] == "by\n  exact Nat.add_zero n" and row["origin"] == "tactics"
    assert row["formal_statement"] is None  # an export's statement: read from --lean-project
    assert len(whole_rows(sample_data_dir() / "nat-basics", "test", cfg, max_samples=1)) == 1


def test_a_split_without_statements_is_one_line(tmp_path):
    from types import SimpleNamespace

    from leantrain.llm.training_data import whole_rows

    split = tmp_path / "test.json"
    split.write_text(
        '[{"url": "u", "commit": "c", "file_path": "F.lean", "full_name": "t", '
        '"start": [1, 1], "end": [1, 2], "traced_tactics": []}]'
    )
    # (a record with neither a statement nor a traced initial state has nothing to state)
    with pytest.raises(DataError, match=r"no theorem with a statement \(.*traced initial state"):
        whole_rows(split, "test", SimpleNamespace(split_strategy="random"))


@pytest.mark.slow
def test_grpo_whole_trains_on_the_replay_reward_and_saves_its_prompt(tmp_path):
    from leantrain.llm import GRPOTrainer
    from leantrain.tactics.model_prompt import read_prompt
    from leantrain.tactics.whole_proof import WHOLE_PROOF_SYSTEM_PROMPT

    trainer = GRPOTrainer(
        model_name="tiny",
        output_dir=tmp_path / "g",
        mode="whole",
        reward_funcs=["whole_format", "lean"],
        lean_backend="replay",
        max_steps=1,
        max_completion_length=8,
        num_generations=2,
        batch_size=2,
        evaluate_each_repo=False,
    )
    result = trainer.train(sample_data_dir() / "nat-basics")
    saved = read_prompt(Path(result["model_dir"]))
    assert saved.mode == "whole" and saved.system_prompt == WHOLE_PROOF_SYSTEM_PROMPT
    metrics = trainer.evaluate(sample_data_dir() / "nat-basics", "test")
    assert metrics["eval_loss"] > 0  # the held-out proofs' loss


@pytest.mark.slow  # loads the tiny model
def test_llm_eval_mode_whole_is_the_held_out_proof_loss():
    from leantrain.core.config import config_from_dict
    from leantrain.llm.eval_config import EvalConfig
    from leantrain.llm.runner import evaluate_command

    data = str(sample_data_dir() / "nat-basics")
    values = {"model_name": "tiny", "data_path": data, "mode": "whole", "eval_k": 1}
    config = config_from_dict(EvalConfig, {**values, "eval_max_new_tokens": 4})
    metrics = evaluate_command(config)
    assert metrics["num_examples"] == 3  # the three test theorems' whole proofs
    assert metrics["eval_loss"] > 0 and metrics["top1_accuracy"] == 0.0
