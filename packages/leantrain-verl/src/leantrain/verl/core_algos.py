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

``--core_algos path/to/custom_core_algos.py`` (a file, as the seed toolkit took it) imports the
file as module ``custom_core_algos`` from its directory (the Ray workers get that directory on
their ``PYTHONPATH``). A function with the seed's signature ``(token_level_rewards, eos_mask,
index, epsilon=…)`` is registered through an adapter: VERL's ``response_mask`` is handed over as
``eos_mask``, and ``epsilon`` keeps its default (VERL passes ``config`` in its place); this is
logged once.

Inside Ray workers the registration is redone by :func:`setup_worker` (Ray's
``worker_process_setup_hook``), from ``LEANTRAIN_VERL_CORE_ALGOS``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leantrain.core.errors import ConfigError

ENV = "LEANTRAIN_VERL_CORE_ALGOS"
"""``module:function`` the Ray workers register (set by the manager for VERL's processes)."""

_REQUIRED = ("token_level_rewards", "response_mask")
_SEED = ("token_level_rewards", "eos_mask")  # the seed toolkit's (…, eos_mask, index, epsilon)


@dataclass(frozen=True)
class CustomAdvantage:
    """A user advantage function: where it lives and the estimator name VERL will use."""

    module: str
    function: str
    path: str | None = None
    """The directory a ``.py`` file was imported from (put on the workers' ``PYTHONPATH``)."""

    @property
    def spec(self) -> str:
        return f"{self.module}:{self.function}"

    @property
    def estimator(self) -> str:
        return self.function


def module_and_path(spec: str) -> tuple[str, str | None]:
    """``(module name, directory)`` of ``--core_algos``: a ``.py`` file (it must exist) is the
    module named by its stem, imported from its directory; anything else is a module name."""
    if not spec.endswith(".py") and os.sep not in spec and "/" not in spec:
        return spec, None
    file = Path(spec).expanduser()
    if not file.is_file() or file.suffix != ".py":
        raise ConfigError(
            f"--core_algos '{spec}': no such Python file",
            hint="give a .py file or an importable module name (my_pkg.core_algos)",
        )
    return file.stem, str(file.resolve().parent)


def _import(module: str, path: str | None = None) -> Any:
    for where in (path, os.getcwd()):  # like `python -m`: a module beside the user
        if where and where not in sys.path and (where != os.getcwd() or "" not in sys.path):
            sys.path.insert(0, where)
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ConfigError(f"--core_algos: cannot import module '{module}': {e}") from None


def _params(fn: Any) -> Any:
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}


def _fits(fn: Any) -> bool:
    params = _params(fn)
    return all(p in params for p in _REQUIRED) or all(p in params for p in _SEED)


@functools.cache
def adapt(fn: Any) -> Any:
    """``fn`` as VERL 0.9 calls it: a seed-style ``(token_level_rewards, eos_mask, index,
    epsilon)`` function gets ``response_mask`` as ``eos_mask`` (``epsilon`` keeps its default);
    any other function is returned as it is."""
    if all(p in _params(fn) for p in _REQUIRED):
        return fn

    @functools.wraps(fn)
    def adapted(token_level_rewards: Any, response_mask: Any, index: Any = None, **_: Any) -> Any:
        return fn(token_level_rewards=token_level_rewards, eos_mask=response_mask, index=index)

    logging.getLogger("leantrain.verl").info(
        "custom advantage %s takes the seed's (token_level_rewards, eos_mask, index, epsilon): "
        "VERL 0.9's response_mask is passed as eos_mask, epsilon keeps its default (VERL passes "
        "config instead)",
        getattr(fn, "__name__", fn),
    )
    return adapted


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
    """The advantage function to use from ``module`` (a module name or a ``.py`` file; see the
    module docstring)."""
    module, path = module_and_path(module)
    mod = _import(module, path)
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
        adapt(fn)  # the seed's signature: said once, now
        return CustomAdvantage(module, function, path)
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
                "no function taking token_level_rewards and response_mask (or eos_mask)"
                if not candidates
                else f"several advantage functions fit algorithm '{algorithm_type}': "
                + ", ".join(candidates)
            ),
            hint="name one with --core_function",
        )
    adapt(getattr(mod, candidates[0]))  # the seed's signature: said once, now
    return CustomAdvantage(module, candidates[0], path)


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
    fn = adapt(getattr(_import(custom.module, custom.path), custom.function))
    if ADV_ESTIMATOR_REGISTRY.get(custom.estimator) is not fn:
        if custom.estimator in ADV_ESTIMATOR_REGISTRY:
            # a module re-imported (e.g. a worker that imported it twice), an adapter, a clash
            del ADV_ESTIMATOR_REGISTRY[custom.estimator]
        register_adv_est(custom.estimator)(fn)
    return custom.estimator


def setup_worker() -> None:
    """Ray ``worker_process_setup_hook``: register ``$LEANTRAIN_VERL_CORE_ALGOS`` in this process."""
    spec = os.environ.get(ENV)
    if spec:
        module, _, function = spec.partition(":")
        register(CustomAdvantage(module, function))
