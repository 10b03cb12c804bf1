"""The VERL reward manager that hands VERL's responses to a leantrain reward manager.

Loaded by VERL itself (``reward.reward_manager.source: importlib``, ``module.path:
pkg://leantrain.verl.verl_reward_manager``, ``name: LeantrainRewardManager``); it imports verl,
so nothing else in leantrain.verl imports it. The leantrain manager is named in
``reward.custom_reward_function.reward_kwargs.leantrain_manager`` (options in
``…reward_kwargs.leantrain_manager_options``), the kwargs VERL also hands ``compute_score``.
verl 0.9's reward loop scores one response at a time (``run_single``), so under VERL the
manager sees batches of one item. A class of the seed's contract is built with VERL's
tokenizer, ``num_examine`` (its option, default 0), the config and leantrain's
``compute_score`` (the run's rewards), and called on the one-response ``DataProto``.
"""

from __future__ import annotations

import functools
from typing import Any

from leantrain.verl import rewards
from leantrain.verl.worker_setup import ensure_worker_imports

from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase


class LeantrainRewardManager(RewardManagerBase):
    """VERL ``RewardManagerBase`` over a ``@register_reward_manager`` class."""

    def __init__(self, config: Any, tokenizer: Any, compute_score: Any = None, **kwargs: Any):
        super().__init__(config, tokenizer, compute_score)
        function = config.reward.get("custom_reward_function") or {}
        reward_kwargs = {
            **dict(config.reward.get("reward_kwargs", {}) or {}),
            **dict(function.get("reward_kwargs", {}) or {}),
        }
        name = reward_kwargs.get("leantrain_manager")
        if not name:
            raise ValueError(
                "reward.custom_reward_function.reward_kwargs.leantrain_manager names no reward "
                "manager"
            )
        options = dict(reward_kwargs.get("leantrain_manager_options", {}) or {})
        ensure_worker_imports()  # the module that registered it, if the setup hook has not run
        cls = rewards.REWARD_MANAGERS.get(str(name))
        self.seed = rewards.manager_contract(cls, str(name), options) == "seed"
        if self.seed:
            score = functools.partial(
                rewards.compute_score,
                rewards=reward_kwargs.get("rewards"),
                allow_code=bool(reward_kwargs.get("allow_code")),
            )
            options.setdefault("num_examine", 0)
            self.manager = cls(tokenizer=tokenizer, config=config, compute_score=score, **options)
        else:
            self.manager = cls(**options)

    async def run_single(self, data: Any) -> dict:
        if self.seed:
            score = rewards.seed_scores(self.manager(data[-1:]), 1)[0]
            return {"reward_score": score, "reward_extra_info": {"acc": score}}
        item = data[-1:][0]
        response_ids = item.batch["responses"]
        length = int(item.batch["attention_mask"][-response_ids.shape[-1] :].sum())
        text = self.tokenizer.decode(response_ids[:length], skip_special_tokens=True)
        extra = dict(item.non_tensor_batch.get("extra_info", {}) or {})
        entry = {
            "data_source": item.non_tensor_batch.get("data_source"),
            "input_text": extra.get("problem", ""),
            "response_text": text,
            "ground_truth": item.non_tensor_batch["reward_model"]["ground_truth"],
            "extra_info": extra,
        }
        score = self.manager([entry])[0]
        score = float(score["score"] if isinstance(score, dict) else score)
        return {"reward_score": score, "reward_extra_info": {"acc": score}}
