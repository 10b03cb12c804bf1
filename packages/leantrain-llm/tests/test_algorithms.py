from __future__ import annotations

import dataclasses

import pytest
import torch
from leantrain.core.errors import ConfigError, LeanTrainError
from leantrain.core.registry import ADVANTAGES, ALGORITHMS
from leantrain.llm.algorithms import (
    PRESETS,
    algorithm_preset,
    get_advantage_fn,
    group_normalized_advantages,
    rloo_advantages,
)

REWARDS = torch.tensor([1.0, 0.0, 1.0, 0.0, 2.0, 2.0, 2.0, 5.0])
GROUPS = torch.tensor(
    [3, 3, 3, 3, 9, 9, 9, 4]
)  # ids need not be contiguous; group 4 has one member


def test_presets_are_real_grpo_config_fields():
    from trl import GRPOConfig

    names = {f.name for f in dataclasses.fields(GRPOConfig)}
    for name in ("grpo", "dr_grpo", "dapo", "bnpo"):
        preset = algorithm_preset(name)
        assert set(preset) <= names
        assert preset["loss_type"] == name
        cfg = GRPOConfig(output_dir="/tmp/unused", bf16=False, report_to=[], **preset)
        for key, value in preset.items():
            assert getattr(cfg, key) == value


def test_preset_choices_follow_the_papers():
    assert algorithm_preset("dapo")["epsilon_high"] == 0.28
    assert algorithm_preset("dapo")["mask_truncated_completions"] is True
    assert algorithm_preset("dr_grpo")["scale_rewards"] == "none"
    assert algorithm_preset("grpo")["beta"] > 0 and algorithm_preset("dapo")["beta"] == 0.0


def test_preset_is_a_copy_and_registered():
    p = algorithm_preset("dapo")
    p["beta"] = 1.0
    assert algorithm_preset("dapo")["beta"] == 0.0
    assert set(PRESETS) <= set(ALGORITHMS.names())
    with pytest.raises(ConfigError, match="did you mean 'dapo'"):
        algorithm_preset("dapoo")


def test_preset_from_a_registered_factory():
    ALGORITHMS.add(
        "test_gspo_like",
        lambda: {"loss_type": "grpo", "importance_sampling_level": "sequence"},
        overwrite=True,
    )
    assert algorithm_preset("test_gspo_like")["importance_sampling_level"] == "sequence"
    ALGORITHMS.add("test_not_a_dict", 3, overwrite=True)
    with pytest.raises(ConfigError, match="not a dict"):
        algorithm_preset("test_not_a_dict")


def test_group_normalized_by_hand():
    adv = group_normalized_advantages(REWARDS, GROUPS)
    # group 3: mean 0.5, unbiased std sqrt(1/3)
    std = (1 / 3) ** 0.5
    expected = torch.tensor([0.5 / (std + 1e-4), -0.5 / (std + 1e-4)] * 2 + [0.0, 0.0, 0.0, 0.0])
    torch.testing.assert_close(adv, expected)


def test_matches_trl_formula_on_contiguous_groups():
    torch.manual_seed(0)
    rewards = torch.rand(12)
    groups = torch.arange(3).repeat_interleave(4)
    grouped = rewards.view(3, 4)
    mean = grouped.mean(1).repeat_interleave(4)
    std = grouped.std(1).repeat_interleave(4)
    torch.testing.assert_close(
        group_normalized_advantages(rewards, groups), (rewards - mean) / (std + 1e-4)
    )


def test_dr_grpo_centres_without_scaling():
    adv = get_advantage_fn("dr_grpo")(REWARDS, GROUPS)
    torch.testing.assert_close(adv, torch.tensor([0.5, -0.5, 0.5, -0.5, 0.0, 0.0, 0.0, 0.0]))


def test_rloo_leave_one_out_baseline():
    rewards = torch.tensor([1.0, 2.0, 6.0, 3.0, 3.0, 7.0])
    groups = torch.tensor([0, 0, 0, 1, 1, 2])
    # r0 - mean(2, 6) = -3 ; r1 - mean(1, 6) = -1.5 ; r2 - mean(1, 2) = 4.5 ; equal pair → 0 ; alone → 0
    torch.testing.assert_close(
        rloo_advantages(rewards, groups), torch.tensor([-3.0, -1.5, 4.5, 0.0, 0.0, 0.0])
    )
    torch.testing.assert_close(
        get_advantage_fn("rloo")(rewards, groups), rloo_advantages(rewards, groups)
    )


@pytest.mark.parametrize("name", ["grpo", "dr_grpo", "rloo"])
def test_zero_variance_and_singletons_give_zeros_not_nan(name):
    fn = get_advantage_fn(name)
    rewards = torch.tensor([0.1, 0.1, 0.1, 0.7, 0.3])
    groups = torch.tensor([0, 0, 0, 1, 2])
    adv = fn(rewards, groups)
    assert torch.isfinite(adv).all()
    assert adv.tolist() == [0.0] * 5
    assert fn(torch.tensor([]), torch.tensor([], dtype=torch.long)).numel() == 0


def test_custom_advantage_by_import_path_and_validation():
    fn = get_advantage_fn("leantrain.llm.algorithms:rloo_advantages", allow_code=True)
    torch.testing.assert_close(fn(REWARDS, GROUPS), rloo_advantages(REWARDS, GROUPS))

    def bad_shape(rewards, group_ids):
        return rewards[:1]

    def bad_nan(rewards, group_ids):
        return rewards * float("nan")

    with pytest.raises(LeanTrainError, match="returned shape"):
        get_advantage_fn(bad_shape)(REWARDS, GROUPS)
    with pytest.raises(LeanTrainError, match="NaN"):
        get_advantage_fn(bad_nan)(REWARDS, GROUPS)
    with pytest.raises(ConfigError):
        get_advantage_fn("no_such_advantage")
    assert {"grpo", "dr_grpo", "rloo"} <= set(ADVANTAGES.names())


def test_shape_mismatch_is_an_error():
    with pytest.raises(LeanTrainError, match="same shape"):
        group_normalized_advantages(torch.zeros(3), torch.zeros(2, dtype=torch.long))
