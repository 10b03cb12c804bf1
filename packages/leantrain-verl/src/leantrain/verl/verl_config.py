"""Compose a VERL config: VERL's own ``ppo_trainer.yaml`` (Hydra) ← algorithm ← user YAML ← CLI.

The base is composed from the installed verl's ``verl/trainer/config`` without importing verl
(that loads torch and Ray). Merging is done in OmegaConf's struct mode, so an unknown key is one
line naming the file, the full key and the closest valid key. :func:`validate_config` checks what
VERL would find only after Ray and the workers have started.
"""

from __future__ import annotations

import copy
import difflib
import functools
import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from leantrain.core.config import parse_yaml, read_yaml_file
from leantrain.core.errors import ConfigError, MissingDependencyError
from leantrain.verl.algorithms import GROUP_ESTIMATORS, algorithm_overrides

# keys whose sub-dicts are free-form in VERL (added to, not checked against, the base)
_OPEN_KEYS = ("reward.reward_kwargs", "ray_kwargs.ray_init.runtime_env")

LEANTRAIN_DEFAULTS: dict[str, Any] = {
    "trainer.project_name": "leantrain",
    "trainer.experiment_name": "verl",
    "trainer.logger": ["console"],
    "trainer.val_before_train": False,
    "data.prompt_key": "prompt",
    "data.reward_fn_key": "data_source",
    "data.return_raw_chat": True,
    "data.filter_overlong_prompts": True,
    "data.truncation": "left",
}
"""leantrain's defaults over VERL's (applied before the algorithm and the user's YAML)."""


@functools.cache
def _composed() -> Any:
    """VERL's ``ppo_trainer`` composed by Hydra from the installed verl's ``trainer/config``
    (found, not imported), a struct ``DictConfig`` composed once per process (copy it)."""
    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(
            "leantrain-verl needs the Python package 'verl', which is not installed",
            hint="install it with: uv sync --package leantrain-verl (Python < 3.13)",
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "trainer" / "config"
    if not (path / "ppo_trainer.yaml").is_file():
        raise MissingDependencyError(f"verl's ppo_trainer.yaml not found under {path}")
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(path), version_base=None):
        return compose(config_name="ppo_trainer")


def _is_open(key: str) -> bool:
    return any(key == k or key.startswith(k + ".") for k in _OPEN_KEYS)


def _set(cfg: Any, key: str, value: Any, source: str) -> None:
    """Set a dotted key; an unknown key is a :class:`ConfigError` with the closest match."""
    from omegaconf import OmegaConf

    if _is_open(key):  # force_add: past the struct flag
        OmegaConf.update(cfg, key, value, merge=True, force_add=True)
        return
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(cfg, parent) if parent else cfg
    names = [str(n) for n in node] if hasattr(node, "keys") else []
    if leaf not in names:  # the leaf matched among its own section's keys, else the section's
        close = difflib.get_close_matches(leaf, names, n=1, cutoff=0.6)
        where = f"'{parent}'" if parent else "the top level"
        hint = f"valid keys of {where}: {', '.join(sorted(names))}"
        hint = f"did you mean '{parent + '.' if parent else ''}{close[0]}'?" if close else hint
        raise ConfigError(f"{source}: unknown VERL key '{key}'", hint=hint)
    OmegaConf.update(cfg, key, value, merge=True)


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        full = f"{prefix}{key}"
        if isinstance(value, Mapping) and value and not _is_open(full):
            out.update(_flatten(value, full + "."))
        else:
            out[full] = value
    return out


def load_user_yaml(path: str | Path) -> dict[str, Any]:
    """The user's YAML in VERL's sections, read by leantrain's loader (YAML 1.2 floats such as
    ``lr: 1e-6``, duplicate keys refused, size and alias guards); bad files are one clear line."""
    data = read_yaml_file(path)
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of VERL sections")
    return data or {}


def parse_overrides(items: Sequence[str]) -> dict[str, Any]:
    """``key=value`` CLI overrides (values parsed as YAML: ``3``, ``1e-6``, ``true``, ``[a, b]``)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(
                f"override '{item}' is not key=value", hint="e.g. data.train_batch_size=8"
            )
        out[key.lstrip("+")] = parse_yaml(raw, where=f"override '{key}'") if raw.strip() else None
    return out


def split_overrides(
    overrides: Mapping[str, Any] | Sequence[str] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(VERL overrides, leantrain overrides)``: ``leantrain.KEY=VALUE`` items set the YAML's
    ``leantrain:`` section (the prefix removed), every other item a VERL key."""
    items = dict(overrides) if isinstance(overrides, Mapping) else parse_overrides(overrides or ())
    ours = {k.removeprefix("leantrain."): v for k, v in items.items() if k.startswith("leantrain.")}
    return {k: v for k, v in items.items() if not k.startswith("leantrain.")}, ours


def compose_config(
    user: str | Path | Mapping[str, Any] | None = None,
    *,
    algorithm_type: str = "grpo",
    overrides: Mapping[str, Any] | Sequence[str] | None = None,
    source: str | None = None,
) -> Any:
    """VERL's ``ppo_trainer`` ← leantrain defaults ← ``algorithm_type`` ← ``user`` ← ``overrides``.

    ``user`` is a YAML path or a dict in VERL's sections (``data``, ``actor_rollout_ref``,
    ``critic``, ``reward``, ``algorithm``, ``trainer`` …; its ``leantrain`` and ``verifier``
    sections are the manager's). ``overrides`` are dotted keys (a dict, or ``key=value``
    strings). ``source`` names ``user`` in messages (default: its path, or ``config``).
    """
    cfg = copy.deepcopy(_composed())
    items = overrides if isinstance(overrides, Mapping) else parse_overrides(overrides or ())
    if isinstance(user, (str, Path)):
        source = source or str(user)
        user = load_user_yaml(user)
    ours = ("leantrain", "verifier")  # the manager's sections
    sections = {k: v for k, v in _flatten(user or {}).items() if k.partition(".")[0] not in ours}
    for where, values in (
        ("leantrain defaults", LEANTRAIN_DEFAULTS),
        (f"algorithm '{algorithm_type}'", algorithm_overrides(algorithm_type)),
        (source or "config", sections),
        ("override", items),
    ):
        for key, value in values.items():
            _set(cfg, key, value, where)
    critic = "critic.ppo_micro_batch_size"
    if _get(cfg, "critic.enable") and _unset(cfg, critic):
        # a critic the algorithm added (ppo) gets the actor's micro-batch unless one is set
        actor = _get(cfg, "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu")
        _set(cfg, critic + "_per_gpu", actor, "leantrain defaults")
    return cfg


def _get(cfg: Any, key: str) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.select(cfg, key, throw_on_missing=False)


def _unset(cfg: Any, key: str) -> bool:
    """Neither ``key`` nor ``key_per_gpu`` is set (VERL takes either)."""
    return _get(cfg, key) is None and _get(cfg, f"{key}_per_gpu") is None


def validate_config(cfg: Any, *, need_data: bool = True) -> None:
    """Check on CPU, in milliseconds, what VERL checks after Ray and the workers start.

    Mirrors ``verl.utils.config.validate_config`` and ``ActorConfig.validate`` of verl 0.9.1
    (and what the FSDP worker derives: ``ppo_mini_batch_size × rollout.n`` split over the
    data-parallel ranks, then into micro batches), with the fix in each message.
    """
    from omegaconf import OmegaConf

    skip = {"reward.reward_model.rollout.name"}  # only read when a reward *model* is enabled
    missing = sorted(OmegaConf.missing_keys(cfg) - skip)
    if missing:
        raise ConfigError(
            f"VERL config: mandatory value(s) not set: {', '.join(missing)}",
            hint=f"set them in the YAML or as overrides (e.g. {missing[0]}=...)",
        )
    try:
        OmegaConf.to_container(cfg, resolve=True)
    except Exception as e:  # an interpolation that does not resolve
        raise ConfigError(f"VERL config does not resolve: {e}".replace("\n", " ")) from None
    rollout = "actor_rollout_ref.rollout"
    actor = "actor_rollout_ref.actor"

    def positive_int(key: str, default: int | None = None) -> int:
        value = _get(cfg, key)
        if value is None and default is not None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"VERL config: {key} must be a positive integer, got {value!r}")
        return value

    train_bs = positive_int("data.train_batch_size")
    n = positive_int(f"{rollout}.n")
    n_gpus = positive_int("trainer.n_gpus_per_node") * positive_int("trainer.nnodes")
    sp = positive_int(f"{actor}.ulysses_sequence_parallel_size", default=1)
    estimator = str(_get(cfg, "algorithm.adv_estimator"))
    if estimator in GROUP_ESTIMATORS and n < 2:
        raise ConfigError(
            f"VERL config: adv_estimator '{estimator}' compares the responses of a prompt, but "
            f"{rollout}.n is {n}",
            hint=f"set {rollout}.n to 2 or more (e.g. 8)",
        )
    enable = _get(cfg, "critic.enable")
    needs_critic = estimator == "gae" if enable is None else enable
    if estimator == "gae" and not needs_critic:
        raise ConfigError(
            "VERL config: adv_estimator 'gae' (PPO) needs a critic, but critic.enable is false",
            hint="set critic.enable=true, or choose a critic-free algorithm (grpo, rloo, …)",
        )
    dynamic = _get(cfg, f"{actor}.use_dynamic_bsz")
    if not dynamic:
        if (train_bs * n) % n_gpus:
            raise ConfigError(
                f"VERL config: data.train_batch_size × {rollout}.n = {train_bs} × {n} = "
                f"{train_bs * n} responses per step is not divisible by the {n_gpus} GPUs "
                f"(trainer.n_gpus_per_node × trainer.nnodes)",
                hint="make train_batch_size × n a multiple of the GPU count",
            )
        mini = positive_int(f"{actor}.ppo_mini_batch_size")
        if train_bs % mini:
            why = "no PPO update" if train_bs < mini else "the last mini-batch would be partial"
            raise ConfigError(
                f"VERL config: data.train_batch_size ({train_bs}) is not divisible by "
                f"{actor}.ppo_mini_batch_size ({mini}): {why}",
                hint=f"set {actor}.ppo_mini_batch_size ≤ {train_bs}, a divisor of it",
            )
        dp = max(n_gpus // sp, 1)
        per_rank = mini * n // dp
        if (mini * n) % dp:  # also when fewer than one response per rank
            raise ConfigError(
                f"VERL config: ppo_mini_batch_size × n = {mini * n} responses cannot be split "
                f"over {dp} data-parallel ranks ({n_gpus} GPUs / sequence parallel {sp})",
                hint="raise ppo_mini_batch_size or rollout.n, or use fewer GPUs",
            )
        micro_keys = [f"{actor}.ppo", f"{rollout}.log_prob", "actor_rollout_ref.ref.log_prob"]
        if needs_critic:
            micro_keys.append("critic.ppo")
        for key in micro_keys:
            if _unset(cfg, f"{key}_micro_batch_size"):
                why = " (a critic is used)" if key == "critic.ppo" else ""
                raise ConfigError(
                    f"VERL config: set {key}_micro_batch_size_per_gpu{why}",
                    hint=f"e.g. a divisor of {per_rank} (the responses per GPU in a mini-batch)",
                )
        micro = _get(cfg, f"{actor}.ppo_micro_batch_size_per_gpu")
        if micro is not None and (not isinstance(micro, int) or micro < 1 or per_rank % micro):
            raise ConfigError(
                f"VERL config: {actor}.ppo_micro_batch_size_per_gpu ({micro}) must divide the "
                f"{per_rank} responses each GPU gets per mini-batch "
                f"(ppo_mini_batch_size {mini} × n {n} / {dp} ranks)",
                hint="choose one of: "
                + ", ".join(str(d) for d in range(1, per_rank + 1) if per_rank % d == 0),
            )
    if _get(cfg, "algorithm.filter_groups.enable") and not _get(cfg, "trainer.use_v1"):
        msg = "algorithm.filter_groups (dynamic sampling) needs verl's v1 trainer"
        raise ConfigError(f"VERL config: {msg}", hint="set trainer.use_v1=true (the default)")
    positive_int("data.max_prompt_length")
    max_resp = positive_int("data.max_response_length")
    if _get(cfg, "reward.reward_kwargs.overlong_buffer_cfg.enable"):
        buf = _get(cfg, "reward.reward_kwargs.overlong_buffer_cfg.len")
        if not isinstance(buf, int) or not 0 < buf <= max_resp:
            raise ConfigError(
                f"VERL config: reward.reward_kwargs.overlong_buffer_cfg.len ({buf}) must be in "
                f"1..data.max_response_length ({max_resp})",
                hint="DAPO's overlong buffer is the tail of the response budget",
            )
    if need_data:
        for key in ("data.train_files", "data.val_files"):
            files = _get(cfg, key)
            for f in [files] if isinstance(files, str) else list(files or []):
                if not Path(str(f)).expanduser().is_file():
                    raise ConfigError(
                        f"VERL config: {key}: file not found: {f}",
                        hint="convert leantrain data with leantrain.verl.convert_to_verl "
                        "(the manager does it from --data_path)",
                    )


def to_yaml(cfg: Any) -> str:
    """The config as YAML (interpolations kept, as VERL resolves them itself)."""
    from omegaconf import OmegaConf

    return OmegaConf.to_yaml(cfg)
