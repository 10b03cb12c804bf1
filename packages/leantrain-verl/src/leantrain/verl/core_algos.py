"""Custom advantage functions from a module, registered through VERL's own ``register_adv_est``.

``--core_algos my_pkg.core_algos [--core_function compute_weighted_grpo_advantage]``: the module
is imported — naming it on the command line or as ``core_algos=`` in Python is the opt-in (it is
never read from a shared config file; code named *in* a config, such as a ``module:attr``
reward, still needs ``allow_code``) — the function is registered in
``verl.trainer.ppo.core_algos.ADV_ESTIMATOR_REGISTRY`` under its own name, and
``algorithm.adv_estimator`` is set to that name — so VERL's ``compute_advantage`` calls it as
``fn(token_level_rewards=…, response_mask=…, config=…, index=…)`` → ``(advantages, returns)``.

Without ``--core_function`` the function that fits the algorithm is chosen: one the module
already registered with ``register_adv_est``; else among its functions taking
``token_level_rewards`` and ``response_mask``, the only one, or the only one whose name
contains the algorithm type (``grpo`` → ``compute_weighted_grpo_advantage``). Anything else is
an error listing the candidates.

Inside Ray workers the registration is redone by :func:`setup_worker` (Ray's
``worker_process_setup_hook``), from ``LEANTRAIN_VERL_CORE_ALGOS``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from dataclasses import dataclass
from typing import Any

from leantrain.core.errors import ConfigError

ENV = "LEANTRAIN_VERL_CORE_ALGOS"
"""``module:function`` the Ray workers register (set by the manager for VERL's processes)."""

_REQUIRED = ("token_level_rewards", "response_mask")


@dataclass(frozen=True)
class CustomAdvantage:
    """A user advantage function: where it lives and the estimator name VERL will use."""

    module: str
    function: str

    @property
    def spec(self) -> str:
        return f"{self.module}:{self.function}"

    @property
    def estimator(self) -> str:
        return self.function


def _import(module: str) -> Any:
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: a module beside the user
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ConfigError(f"--core_algos: cannot import module '{module}': {e}") from None


def _fits(fn: Any) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return all(p in params for p in _REQUIRED)


def _registered_in(mod: Any) -> list[str]:
    """Functions of ``mod`` it registered itself with verl's ``register_adv_est``."""
    registry = sys.modules.get("verl.trainer.ppo.core_algos")
    if registry is None:
        return []
    table = getattr(registry, "ADV_ESTIMATOR_REGISTRY", {})
    return sorted(
        name
        for name, obj in vars(mod).items()
        if callable(obj)
        and getattr(obj, "__module__", None) == mod.__name__
        and any(v is obj for v in table.values())
    )


def find_advantage_function(
    module: str,
    function: str | None = None,
    *,
    algorithm_type: str = "grpo",
) -> CustomAdvantage:
    """The advantage function to use from ``module`` (see the module docstring)."""
    mod = _import(module)
    if function:
        fn = getattr(mod, function, None)
        if not callable(fn):
            names = sorted(n for n, o in vars(mod).items() if callable(o) and _fits(o))
            raise ConfigError(
                f"--core_function: module '{module}' has no function '{function}'",
                hint=f"advantage functions there: {', '.join(names) or 'none'}",
            )
        if not _fits(fn):
            raise ConfigError(
                f"--core_function: {module}.{function} does not take {', '.join(_REQUIRED)}",
                hint="VERL calls it as fn(token_level_rewards, response_mask, index=…, config=…)",
            )
        return CustomAdvantage(module, function)
    registered = _registered_in(mod)
    candidates = registered or sorted(
        n
        for n, o in vars(mod).items()
        if inspect.isfunction(o) and o.__module__ == mod.__name__ and _fits(o)
    )
    if len(candidates) > 1:
        named = [c for c in candidates if algorithm_type.lower() in c.lower()]
        candidates = named if len(named) == 1 else candidates
    if len(candidates) != 1:
        raise ConfigError(
            f"--core_algos {module}: "
            + (
                "no function taking token_level_rewards and response_mask"
                if not candidates
                else f"several advantage functions fit algorithm '{algorithm_type}': "
                + ", ".join(candidates)
            ),
            hint="name one with --core_function",
        )
    return CustomAdvantage(module, candidates[0])


def register(custom: CustomAdvantage) -> str:
    """Register ``custom`` with VERL's ``register_adv_est``; returns the estimator name."""
    from verl.trainer.ppo.core_algos import (
        ADV_ESTIMATOR_REGISTRY,
        AdvantageEstimator,
        register_adv_est,
    )

    if custom.estimator in {e.value for e in AdvantageEstimator}:
        raise ConfigError(
            f"custom advantage function '{custom.function}' has the name of VERL's built-in "
            "estimator: rename it"
        )
    fn = getattr(_import(custom.module), custom.function)
    if ADV_ESTIMATOR_REGISTRY.get(custom.estimator) is not fn:
        if custom.estimator in ADV_ESTIMATOR_REGISTRY:
            # a module re-imported (e.g. a worker that imported it twice) or a name clash
            del ADV_ESTIMATOR_REGISTRY[custom.estimator]
        register_adv_est(custom.estimator)(fn)
    return custom.estimator


def setup_worker() -> None:
    """Ray ``worker_process_setup_hook``: register ``$LEANTRAIN_VERL_CORE_ALGOS`` in this process."""
    spec = os.environ.get(ENV)
    if spec:
        module, _, function = spec.partition(":")
        register(CustomAdvantage(module, function))
