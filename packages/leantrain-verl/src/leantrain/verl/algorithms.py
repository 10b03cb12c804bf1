"""``algorithm_type`` → VERL's own config options (checked against verl 0.9.1's sources).

Each entry is a dict of dotted VERL keys, applied over VERL's ``ppo_trainer.yaml`` *before* the
user's YAML (so the user's YAML and CLI overrides win). The keys are VERL's real options:
``algorithm.adv_estimator`` (a name of ``verl.trainer.ppo.core_algos.AdvantageEstimator`` or one
registered with ``register_adv_est``), ``actor.loss_agg_mode`` (``agg_loss``), the clip range
``clip_ratio_low/high``, ``actor.policy_loss.loss_mode`` (``register_policy_loss``), the KL loss,
``critic.enable``, ``reward.reward_manager.name`` and ``reward.reward_kwargs`` (DAPO's overlong
penalty of the ``dapo`` reward manager).

=================== ================================================================================
``ppo``              PPO with a critic: ``adv_estimator=gae`` (Schulman et al. 2017)
``grpo``             GRPO (Shao et al. 2024): group-normalised advantages, KL *loss* β=0.001
                     (``low_var_kl``), ``rollout.n`` > 1
``dr_grpo``          Dr. GRPO (Liu et al. 2025): no std scaling (``norm_adv_by_std_in_grpo=False``),
                     constant length normaliser (``loss_agg_mode=seq-mean-token-sum-norm``), no KL
``dapo``             DAPO (Yu et al. 2025): clip-higher 0.2/0.28, token-level loss, no KL,
                     overlong reward shaping (``dapo`` reward manager), dynamic sampling: groups whose
                     responses all score the same are dropped and refilled by verl's v1 trainer's
                     replay buffer (``algorithm.filter_groups``, ``trainer.use_v1``)
``rloo``             RLOO (Ahmadian et al. 2024): leave-one-out baseline
``reinforce_plus_plus``  REINFORCE++ (Hu 2025): batch-normalised returns, KL in the loss
``reinforce_plus_plus_baseline``  REINFORCE++ with a group-mean baseline
``remax``            ReMax (Li et al. 2023): greedy rollout as the baseline
``opo``              OPO (Hao et al. 2025): length-weighted optimal baseline
``gpg``              GPG (Chu et al. 2025): its advantage and policy loss
``grpo_passk``       Pass@k GRPO (Chen et al. 2025)
``gspo``             GSPO (Zheng et al. 2025): sequence-level ratio (``policy_loss.loss_mode=gspo``)
``prime``            PRIME-*style*: RLOO advantages on outcome (verifier) rewards. PRIME's implicit
                     process reward model is **not** in verl 0.9.1 (it left for the verl-recipe
                     repository): selecting ``prime`` logs one line saying what runs instead
=================== ================================================================================

The types are a registry (:data:`ALGORITHMS`, a :class:`leantrain.core.registry.Registry` of
:class:`Algorithm`): :func:`register_algorithm` adds one, and so does a package's
``leantrain.verl.algorithms`` entry point (an :class:`Algorithm`).
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import Any

from leantrain.core.errors import ConfigError
from leantrain.core.registry import Registry

_ACTOR = "actor_rollout_ref.actor"


@dataclass(frozen=True)
class Algorithm:
    """An algorithm type: the dotted VERL overrides it sets, and ``note``, a line logged when
    it is selected (what runs, where it differs from the published method)."""

    overrides: dict[str, Any] = field(default_factory=dict)
    note: str | None = None


ALGORITHMS: Registry[Algorithm] = Registry("VERL algorithm type", "leantrain.verl.algorithms")
"""The algorithm types by name (see the module docstring)."""


def register_algorithm(
    name: str, overrides: dict[str, Any], *, note: str | None = None, overwrite: bool = False
) -> Algorithm:
    """Add the algorithm type ``name``: ``overrides`` are dotted VERL keys applied over VERL's
    ``ppo_trainer.yaml`` before the user's YAML; ``note`` is logged when it is selected."""
    algorithm = Algorithm(dict(overrides), note)
    ALGORITHMS.add(name, algorithm, overwrite=overwrite)
    return algorithm


_BUILTIN: dict[str, dict[str, Any]] = {
    "ppo": {
        "algorithm.adv_estimator": "gae",
        "critic.enable": True,
        f"{_ACTOR}.use_kl_loss": False,
        "algorithm.use_kl_in_reward": False,
    },
    "grpo": {
        "algorithm.adv_estimator": "grpo",
        "algorithm.norm_adv_by_std_in_grpo": True,
        f"{_ACTOR}.use_kl_loss": True,
        f"{_ACTOR}.kl_loss_coef": 0.001,
        f"{_ACTOR}.kl_loss_type": "low_var_kl",
        f"{_ACTOR}.loss_agg_mode": "token-mean",
        "critic.enable": False,
    },
    "dr_grpo": {
        "algorithm.adv_estimator": "grpo",
        "algorithm.norm_adv_by_std_in_grpo": False,
        f"{_ACTOR}.loss_agg_mode": "seq-mean-token-sum-norm",
        f"{_ACTOR}.use_kl_loss": False,
        "critic.enable": False,
    },
    "dapo": {
        "algorithm.adv_estimator": "grpo",
        f"{_ACTOR}.clip_ratio_low": 0.2,
        f"{_ACTOR}.clip_ratio_high": 0.28,
        f"{_ACTOR}.clip_ratio_c": 10.0,
        f"{_ACTOR}.loss_agg_mode": "token-mean",
        f"{_ACTOR}.use_kl_loss": False,
        "algorithm.use_kl_in_reward": False,
        # dynamic sampling: verl 0.9.1's v1 trainer (main_ppo's default) drops the groups whose
        # rewards are all equal and refills the batch (trainer/ppo/v1/replay_buffer.py)
        "trainer.use_v1": True,
        "algorithm.filter_groups.enable": True,
        "algorithm.filter_groups.metric": "reward",
        "reward.reward_manager.name": "dapo",
        "reward.reward_kwargs.overlong_buffer_cfg.enable": True,
        "reward.reward_kwargs.overlong_buffer_cfg.len": 64,
        "reward.reward_kwargs.overlong_buffer_cfg.penalty_factor": 1.0,
        "reward.reward_kwargs.overlong_buffer_cfg.log": False,
        "reward.reward_kwargs.max_resp_len": "${data.max_response_length}",
        "critic.enable": False,
    },
    "rloo": {
        "algorithm.adv_estimator": "rloo",
        f"{_ACTOR}.use_kl_loss": True,
        "critic.enable": False,
    },
    "reinforce_plus_plus": {
        "algorithm.adv_estimator": "reinforce_plus_plus",
        f"{_ACTOR}.use_kl_loss": True,
        f"{_ACTOR}.kl_loss_type": "mse",
        "critic.enable": False,
    },
    "reinforce_plus_plus_baseline": {
        "algorithm.adv_estimator": "reinforce_plus_plus_baseline",
        f"{_ACTOR}.use_kl_loss": True,
        "critic.enable": False,
    },
    "remax": {
        "algorithm.adv_estimator": "remax",
        f"{_ACTOR}.use_kl_loss": False,
        "algorithm.use_kl_in_reward": True,
        "critic.enable": False,
    },
    "opo": {"algorithm.adv_estimator": "opo", "critic.enable": False},
    "gpg": {
        "algorithm.adv_estimator": "gpg",
        f"{_ACTOR}.policy_loss.loss_mode": "gpg",
        f"{_ACTOR}.use_kl_loss": False,
        "critic.enable": False,
    },
    "grpo_passk": {"algorithm.adv_estimator": "grpo_passk", "critic.enable": False},
    "gspo": {
        "algorithm.adv_estimator": "grpo",
        f"{_ACTOR}.policy_loss.loss_mode": "gspo",
        f"{_ACTOR}.loss_agg_mode": "seq-mean-token-mean",
        f"{_ACTOR}.clip_ratio_low": 0.0003,
        f"{_ACTOR}.clip_ratio_high": 0.0004,
        f"{_ACTOR}.use_kl_loss": False,
        "critic.enable": False,
    },
    "prime": {
        "algorithm.adv_estimator": "rloo",
        f"{_ACTOR}.use_kl_loss": False,
        "critic.enable": False,
    },
}
PRIME_NOTE = (
    "algorithm 'prime': verl 0.9.1 ships no PRIME implicit process reward model (it moved to "
    "the verl-recipe repository); running RLOO advantages on leantrain's outcome rewards instead"
)
for _name, _overrides in _BUILTIN.items():
    register_algorithm(_name, _overrides, note=PRIME_NOTE if _name == "prime" else None)

GROUP_ESTIMATORS = frozenset(
    {
        "grpo",
        "grpo_vectorized",
        "rloo",
        "rloo_vectorized",
        "reinforce_plus_plus_baseline",
        "opo",
        "gpg",
        "grpo_passk",
        "gdpo",
    }
)
"""Estimators that compare the responses of one prompt: they need ``rollout.n`` ≥ 2."""

NOT_COVERED: dict[str, str] = {
    "prime (implicit PRM)": "PRIME's implicit process reward model left verl core for the "
    "verl-recipe repository; 'prime' here is its outcome-reward (RLOO) part",
    "VAPO / VC-PPO": "value-pretraining and decoupled-GAE recipes are not in verl core",
}
"""Published algorithms (or parts) that verl 0.9.1's ``main_ppo`` does not implement."""


def get_algorithm(algorithm_type: str) -> Algorithm:
    """The registered ``algorithm_type``; an unknown one is one line with the closest name."""
    if algorithm_type not in ALGORITHMS:
        import difflib

        names = ALGORITHMS.names()
        close = difflib.get_close_matches(algorithm_type, names, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"choose from: {', '.join(names)}"
        raise ConfigError(f"unknown algorithm_type '{algorithm_type}'", hint=hint)
    algorithm = ALGORITHMS.get(algorithm_type)
    if not isinstance(algorithm, Algorithm):
        raise ConfigError(
            f"algorithm_type '{algorithm_type}' is registered as {algorithm!r}, not an Algorithm",
            hint="register it with leantrain.verl.register_algorithm(name, overrides)",
        )
    return algorithm


def algorithm_overrides(algorithm_type: str) -> dict[str, Any]:
    """The dotted VERL overrides of ``algorithm_type`` (a fresh copy)."""
    return copy.deepcopy(get_algorithm(algorithm_type).overrides)


def select_algorithm(algorithm_type: str) -> Algorithm:
    """:func:`get_algorithm`, logging its note (what runs instead of the published method)."""
    algorithm = get_algorithm(algorithm_type)
    if algorithm.note:
        logging.getLogger("leantrain.verl").warning(algorithm.note)
    return algorithm
