"""Custom advantages: found in a module, registered with VERL's register_adv_est, and actually
called by VERL's compute_advantage (the function the trainer calls each step)."""

from __future__ import annotations

import pytest
from leantrain.core.errors import ConfigError
from leantrain.verl.core_algos import CustomAdvantage, find_advantage_function


def test_naming_the_module_is_the_opt_in(algos_module, monkeypatch):
    monkeypatch.delenv("LEANTRAIN_ALLOW_CODE", raising=False)
    assert find_advantage_function(algos_module).function == "compute_weighted_grpo_advantage"


def test_picks_the_function_that_fits_the_algorithm(algos_module):
    grpo = find_advantage_function(algos_module, algorithm_type="grpo")
    assert grpo.function == "compute_weighted_grpo_advantage"
    rloo = find_advantage_function(algos_module, algorithm_type="rloo")
    assert rloo.function == "compute_plain_rloo_advantage"
    with pytest.raises(ConfigError, match="several advantage functions fit"):
        find_advantage_function(algos_module, algorithm_type="ppo")
    named = find_advantage_function(
        algos_module, "compute_plain_rloo_advantage", algorithm_type="ppo"
    )
    assert named.spec == f"{algos_module}:compute_plain_rloo_advantage"
    with pytest.raises(ConfigError, match="does not take"):
        find_advantage_function(algos_module, "helper")
    with pytest.raises(ConfigError, match="no function 'nope'"):
        find_advantage_function(algos_module, "nope")


@pytest.mark.slow
def test_verl_compute_advantage_calls_the_registered_function(algos_module):
    import numpy as np
    import torch
    from leantrain.verl.core_algos import register, setup_worker
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY
    from verl.trainer.ppo.ray_trainer import compute_advantage

    custom = CustomAdvantage(algos_module, "compute_weighted_grpo_advantage")
    name = register(custom)
    assert name in ADV_ESTIMATOR_REGISTRY
    rewards = torch.zeros(4, 3)
    rewards[:, -1] = torch.tensor([1.0, 0.0, 1.0, 0.0])
    mask = torch.ones(4, 3)
    data = DataProto.from_dict(
        tensors={"token_level_rewards": rewards, "response_mask": mask},
        non_tensors={"uid": np.array(["a", "a", "b", "b"], dtype=object)},
    )
    config = OmegaConf.create({"use_pf_ppo": False})
    out = compute_advantage(data, name, config=config)
    expected = torch.tensor([1.5, -1.5, 1.5, -1.5])[:, None].expand(4, 3)
    assert torch.allclose(out.batch["advantages"], expected)
    # VERL's own GRPO gives a different answer on the same batch: ours was really used
    grpo = compute_advantage(data, "grpo", config=config).batch["advantages"]
    assert not torch.allclose(grpo, expected)

    # what Ray workers run (worker_process_setup_hook) registers the same function again
    del ADV_ESTIMATOR_REGISTRY[name]
    import os

    os.environ["LEANTRAIN_VERL_CORE_ALGOS"] = custom.spec
    try:
        setup_worker()
    finally:
        del os.environ["LEANTRAIN_VERL_CORE_ALGOS"]
    assert name in ADV_ESTIMATOR_REGISTRY
