"""The ``progress`` GRPO reward on hand-made completions."""

from __future__ import annotations

from typing import Any

import pytest
from leantrain.core.errors import ConfigError
from leantrain.core.registry import REWARDS
from leantrain.progress import ProgressReward
from leantrain.progress.reward import completion_text


class TablePredictor:
    """Predicts steps remaining from a lookup table of tactics; records its calls."""

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table
        self.calls: list[tuple[list[str], list[Any], list[str]]] = []

    def predict_many(
        self, goals: list[str], prefixes: list[Any], tactics: list[str]
    ) -> list[float]:
        self.calls.append((list(goals), list(prefixes), list(tactics)))
        return [self.table[t] for t in tactics]


def test_reward_is_predicted_progress_against_the_reference() -> None:
    reward = ProgressReward(
        predictor=TablePredictor({"ref": 3.0, "simp": 1.0, "intro h": 3.0, "cases h": 5.0})
    )
    assert reward.__name__ == "progress"
    out = reward(
        prompts=["p"] * 5,
        completions=["simp", "intro h", "cases h", "sorry", "   "],
        problem=["⊢ p"] * 5,
        proof_prefix=[["intro"]] * 5,
        reference=["ref"] * 5,
    )
    # R0 - R + 1: shortens the proof by 2 more steps than the reference / as good / 2 worse.
    assert out == [3.0, 1.0, -1.0, -1.0, -1.0]


def test_chat_completions_and_fences_and_clip() -> None:
    pred = TablePredictor({"ref": 10.0, "simp": 1.0})
    reward = ProgressReward(predictor=pred, clip=5.0, penalty=-2.0)
    completions = [
        [{"role": "assistant", "content": "```lean\nsimp\n```"}],
        [{"role": "assistant", "content": "admit"}],
    ]
    out = reward(
        prompts=["x", "x"],
        completions=completions,
        problem=["⊢ q", "⊢ q"],
        proof_prefix=[[], []],
        reference=["ref", "ref"],
    )
    assert out == [5.0, -2.0]  # 10 - 1 + 1 = 10, clipped to 5
    assert pred.calls == [(["⊢ q", "⊢ q"], ["", ""], ["simp", "ref"])]  # invalid rows cost nothing


def test_without_reference_the_baseline_is_the_group_mean() -> None:
    reward = ProgressReward(predictor=TablePredictor({"a": 2.0, "b": 4.0, "c": 7.0}))
    out = reward(prompts=None, completions=["a", "b", "c"], problem=["⊢ s", "⊢ s", "⊢ t"])
    assert out == [2.0, 0.0, 1.0]


def test_completion_text_shapes() -> None:
    assert completion_text("  simp  ") == "simp"
    assert (
        completion_text(
            [{"role": "user", "content": "q"}, {"role": "assistant", "content": "ring"}]
        )
        == "ring"
    )
    assert completion_text({"role": "assistant", "content": "omega"}) == "omega"
    assert completion_text([]) == ""


def test_reward_with_a_real_model(trained: dict[str, Any]) -> None:
    reward = ProgressReward(trained["dir"])
    out = reward(
        prompts=["x"] * 2,
        completions=["alpha", "foxtrot"],
        problem=["⊢ y"] * 2,
        proof_prefix=[[]] * 2,
        reference=["charlie"] * 2,
    )
    assert out[0] > 1.0 > out[1]


def test_missing_model_fails_at_construction() -> None:
    with pytest.raises(ConfigError, match="LEANPROGRESS_MODEL"):
        ProgressReward()


def test_registered_as_entry_point() -> None:
    assert "progress" in REWARDS.names()
    assert REWARDS.get("progress") is ProgressReward
