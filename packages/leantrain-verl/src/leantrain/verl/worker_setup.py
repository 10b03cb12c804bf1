"""What VERL's Ray workers import before they score: the modules that define the run's rewards.

VERL scores in its own processes (Ray workers, started fresh), which know only what they
import. A reward registered with ``@register_reward_function`` / ``@register_reward_manager``
(or ``leantrain.core.registry.REWARDS.register``) in the user's code exists only in the process
that ran the decorator. So for each reward and reward manager a run uses that is neither
leantrain's own nor an installed package's entry point, :func:`reward_imports` records its
defining module (``obj.__module__``) and the directory it is imported from; the manager puts
that payload in ``$LEANTRAIN_VERL_REWARD_MODULES`` of Ray's ``runtime_env`` (beside
``$LEANTRAIN_VERL_CORE_ALGOS``) and sets ``worker_process_setup_hook`` to :func:`setup_worker`,
which imports those modules in every worker — re-running their decorators — before anything
is scored. :func:`ensure_worker_imports` does the same lazily, in case a process scores without
the hook having run.

A reward defined in ``__main__`` (the training script, a notebook), or in a module with no
file importable under its name, cannot be imported by a worker: that is a
:class:`ConfigError` at composition time (the manager's construction, ``dry_run``, ``train``),
naming the reward and the fix. Importing modules named in a config is code execution, so it
needs ``allow_code`` (``--allow-code``, ``LEANTRAIN_ALLOW_CODE=1``), in the driver and again in
the workers.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import json
import os
import site
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leantrain.core.errors import ConfigError, LeanTrainError
from leantrain.core.registry import OPT_IN, REWARDS, Registry, code_allowed

REWARD_MODULES_ENV = "LEANTRAIN_VERL_REWARD_MODULES"
"""JSON ``{"modules": [...], "paths": [...], "allow_code": bool}`` the workers import."""

HOOK = "leantrain.verl.worker_setup.setup_worker"
"""Ray's ``worker_process_setup_hook`` (``runtime_env``) set by the manager."""


@dataclass(frozen=True)
class WorkerImports:
    """Modules a worker must import (in order), and directories to put on its ``sys.path``."""

    modules: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    allow_code: bool = False

    def payload(self) -> str:
        """The JSON carried by ``$LEANTRAIN_VERL_REWARD_MODULES``."""
        return json.dumps(
            {
                "modules": list(self.modules),
                "paths": list(self.paths),
                "allow_code": self.allow_code,
            }
        )

    @classmethod
    def from_payload(cls, text: str) -> WorkerImports:
        """Parse :meth:`payload`'s JSON; a malformed one is a :class:`ConfigError`."""
        try:
            data = json.loads(text)
            return cls(
                tuple(str(m) for m in data["modules"]),
                tuple(str(p) for p in data.get("paths", ())),
                bool(data.get("allow_code", False)),
            )
        except (ValueError, KeyError, TypeError) as e:
            raise ConfigError(
                f"${REWARD_MODULES_ENV} is not leantrain's payload ({e}): {text[:80]!r}"
            ) from None


def _default_paths() -> set[Path]:
    """Directories on every fresh interpreter's ``sys.path`` (stdlib, site-packages)."""
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    dirs += [sysconfig.get_paths().get(k, "") for k in ("stdlib", "platstdlib", "purelib")]
    dirs.append(sysconfig.get_paths().get("platlib", ""))
    return {Path(d).resolve() for d in dirs if d}


def module_root(module: str) -> Path:
    """The directory a fresh process must have on ``sys.path`` to import ``module`` as the
    file it was loaded from; :class:`ValueError` (the reason) when there is none."""
    if module in ("__main__", "__mp_main__"):
        raise ValueError("__main__ (the script or notebook that was run)")
    mod = sys.modules.get(module)
    file = getattr(mod, "__file__", None)
    if mod is None or not file:
        raise ValueError(f"module '{module}', which has no file a worker could import")
    path = Path(file).resolve()
    parts = module.split(".")
    is_package = path.stem == "__init__"
    try:
        root = path.parents[len(parts) - (0 if is_package else 1)]
    except IndexError:
        raise ValueError(
            f"module '{module}', whose file {path} is not importable under that name"
        ) from None
    expected = root.joinpath(*parts)
    found = importlib.machinery.PathFinder.find_spec(parts[0], [str(root)])
    if (
        path not in (expected.with_suffix(path.suffix), expected / path.name)
        or found is None
        or found.origin is None
    ):
        raise ValueError(f"module '{module}', whose file {path} is not importable under that name")
    return root


def _origin(
    registry: Registry[Any], name: str, kind: str, group: str
) -> tuple[str, str, str] | None:
    """``(module, kind, group)`` of a decorator-registered ``name`` the workers must import;
    ``None`` for an unknown name, a ``module:attr``, leantrain's own or an entry point's."""
    obj = registry._items.get(name)
    if obj is None:
        return None
    module = getattr(obj, "__module__", None) or "__main__"
    if module == "leantrain" or module.startswith("leantrain."):
        return None  # leantrain's own: the workers' imports of leantrain register it
    ep = registry._entry_points().get(name)
    if ep is not None and ep.module == module:
        return None  # the workers load the entry point by name
    return module, kind, group


def reward_imports(
    rewards: Sequence[Any] | None, reward_manager: str | None, *, allow_code: bool = False
) -> WorkerImports:
    """What the workers must import for ``rewards`` (names / dicts) and ``reward_manager``.

    Raises :class:`ConfigError` (one line: which reward, why, the fix) when one is defined where
    a worker cannot import it, or when importing it is not allowed (``allow_code``)."""
    from leantrain.verl.rewards import (
        DEFAULT_REWARDS,
        REWARD_FUNCTIONS,
        REWARD_MANAGERS,
        _spec_parts,
    )

    used: list[tuple[str, tuple[str, str, str]]] = []
    for spec in list(rewards) if rewards else list(DEFAULT_REWARDS):
        name = _spec_parts(spec)[0]
        origin = _origin(
            REWARD_FUNCTIONS, name, "reward function", "leantrain.verl.reward_functions"
        ) or _origin(REWARDS, name, "reward function", "leantrain.rewards")
        if origin is not None:
            used.append((name, origin))
    if reward_manager:
        origin = _origin(
            REWARD_MANAGERS, str(reward_manager), "reward manager", "leantrain.verl.reward_managers"
        )
        if origin is not None:
            used.append((str(reward_manager), origin))
    modules: list[str] = []
    paths: list[str] = []
    defaults = _default_paths()
    for name, (module, kind, group) in used:
        fix = (
            "put it in a module importable by the workers (e.g. my_rewards.py beside the config, "
            f"imported by your script), or publish it under an installed package's '{group}' "
            "entry point"
        )
        try:
            root = module_root(module)
        except ValueError as e:
            raise ConfigError(
                f"{kind} '{name}' is defined in {e}: VERL's Ray workers cannot import it, so "
                "they would not know it",
                hint=fix,
            ) from None
        if not code_allowed(allow_code):
            raise ConfigError(
                f"{kind} '{name}' is defined in module '{module}', which VERL's Ray workers must "
                f"import: importing it needs {OPT_IN}",
                hint=f"opt in, or publish it under an installed package's '{group}' entry point",
            )
        if module not in modules:
            modules.append(module)
        if root not in defaults and str(root) not in paths:
            paths.append(str(root))
    return WorkerImports(tuple(modules), tuple(paths), bool(modules) and code_allowed(allow_code))


def import_modules(imports: WorkerImports) -> None:
    """Put ``imports.paths`` on ``sys.path`` and import ``imports.modules`` (re-running their
    registration decorators); each import follows the allow-code rule."""
    from leantrain.core.registry import check_code_allowed

    for path in reversed(imports.paths):
        if path not in sys.path:
            sys.path.insert(0, path)
    for module in imports.modules:
        check_code_allowed(f"{module} (reward module)", "reward module", imports.allow_code)
        try:
            importlib.import_module(module)
        except Exception as e:
            raise LeanTrainError(
                f"VERL worker: cannot import reward module '{module}' "
                f"(${REWARD_MODULES_ENV}): {type(e).__name__}: {e}",
                hint="it must be importable from the workers' sys.path: "
                + os.pathsep.join(imports.paths or ("(default)",)),
            ) from None


_DONE: set[str] = set()


def ensure_worker_imports(environ: Mapping[str, str] | None = None) -> None:
    """Import ``$LEANTRAIN_VERL_REWARD_MODULES``'s modules in this process, once per payload."""
    text = (os.environ if environ is None else environ).get(REWARD_MODULES_ENV)
    if text and text not in _DONE:
        import_modules(WorkerImports.from_payload(text))
        _DONE.add(text)


def setup_worker() -> None:
    """Ray ``worker_process_setup_hook``: register the custom advantage function
    (``$LEANTRAIN_VERL_CORE_ALGOS``) and import the reward modules of the run."""
    from leantrain.verl.core_algos import setup_worker as register_core_algos

    register_core_algos()
    ensure_worker_imports()
