"""GRPO refinement of a tactic generator with reward functions, repo by repo.

Runs TRL's ``GRPOTrainer``; the only behaviour we change is the advantage computation when
``advantage_fn`` is set (:class:`AdvantageOverrideGRPOTrainer`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from leantrain.llm.grpo_config import GRPOConfig
from leantrain.llm.trainer_base import LLMTrainer


def advantage_override_trainer_class() -> type:
    """TRL's ``GRPOTrainer`` with the advantages replaced by ``advantage_fn(rewards, group_ids)``.

    TRL computes advantages inside ``_generate_and_score_completions`` from the rewards of all
    processes (gathered in ``_calculate_rewards``). The override point is minimal: remember the
    gathered per-function rewards in ``_calculate_rewards``, let TRL finish, then recompute the
    weighted reward sum, call the custom function with group ids (one id per prompt, shared by
    its ``num_generations`` completions) and put this process's slice in ``advantages``.
    """
    import torch
    import trl

    class AdvantageOverrideGRPOTrainer(trl.GRPOTrainer):
        advantage_fn: Callable[[Any, Any], Any] | None = None

        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):  # type: ignore[no-untyped-def]
            rewards_per_func = super()._calculate_rewards(
                inputs, prompts, completions, completion_ids_list
            )
            self._last_rewards_per_func = rewards_per_func
            return rewards_per_func

        def _generate_and_score_completions(self, inputs):  # type: ignore[no-untyped-def]
            output = super()._generate_and_score_completions(inputs)
            if self.advantage_fn is None:
                return output
            per_func = self._last_rewards_per_func
            rewards = (per_func * self.reward_weights.to(per_func.device).unsqueeze(0)).nansum(
                dim=1
            )
            mode = "train" if self.model.training else "eval"
            n = self.num_generations if mode == "train" else self.num_generations_eval
            group_ids = torch.arange(rewards.shape[0], device=rewards.device) // n
            advantages = torch.as_tensor(
                self.advantage_fn(rewards, group_ids), device=rewards.device
            ).float()
            local = len(output["advantages"])
            start = self.accelerator.process_index * local
            output["advantages"] = advantages[start : start + local]
            return output

    return AdvantageOverrideGRPOTrainer


class GRPOTrainer(LLMTrainer):
    """Lifelong GRPO on TRL's ``GRPOTrainer``.

    ::

        trainer = GRPOTrainer(model_name="runs/sft", reward_funcs=["format", "reference_match"],
                              output_dir="runs/grpo", max_steps=10)
        trainer.train("export_dir")

    ``reward_funcs`` (or ``reward_func``, LeanDojo-v2's name, also as the second positional
    argument) are registry names, ``module:function`` paths, dicts with options, or callables
    (given the tactic text as ``str``, returning a list or 1-D tensor); ``algorithm`` applies a
    preset, ``advantage_fn`` replaces TRL's advantage computation. ``model_name`` may be an SFT run dir (adapter or full weights).
    """

    name: ClassVar[str] = "grpo"
    config_class: ClassVar[type] = GRPOConfig

    def __init__(
        self,
        model_name: str | None = None,
        output_dir: str | Path | None = None,
        epochs_per_repo: float | None = None,
        batch_size: int | None = None,
        lr: float | None = None,
        lora_config: Any = None,
        reward_funcs: Sequence[Any] | Any = None,
        *,
        reward_func: Any = None,
        **kwargs: Any,
    ) -> None:
        if callable(output_dir) and reward_func is None:
            # LeanDojo-v2's positional order: (model_name, reward_func, output_dir, epochs, batch, lr, lora)
            reward_func, output_dir, epochs_per_repo, batch_size, lr, lora_config, reward_funcs = (
                output_dir,
                epochs_per_repo,
                batch_size,
                lr,
                lora_config,
                reward_funcs,
                None,
            )
        specs = reward_funcs if reward_funcs is not None else reward_func
        if specs is not None and (callable(specs) or isinstance(specs, (str, dict))):
            specs = [specs]
        plain = specs is not None and all(isinstance(s, str) for s in specs)
        if plain:
            kwargs["reward_funcs"] = list(specs)
        super().__init__(
            model_name, output_dir, epochs_per_repo, batch_size, lr, lora_config, **kwargs
        )
        self._reward_specs = list(specs) if specs is not None else list(self.config.reward_funcs)
        self._reward_funcs, weights = self._build_rewards()
        if self.config.reward_weights is None and any(w != 1.0 for w in weights):
            self.config.reward_weights = weights

    def _build_rewards(self) -> tuple[list[Any], list[float]]:
        from leantrain.llm.rewards import build_reward_funcs

        return build_reward_funcs(
            [self._with_lean_settings(s) for s in self._reward_specs],
            allow_code=self.config.allow_code,
        )

    def _with_lean_settings(self, spec: Any) -> Any:
        """The ``lean`` reward (or its old name ``lean_verified``) gets the config's Lean
        settings (``lean_level``, :class:`LeanArgs`: ``--lean-backend``, default repl); options
        the spec gives itself win."""
        name = (
            spec
            if isinstance(spec, str)
            else spec.get("name")
            if isinstance(spec, Mapping)
            else None
        )
        if name not in ("lean", "lean_verified"):
            return spec
        from dataclasses import asdict

        from leantrain.lean.args import lean_args

        cfg = self.config
        settings = {**asdict(lean_args(cfg)), "backend": cfg.backend_or("repl")}
        settings["level"] = cfg.lean_level
        own = dict(spec) if isinstance(spec, Mapping) else {}
        if "timeout" in own:  # lean_verified's name of tactic_timeout
            settings.pop("tactic_timeout")
        return {"name": name, **settings, **own}

    def _after_overrides(self, config: Any, values: dict[str, Any]) -> None:
        if "per_device_train_batch_size" in values:
            # generation_batch_size was derived from the old batch size: derive it again and re-check
            config.generation_batch_size = (
                None if config.steps_per_generation else config.generation_batch_size
            )
            config._check_batch()
            config.generation_batch_size = (
                config.per_device_train_batch_size * config.world_size * config.steps_per_generation
            )

    def _advantage_fn(self) -> Any:
        if not self.config.advantage_fn:
            return None
        from leantrain.llm.algorithms import get_advantage_fn

        return get_advantage_fn(self.config.advantage_fn, allow_code=self.config.allow_code)

    def _dataset(self, data: Any) -> Any:
        from leantrain.llm.training_data import load_rl_dataset, load_whole_dataset

        if self.config.mode == "whole":  # whole-proof prompts, one row per theorem
            return load_whole_dataset(
                data,
                self.config.train_split,
                self.config,
                max_samples=self.config.max_train_samples,
                prompt=self.prompt,
            )

        return load_rl_dataset(
            data,
            self.config.train_split,
            self.config,
            max_samples=self.config.max_train_samples,
            prompt=self.prompt,
        )

    def _trl_trainer(self, dataset: Any, args: Any, callbacks: list[Any]) -> Any:
        self._prepare_reference(self.model, args, Path(args.output_dir))
        cls = advantage_override_trainer_class()
        cls.advantage_fn = staticmethod(self._advantage_fn()) if self.config.advantage_fn else None
        return cls(
            model=self.model,
            reward_funcs=self._reward_funcs,
            args=args,
            train_dataset=dataset,
            processing_class=self.tokenizer,
            callbacks=callbacks,
        )

    def _extra_metrics(self, history: list[dict[str, Any]]) -> dict[str, Any]:
        rewards = [e["reward"] for e in history if "reward" in e]
        return {
            "first_reward": rewards[0] if rewards else None,
            "last_reward": rewards[-1] if rewards else None,
            "mean_reward": sum(rewards) / len(rewards) if rewards else None,
        }

    def _prepare_reference(self, model: Any, args: Any, work_dir: Path) -> None:
        """With a KL term (beta > 0) and no adapter to disable, TRL reloads the reference model
        from ``config._name_or_path``: point it at a saved copy of the policy at stage start
        (also makes it work for 'tiny', which is not on the hub). The copy lives in the step's
        work dir, which the engine deletes once the step is saved."""
        from peft import PeftModel

        if args.beta == 0.0 or isinstance(model, PeftModel):
            return
        ref_dir = work_dir / "reference_model"
        if not (ref_dir / "config.json").is_file():
            model.save_pretrained(ref_dir)
        model.config._name_or_path = str(ref_dir)
