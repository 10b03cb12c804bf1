"""Every leantrain reward through VERL's compute_score, the registries, VERL's reward manager."""

from __future__ import annotations

import math

import pytest
from leantrain.core.errors import ConfigError
from leantrain.verl.rewards import (
    REWARD_FUNCTIONS,
    REWARD_MANAGERS,
    compute_score,
    register_reward_function,
    register_reward_manager,
    score_batch,
)

EXTRA = {
    "problem": "n : ℕ\n⊢ n + 0 = n",
    "reference": "simp [Nat.add_zero]",
    "premises": ["Nat.add_zero"],
    "proof_prefix": [],
    "url": "https://github.com/x/y",
    "commit": "c0ffee",
    "file_path": "Y.lean",
    "full_name": "thm",
    "tactic_index": 0,
    "split": "train",
    "index": 0,
}


def score(text, rewards):
    return compute_score("leantrain/lean4_tactic", text, EXTRA["reference"], EXTRA, rewards=rewards)


def test_text_rewards():
    assert score("simp [Nat.add_zero]", ["format"])["score"] == 1.0
    assert score("```lean\nsimp\n```", ["format"])["score"] == 0.0
    assert score("sorry", ["no_sorry"])["score"] == 0.0
    assert score("simp [Nat.add_zero]", ["reference_match"])["score"] == 1.0
    partial = score("simp", ["reference_match"])["score"]
    assert 0 < partial < 1
    assert score("x" * 400, [{"name": "length_penalty", "max_chars": 10}])["score"] < 0
    assert score("rw [Nat.add_zero]", ["premise_mention"])["score"] == 1.0


def test_weights_and_breakdown():
    out = score("simp [Nat.add_zero]", ["format", {"name": "reference_match", "weight": 2.0}])
    assert out == {"score": 3.0, "format": 1.0, "reference_match": 1.0}
    assert set(score("simp", None)) == {"score", "format", "no_sorry", "reference_match"}


def test_the_lean_reward_through_the_contract():
    """VERL's Lean reward is leantrain's ``lean`` (leantrain-lean's contract, same soundness
    rules): a tactic that changes the state scores, one Lean refuses does not, ``sorry`` never
    reaches Lean; ``lean_verified`` is its old name."""
    from leantrain.lean import Outcome, State

    sent = []

    class Session:
        initial_state = State("n : ℕ\n⊢ n + 0 = n")

        def run(self, state, tactic):
            sent.append(tactic)
            if tactic == "rw [Nat.add_zero]":
                return Outcome("state", State("n : ℕ\n⊢ n = n"))
            return Outcome("error", message="unknown tactic")

        def close(self):
            pass

    class Lean:
        name, metric = "repl", "proof rate"

        def start(self, theorem):
            return Session()

        def close(self):
            pass

    extra = {**EXTRA, "formal_statement": "theorem thm (n : ℕ) : n + 0 = n", "header": ""}

    def lean_score(text, spec):
        return compute_score("leantrain/lean4_tactic", text, "", extra, rewards=spec)["score"]

    for name in ("lean", "lean_verified"):
        spec = [{"name": name, "backend": "repl", "lean_backend": Lean()}]
        assert lean_score("rw [Nat.add_zero]", spec) == 1.0
        assert lean_score("skip", spec) == 0.0
    sent.clear()
    assert lean_score("sorry", spec) == 0.0 and sent == []


def test_progress_reward_with_a_predictor():
    pytest.importorskip("leantrain.progress")

    class Predictor:
        def predict_many(self, goals, prefixes=None, tactics=None, **kw):
            return [1.0 for _ in goals]

    out = score("simp", [{"name": "progress", "predictor": Predictor()}])
    assert math.isfinite(out["score"])


def test_registered_reward_function_and_manager():
    @register_reward_function("test_len_ratio", overwrite=True)
    def len_ratio(input_text, response_text, **kwargs):
        assert kwargs["ground_truth"] == EXTRA["reference"]
        return len(response_text) / len(kwargs["ground_truth"])

    assert "test_len_ratio" in REWARD_FUNCTIONS
    assert score("simp", ["test_len_ratio"])["score"] == pytest.approx(4 / 19)

    @register_reward_manager("test_batch_rank", overwrite=True)
    class Rank:
        def __init__(self, bonus=0.0):
            self.bonus = bonus

        def __call__(self, items):
            lengths = [len(i["response_text"]) for i in items]
            return [float(sorted(lengths).index(n)) + self.bonus for n in lengths]

    assert "test_batch_rank" in REWARD_MANAGERS
    items = [{"response_text": t, "input_text": ""} for t in ("ccc", "a", "bb")]
    assert score_batch("test_batch_rank", items, bonus=1.0) == [3.0, 1.0, 2.0]


def test_unknown_reward_names_the_closest():
    with pytest.raises(ConfigError, match="did you mean 'format'"):
        score("simp", ["formt"])
    with pytest.raises(ConfigError, match="allow_code"):
        score("simp", ["os:getcwd"])


@pytest.mark.slow
def test_verl_naive_reward_manager_calls_compute_score(tiny_dir):
    """VERL's own NaiveRewardManager scores a hand-made DataProto with our compute_score."""

    import numpy as np
    import torch
    from leantrain.llm.model_loading import load_tokenizer
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager

    tok = load_tokenizer(tiny_dir)
    prompt = tok("state", return_tensors="pt")["input_ids"][0]
    outputs = []
    manager = NaiveRewardManager(OmegaConf.create({}), tok, compute_score)
    for text in ("simp [Nat.add_zero]", "sorry"):
        resp = tok(text, return_tensors="pt")["input_ids"][0]
        data = DataProto.from_dict(
            tensors={
                "prompts": prompt[None],
                "responses": resp[None],
                "attention_mask": torch.ones(1, len(prompt) + len(resp), dtype=torch.long),
            },
            non_tensors={
                "data_source": np.array(["leantrain/lean4_tactic"], dtype=object),
                "reward_model": np.array([{"ground_truth": EXTRA["reference"]}], dtype=object),
                "extra_info": np.array([dict(EXTRA)], dtype=object),
            },
        )
        outputs.append(manager.loop.run_until_complete(manager.run_single(data)))
    assert outputs[0]["reward_score"] == 3.0  # format + no_sorry + exact match
    assert outputs[1]["reward_score"] < 2.0
    assert outputs[0]["reward_extra_info"]["reference_match"] == 1.0
