"""leantrain's settings of a VERL run: the YAML's ``leantrain:`` section (:class:`LeantrainSection`)
and the options of ``leantrain verl train`` / ``convert``. VERL's own sections are composed and
checked by :mod:`leantrain.verl.verl_config`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leantrain.core.config import setting
from leantrain.core.errors import ConfigError
from leantrain.core.groups import Group, LifelongData, RunSwitches
from leantrain.llm.common_config import EvalArgs, TrainLimitArgs
from leantrain.tactics.dataset_config import GuardArgs, PromptArgs, SplitArgs


@dataclass
class VerlArgs(Group):
    """The model VERL starts from and how its responses are scored."""

    model_name: str | None = setting(
        None,
        "Base model (HF dir or hub id) when the step has no previous checkpoint (default: the "
        "YAML's actor_rollout_ref.model.path).",
        aliases=("model",),
    )
    rewards: list[Any] | None = setting(
        None, "Reward names / dicts for compute_score (default: format, no_sorry, reference_match)."
    )
    reward_manager: str | None = setting(
        None, "A @register_reward_manager name (replaces compute_score)."
    )
    reward_manager_options: dict[str, Any] | None = setting(
        None, "Options of the reward manager class."
    )


@dataclass
class VerlRows(GuardArgs, SplitArgs, PromptArgs):
    """The splits and prompt of the rows VERL trains on (tactic rows, or whole-proof rows in
    ``mode: whole``: :mod:`leantrain.verl.data`) and the contamination guard run before they
    are converted."""

    def check_group(self) -> None:
        """``mode: whole`` asks without retrieved premises: a retriever is one line (as
        ``leantrain grpo --mode whole``)."""
        if self.mode == "whole" and self.retriever:
            raise ConfigError(
                "--mode whole asks without retrieved premises, and --retriever is set",
                hint="leave --retriever out",
            )


@dataclass
class LeantrainSection(EvalArgs, TrainLimitArgs, RunSwitches, VerlRows, VerlArgs):
    """The YAML's ``leantrain:`` section (also ``leantrain.KEY=VALUE`` overrides and the
    manager's keyword arguments): :class:`VerlArgs` and the groups every trainer shares, read by
    :func:`leantrain.core.config.config_from_dict`, so a bad key or value fails in one line."""


@dataclass
class VerlTrainArgs(LeantrainSection, LifelongData):
    """What ``leantrain verl train`` runs; the section's flags given win over the YAML's."""

    config: str | None = setting(
        None, "YAML in VERL's sections (+ an optional leantrain: section)."
    )
    algorithm: str = setting("grpo", "Algorithm type (see 'leantrain verl algorithms').")
    output_dir: str = setting("runs/verl", "Run directory.", aliases=("out",))
    core_algos: str | None = setting(
        None, "Module holding a custom advantage function (your code: imported)."
    )
    core_function: str | None = setting(
        None, "The function in --core_algos (default: the one that fits)."
    )
    dry_run: bool = setting(False, "Print the resolved config and command, then stop.")
    overrides: list[str] = setting(
        [],
        "KEY=VALUE: VERL overrides (data.train_batch_size=8) or keys of the leantrain: section "
        "(leantrain.eval_k=8, leantrain.rewards=[format,no_sorry]).",
        positional=True,
    )


@dataclass
class ConvertArgs(VerlRows):
    """``leantrain verl convert``: leantrain data → VERL parquet."""

    data_path: str = setting(help="Export dir or split file.", aliases=("data",))
    output_dir: str = setting(help="Where train.parquet / val.parquet go.", aliases=("out",))
