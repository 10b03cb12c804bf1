"""Registries of named components (rewards, algorithms, advantage functions, encoders…).

A component is found by, in order: a name registered with the decorator, a name published by
an installed package under the registry's entry-point group, or — only with an explicit
opt-in — a ``module:attr`` string naming anything importable::

    from leantrain.core.registry import REWARDS

    @REWARDS.register("my_reward")
    def my_reward(completions, **kwargs): ...

    REWARDS.get("my_reward"); REWARDS.get("my_pkg.rewards:other_reward", allow_code=True)

Configs are shared like model cards, so a ``module:attr`` in one is code its author chose, not
the user: as with transformers' ``trust_remote_code``, it is loaded only when the user opts in
(``allow_code: true`` in the config, ``--allow-code``, or ``LEANTRAIN_ALLOW_CODE=1``).
Otherwise :meth:`Registry.get` raises :class:`ConfigError` before importing anything.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from leantrain.core.errors import ConfigError

T = TypeVar("T")

ALLOW_CODE_ENV = "LEANTRAIN_ALLOW_CODE"
"""Environment variable that, set to ``1``, allows ``module:attr`` names in every config."""

OPT_IN = f"allow_code: true / --allow-code / {ALLOW_CODE_ENV}=1"
"""The ways to opt in, as error messages name them."""


def code_allowed(allow_code: bool = False) -> bool:
    """Whether ``module:attr`` names may be imported: ``allow_code`` or ``LEANTRAIN_ALLOW_CODE``
    set to ``1`` / ``true`` / ``yes``."""
    env = os.environ.get(ALLOW_CODE_ENV, "").strip().lower()
    return bool(allow_code) or env in ("1", "true", "yes")


def check_code_allowed(name: str, kind: str, allow_code: bool = False) -> None:
    """Raise :class:`ConfigError` unless importing the code ``name`` is allowed."""
    if not code_allowed(allow_code):
        raise ConfigError(
            f"'{name}' is not a registered {kind}; loading code named in a config needs {OPT_IN}"
        )


def import_object(spec: str) -> Any:
    """Import ``module:attr`` (``attr`` may be dotted); errors are :class:`ConfigError`."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"'{spec}' is not a 'module:attr' path")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as e:
        raise ConfigError(f"cannot import module '{module_name}' (from '{spec}'): {e}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(
                f"module '{module_name}' has no attribute '{attr}' (from '{spec}')"
            ) from None
    return obj


class Registry(Generic[T]):
    """Named components of one kind, extensible by decorator, entry points and import paths."""

    def __init__(self, kind: str, entry_point_group: str | None = None) -> None:
        self.kind = kind
        self.entry_point_group = entry_point_group
        self._items: dict[str, T] = {}

    def register(self, name: str | None = None, *, overwrite: bool = False) -> Callable[[T], T]:
        """Decorator registering its target under ``name`` (default: its ``__name__``)."""

        def decorator(obj: T) -> T:
            self.add(name or obj.__name__, obj, overwrite=overwrite)  # type: ignore[attr-defined]
            return obj

        return decorator

    def add(self, name: str, obj: T, *, overwrite: bool = False) -> None:
        """Register ``obj`` under ``name``; a clash is an error unless ``overwrite``."""
        if name in self._items and self._items[name] is not obj and not overwrite:
            raise ValueError(f"{self.kind} '{name}' is already registered")
        self._items[name] = obj

    def _entry_points(self) -> dict[str, Any]:
        if not self.entry_point_group:
            return {}
        return {ep.name: ep for ep in entry_points(group=self.entry_point_group)}

    def get(self, name: str, *, allow_code: bool = False) -> T:
        """The component called ``name``: registered, an entry point, or ``module:attr`` (only
        with ``allow_code`` or ``LEANTRAIN_ALLOW_CODE=1``; otherwise a :class:`ConfigError`
        is raised before anything is imported)."""
        if name in self._items:
            return self._items[name]
        eps = self._entry_points()
        if name in eps:
            try:
                obj = eps[name].load()
            except Exception as e:
                raise ConfigError(
                    f"{self.kind} '{name}' failed to load from its entry point: {e}"
                ) from None
            self._items[name] = obj
            return obj
        if ":" in name:
            check_code_allowed(name, self.kind, allow_code)
            return import_object(name)
        import difflib

        names = self.names()
        close = difflib.get_close_matches(name, names, n=1)
        hint = (
            f"did you mean '{close[0]}'?" if close else f"available: {', '.join(names) or 'none'}"
        )
        raise ConfigError(
            f"unknown {self.kind} '{name}'",
            hint=hint + f" (or give a 'module:attr' path, with {OPT_IN})",
        )

    def check_code(self, name: str, *, allow_code: bool = False) -> None:
        """Raise :class:`ConfigError` now, importing nothing, when ``name`` is a ``module:attr``
        that is not registered and code is not allowed (what :meth:`get` would refuse)."""
        if ":" in name and name not in self:
            check_code_allowed(name, self.kind, allow_code)

    def names(self) -> list[str]:
        """Every name that :meth:`get` resolves without an import path."""
        return sorted({*self._items, *self._entry_points()})

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._items or name in self._entry_points())

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


REWARDS: Registry[Any] = Registry("reward function", "leantrain.rewards")
"""GRPO reward functions (TRL signature ``(prompts, completions, **columns) -> list[float]``)."""

ALGORITHMS: Registry[Any] = Registry("algorithm preset", "leantrain.algorithms")
"""GRPO algorithm presets (``grpo``, ``dr_grpo``, ``dapo``, ``bnpo`` …)."""

ADVANTAGES: Registry[Any] = Registry("advantage function", "leantrain.advantages")
"""Custom advantage functions ``(rewards, group_ids) -> advantages``."""

ENCODERS: Registry[Any] = Registry("encoder", "leantrain.encoders")
"""Retriever encoder builders by name (``tiny``, ``byt5-small`` …)."""
