"""Configuration of :class:`~leantrain.llm.GRPOTrainer`: TRL's ``GRPOConfig`` plus leantrain's
fields, the reward functions, the algorithm preset and a custom advantage function."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

import trl
from leantrain.core.config import setting, validate_fields
from leantrain.core.errors import ConfigError
from leantrain.lean.args import LeanArgs
from leantrain.llm.common_config import LeanTrainArguments


@dataclass
class GRPOConfig(
    LeanTrainArguments,
    LeanArgs,
    trl.GRPOConfig,
    defaults={
        "num_generations": 4,  # completions per prompt (group size)
        "per_device_train_batch_size": 4,
        "max_completion_length": 48,  # tokens: a tactic
        "logging_steps": 1,
        "save_steps": 50,
        "save_total_limit": 2,
    },
):
    """Every ``trl.GRPOConfig`` option, plus leantrain's groups, the rewards, the algorithm
    preset, the advantage function and how the ``lean`` reward reaches Lean (``lean_level``;
    leantrain-lean's :class:`LeanArgs`, whose ``backend`` is ``--lean-backend`` here)."""

    lean_level: Literal["tactic", "proof", "whole"] = setting(
        "tactic",
        "What the lean reward judges: tactic (it runs after the proof prefix and changes the "
        "state, or finishes a re-checked proof), proof (a whole tactic script) or whole (the "
        "proof in a --mode whole reply; --mode whole implies it).",
    )
    output_dir: str | None = setting(
        "runs/grpo", "Run directory (manifest, one model per repo, logs)."
    )
    reward_funcs: list[str | dict[str, Any]] = setting(
        ["format", "reference_match"],
        "Reward functions by registry name or 'module:function', or {name: …, …kwargs} mappings "
        "(repeat --reward for several).",
        aliases=("reward",),
    )
    algorithm: str | None = setting(
        None, "Algorithm preset applied over TRL's defaults: grpo, dr_grpo, dapo or bnpo."
    )
    advantage_fn: str | None = setting(
        None,
        "Advantage function (registry name or 'module:function') replacing TRL's group normalisation.",
    )
    activation_checkpointing: bool | None = setting(
        None, "Recompute activations in backward to save memory (slower); off by default."
    )

    def __post_init__(self) -> None:
        validate_fields(self)  # first: the ranges before anything reads the values
        self._whole_mode()
        if not self.reward_funcs:
            raise ConfigError(
                "GRPO needs at least one reward function",
                hint="e.g. --reward format --reward reference_match",
            )
        self._check_code()
        if self.algorithm is not None:
            from leantrain.llm.algorithms import algorithm_preset

            valid = {f.name for f in fields(self)}
            for key, value in algorithm_preset(self.algorithm, allow_code=self.allow_code).items():
                if key not in valid:
                    raise ConfigError(
                        f"algorithm preset '{self.algorithm}' sets unknown GRPOConfig key '{key}'"
                    )
                setattr(self, key, value)
        self._check_batch()
        self._resolve_precision()
        try:
            super().__post_init__()
        except ValueError as e:
            raise ConfigError(f"invalid GRPO settings: {e}") from None

    def _whole_mode(self) -> None:
        """What ``--mode whole`` (whole-proof prompts, :mod:`leantrain.tactics.whole_proof`)
        implies, and the settings that need it or refuse it."""
        if self.mode == "whole":
            self.lean_level = "whole"
            if self.reward_funcs == ["format", "reference_match"]:  # the defaults
                self.reward_funcs = ["whole_format", "reference_match"]
            if self.retriever:
                raise ConfigError(
                    "--mode whole asks without retrieved premises, and --retriever is set",
                    hint="leave --retriever out",
                )
        elif self.lean_level == "whole":
            raise ConfigError(
                "--lean-level whole judges whole-proof replies, and --mode is tactic",
                hint="add --mode whole, or use --lean-level tactic / proof",
            )
        elif self.backend == "replay":
            raise ConfigError(
                "--lean-backend replay: the lean reward asks Lean, and replay is no Lean backend",
                hint="choose one of: repl, kimina, pantograph, leandojo (replay: --mode whole "
                "only, where it accepts the traced proof)",
            )

    def _check_code(self) -> None:
        """Refuse unregistered ``module:attr`` names now (before anything is imported or run)
        unless ``allow_code`` / ``LEANTRAIN_ALLOW_CODE=1`` (the algorithm's: ``ALGORITHMS.get``)."""
        from leantrain.core.registry import ADVANTAGES, REWARDS

        specs = self.reward_funcs
        for spec in [specs] if isinstance(specs, (str, Mapping)) else specs:
            name = spec.get("name") if isinstance(spec, Mapping) else spec
            if isinstance(name, str):
                REWARDS.check_code(name, allow_code=self.allow_code)
        if isinstance(self.advantage_fn, str):
            ADVANTAGES.check_code(self.advantage_fn, allow_code=self.allow_code)

    def _check_batch(self) -> None:
        """Fail early, with the fix, on batch settings TRL would reject or crash on (it needs
        ``batch × processes × steps_per_generation`` divisible by ``num_generations``)."""
        n = self.num_generations
        if n is None or n < 2:
            raise ConfigError(
                f"num_generations must be at least 2 (GRPO compares completions of a prompt), got {n}"
            )
        procs = int(os.environ.get("WORLD_SIZE", "1"))  # set by torchrun / accelerate launch
        steps = self.steps_per_generation or self.gradient_accumulation_steps
        if self.generation_batch_size is not None and self.steps_per_generation is None:
            total = self.generation_batch_size
            what = f"generation_batch_size ({total})"
        else:
            total = self.per_device_train_batch_size * procs * steps
            what = (
                f"per_device_train_batch_size × processes × steps_per_generation "
                f"({self.per_device_train_batch_size} × {procs} × {steps} = {total})"
            )
        if total % n:
            divisors = [d for d in range(2, total + 1) if total % d == 0]
            best = max((d for d in divisors if d < n), default=min(divisors, default=None))
            options = [f"num_generations={best}"] if best else []
            if procs * steps == 1:
                batch = -(-self.per_device_train_batch_size // n) * n
                options.append(f"per_device_train_batch_size={batch}")
            raise ConfigError(
                f"{what} must be divisible by num_generations ({n})",
                hint="set " + " or ".join(options),
            )
