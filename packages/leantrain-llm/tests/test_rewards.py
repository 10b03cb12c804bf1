"""Text rewards, output validation and build_reward_funcs on hand-made completions."""

from __future__ import annotations

import math

import pytest
from leantrain.core.errors import ConfigError, LeanTrainError
from leantrain.core.registry import REWARDS
from leantrain.llm.rewards import (
    LengthPenaltyReward,
    ReferenceMatchReward,
    ValidatedReward,
    build_reward_funcs,
    completion_text,
    format_reward,
    mentions_premise,
    no_sorry_reward,
    premise_mention_reward,
    reference_match_reward,
    token_f1,
    validate_reward_output,
)


def conv(text: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": text}]


def test_completion_text_reads_both_formats():
    assert completion_text("simp") == "simp"
    assert completion_text(conv("rfl")) == "rfl"
    assert completion_text({"role": "assistant", "content": "omega"}) == "omega"
    assert completion_text([{"role": "user", "content": "x"}, *conv("ring")]) == "ring"
    with pytest.raises(LeanTrainError):
        completion_text(3.5)


def test_format_reward():
    completions = [
        "simp [foo]",
        "  rfl  ",
        "",
        "constructor\nsimp",
        "```lean\nsimp\n```",
        conv("omega"),
        "   ",
    ]
    assert format_reward(None, completions) == [1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]


def test_no_sorry_reward():
    completions = [
        "sorry",
        "exact sorry",
        "admit",
        "exact sorryAx _",
        "simp [admits_foo]",
        conv("linarith"),
    ]
    assert no_sorry_reward(None, completions) == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]


def test_reference_match_exact_normalised_and_partial():
    ref = "simp [Nat.add_comm, Nat.mul_comm]"
    completions = [
        ref,
        "  " + ref + "\n",
        "simp  [Nat.add_comm,   Nat.mul_comm]",
        "simp [Nat.add_comm]",
        "rfl",
        "",
    ]
    scores = reference_match_reward(None, completions, reference=[ref] * len(completions))
    assert scores[:3] == [1.0, 1.0, 1.0]
    # partial: tokens simp [ Nat.add_comm ] (4 of 4 in candidate, 4 of 6 in ref) → F1 = 0.8, × 0.5
    assert scores[3] == pytest.approx(0.5 * 0.8)
    assert scores[4:] == [0.0, 0.0]
    strict = ReferenceMatchReward(normalized_credit=0.5, partial_credit=0.0)
    assert strict(None, completions, reference=[ref] * 6) == [1.0, 1.0, 0.5, 0.0, 0.0, 0.0]
    assert token_f1("a b", "a b") == 1.0 and token_f1("x", "y") == 0.0


def test_reference_match_needs_the_column():
    with pytest.raises(LeanTrainError, match="needs the dataset column 'reference'"):
        reference_match_reward(None, ["simp"])
    with pytest.raises(ConfigError):
        ReferenceMatchReward(partial_credit=2.0)


def test_length_penalty():
    r = LengthPenaltyReward(max_chars=10, penalty=2.0)
    assert r(None, ["x" * 10, "x" * 15, "x" * 20, "x" * 50, conv(" short ")]) == [
        0.0,
        -1.0,
        -2.0,
        -2.0,
        0.0,
    ]
    with pytest.raises(ConfigError):
        LengthPenaltyReward(max_chars=0)


def test_premise_mention():
    completions = [
        "rw [Nat.add_comm, mul_comm]",
        "simp",
        "exact add_comm _ _",
        conv("rw [← Nat.add_comm]"),
        "x",
    ]
    premises = [
        ["Nat.add_comm", "Nat.mul_comm"],
        ["Nat.add_comm"],
        ["Nat.add_comm"],
        ["Nat.add_comm"],
        [],
    ]
    assert premise_mention_reward(None, completions, premises=premises) == [
        1.0,
        0.0,
        1.0,
        1.0,
        None,
    ]
    assert mentions_premise("exact Nat.le_refl n", "Nat.le_refl")
    assert not mentions_premise("exact le_refl' n", "Nat.le_refl")
    assert not mentions_premise("exact Int.add_comm", "Nat.add_comm")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([1.0], "returned 1 values for 2 completions"),
        ([1.0, float("nan")], "returned nan for completion 1"),
        ([1.0, float("inf")], "returned inf"),
        ([1.0, "1"], "non-numeric value for completion 1"),
        ([True, 1.0], "non-numeric"),
        (0.5, "not a list"),
    ],
)
def test_validate_reward_output_errors_name_the_reward(values, message):
    with pytest.raises(LeanTrainError, match=message) as e:
        validate_reward_output(values, 2, "my_reward")
    assert "my_reward" in str(e.value)


def test_validate_accepts_none_and_numbers():
    import numpy as np

    assert validate_reward_output([1, None, np.float32(0.5)], 3, "r") == [1.0, None, 0.5]


def test_build_reward_funcs_names_weights_options():
    funcs, weights = build_reward_funcs(
        [
            "format",
            {"name": "length_penalty", "weight": 0.5, "max_chars": 4},
            {"name": "length_penalty"},
        ]
    )
    assert [f.__name__ for f in funcs] == ["format", "length_penalty", "length_penalty_2"]
    assert weights == [1.0, 0.5, 1.0]
    assert all(isinstance(f, ValidatedReward) for f in funcs)
    assert funcs[1](prompts=None, completions=["abcdefgh"]) == [-1.0]
    assert funcs[2](prompts=None, completions=["abcdefgh"]) == [0.0]
    # TRL's call: keyword arguments plus extra columns and trainer objects it passes along
    assert funcs[0](
        prompts=["p"], completions=[conv("simp")], completion_ids=[[1]], trainer_state=None, x=[1]
    ) == [1.0]


def test_build_from_import_path_and_callable():
    funcs, _ = build_reward_funcs(["leantrain.llm.rewards:no_sorry_reward"], allow_code=True)
    assert funcs[0].__name__ == "no_sorry_reward"

    def constant(prompts, completions, **kwargs):
        return [0.25] * len(completions)

    funcs, weights = build_reward_funcs(
        [constant, {"name": "reference_match", "partial_credit": 0.0, "weight": 2}]
    )
    assert [f.__name__ for f in funcs] == ["constant", "reference_match"]
    assert weights == [1.0, 2.0]
    assert funcs[1](None, ["simp [a]"], reference=["simp [a, b]"]) == [0.0]


def test_factory_rewards_get_options():
    def make_bonus(*, value: float = 1.0):
        def bonus(prompts, completions, **kwargs):
            return [value] * len(completions)

        return bonus

    REWARDS.add("test_bonus_factory", make_bonus, overwrite=True)
    funcs, _ = build_reward_funcs([{"name": "test_bonus_factory", "value": 3.0}])
    assert funcs[0](None, ["a", "b"]) == [3.0, 3.0]


def test_wrapped_reward_errors_are_clear():
    def broken(prompts, completions, **kwargs):
        return [math.nan] * len(completions)

    def short(prompts, completions, **kwargs):
        return [1.0]

    funcs, _ = build_reward_funcs([broken, short])
    with pytest.raises(LeanTrainError, match="reward 'broken' returned nan"):
        funcs[0](None, ["a", "b"])
    with pytest.raises(LeanTrainError, match="reward 'short' returned 1 values for 2"):
        funcs[1](None, ["a", "b"])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("formatt", "did you mean 'format'"),
        ({"weight": 1.0}, "has no 'name'"),
        ({"name": "format", "max_chars": 3}, "takes no options"),
        ({"name": "length_penalty", "max_char": 3}, "invalid options"),
        ({"name": "format", "weight": "heavy"}, "weight must be a finite number"),
        ("nosuchmodule_xyz:fn", "cannot import module"),
    ],
)
def test_build_errors_are_config_errors(spec, message):
    with pytest.raises(ConfigError, match=message):
        build_reward_funcs([spec], allow_code=True)
    with pytest.raises(ConfigError, match="no reward functions"):
        build_reward_funcs([])


def test_registry_lists_builtins():
    for name in (
        "format",
        "no_sorry",
        "reference_match",
        "length_penalty",
        "premise_mention",
        "lean",
        "lean_verified",  # the old name of lean (PORTING.md)
    ):
        assert name in REWARDS
