"""User reward functions get the tactic text (str) unless they ask for chat messages; their
output (list or 1-D tensor) is checked; leantrain's own rewards work either way."""

from __future__ import annotations

import math

import pytest
import torch
from leantrain.core.errors import LeanTrainError
from leantrain.llm.rewards import (
    ValidatedReward,
    build_reward_funcs,
    declares_messages,
    wants_messages,
)

CONV = [
    [{"role": "assistant", "content": "exact sorry"}],
    [{"role": "assistant", "content": "simp [Nat.add_comm]"}],
]


def leandojo_reward(completions, **kwargs):
    """LeanDojo-v2's documented signature, returning a tensor."""
    return torch.tensor([0.0 if "sorry" in c else 1.0 for c in completions])


def _call(func, completions=CONV, **columns):
    (reward,), _ = build_reward_funcs([func])
    return reward(prompts=["p", "p"], completions=completions, completion_ids=[[1], [2]], **columns)


def test_leandojo_style_reward_gets_strings_and_scores_the_tactic():
    # on message lists '"sorry" in c' would be False for both: the silent wrong result
    assert _call(leandojo_reward) == [0.0, 1.0]


def test_len_of_a_completion_is_the_tactic_length():
    def length(completions, **kwargs):
        return [float(len(c)) for c in completions]

    assert _call(length) == [11.0, 19.0]


def test_reward_declaring_messages_gets_them():
    def by_annotation(completions: list[list[dict[str, str]]], **kwargs):
        return [float(c[-1]["role"] == "assistant") for c in completions]

    @wants_messages
    def by_flag(completions, **kwargs):
        return [float(isinstance(c, list)) for c in completions]

    class ByClassFlag:
        wants_messages = True

        def __call__(self, completions, **kwargs):
            return [float(isinstance(c, list)) for c in completions]

    for func in (by_annotation, by_flag, ByClassFlag()):
        assert declares_messages(func)
        assert _call(func) == [1.0, 1.0]


def test_text_annotations_and_plain_functions_get_text():
    def typed(completions: list[str], **kwargs) -> list[float]:
        return [float(isinstance(c, str)) for c in completions]

    assert not declares_messages(typed) and not declares_messages(leandojo_reward)
    assert _call(typed) == [1.0, 1.0]


def test_a_reward_without_kwargs_gets_only_what_it_names():
    def exact(completions, reference):
        return [float(c == r) for c, r in zip(completions, reference)]

    assert _call(exact, reference=["rfl", "simp [Nat.add_comm]"]) == [0.0, 1.0]


def test_builtin_rewards_unchanged_with_text_and_messages():
    funcs, _ = build_reward_funcs(["no_sorry", "format", "reference_match"])
    for completions in (CONV, ["exact sorry", "simp [Nat.add_comm]"]):
        ref = ["simp", "simp [Nat.add_comm]"]
        got = [f(None, completions, reference=ref) for f in funcs]
        assert got[0] == [0.0, 1.0] and got[1] == [1.0, 1.0] and got[2][1] == 1.0


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (torch.tensor([1.0]), "returned 1 values for 2 completions"),
        (torch.tensor([[1.0], [0.0]]), r"shape \(2, 1\)"),
        (torch.tensor(1.0), r"shape \(\)"),
        (torch.tensor([1.0, math.nan]), "returned nan for completion 1"),
        (["a", "b"], "non-numeric value for completion 0"),
        ([1.0, object()], "non-numeric value for completion 1"),
        ({"a": 1.0, "b": 2.0}, "non-numeric"),
    ],
)
def test_bad_user_output_is_a_clear_error(returned, message):
    def bad(completions, **kwargs):
        return returned

    with pytest.raises(LeanTrainError, match=message) as e:
        _call(bad)
    assert "reward 'bad'" in str(e.value)


def test_validated_reward_flag_overrides_detection():
    seen = []

    def spy(completions, **kwargs):
        seen.append(completions[0])
        return [0.0] * len(completions)

    ValidatedReward(spy, "spy", messages=True)(None, CONV)
    ValidatedReward(spy, "spy")(None, CONV)
    assert seen == [CONV[0], "exact sorry"]
