"""leantrain's rewards as VERL's custom reward function, and the manager's reward registries.

VERL calls ``compute_score(data_source, solution_str, ground_truth, extra_info, **reward_kwargs)``
once per response (``reward.custom_reward_function.path/name``; ``reward_kwargs`` come from
``reward.custom_reward_function.reward_kwargs``). :func:`compute_score` scores the response
with every reward named in ``reward_kwargs["rewards"]`` (default: format, no_sorry,
reference_match; a ``mode: whole`` run names its own, :func:`mode_rewards`) and returns ``{"score": weighted sum, <reward>: value, …}`` — VERL logs the
extra keys. A name is resolved in this order:

1. a function registered here with ``@register_reward_function(name)``:
   ``fn(input_text, response_text, **kwargs) -> float`` (``input_text`` is the proof state,
   ``kwargs`` hold ``ground_truth``, ``extra_info``, ``data_source``);
2. a leantrain reward (``leantrain.core.registry.REWARDS``: ``format``, ``no_sorry``,
   ``reference_match``, ``length_penalty``, ``premise_mention``, ``lean`` (Lean's judgement
   through leantrain-lean's contract, as in ``leantrain grpo``; ``lean_verified`` is its old
   name), and
   ``progress`` when leantrain-progress is installed), called as in ``leantrain grpo`` with the
   row's columns from ``extra_info``; dicts carry options and ``weight``; ``module:attr`` needs
   ``allow_code``.

``@register_reward_manager(name)`` registers a class of one of two contracts
(:func:`manager_contract`, checked when the manager is built): leantrain's, built with
``reward_manager_options`` and called on a batch (``manager(items) -> list[float]``, ``items``
being dicts with ``input_text``, ``response_text``, ``ground_truth``, ``extra_info``,
``data_source``) — :func:`score_batch` runs one —, or the seed toolkit's, built as
``Cls(tokenizer=…, num_examine=…, config=…, compute_score=…)`` and called on VERL's
``DataProto`` (returning a reward tensor, a dict holding ``reward_tensor``, or scores).
:mod:`leantrain.verl.verl_reward_manager` is the VERL reward manager that hands VERL's
responses to either.

VERL imports this module as ``pkg://leantrain.verl.rewards`` (not by file path, which would
load a second copy with empty registries); in its Ray workers the user's registering modules
are imported first by :mod:`leantrain.verl.worker_setup`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from leantrain.core.errors import ConfigError, LeanTrainError
from leantrain.core.registry import REWARDS, Registry

REWARD_FUNCTIONS: Registry[Callable[..., float]] = Registry(
    "VERL reward function", "leantrain.verl.reward_functions"
)
"""``fn(input_text, response_text, **kwargs) -> float`` by name."""

REWARD_MANAGERS: Registry[type] = Registry("VERL reward manager", "leantrain.verl.reward_managers")
"""Classes whose instances score a batch: ``manager(items) -> list[float]``."""

DEFAULT_REWARDS: tuple[str, ...] = ("format", "no_sorry", "reference_match")
"""Rewards used when ``reward_kwargs`` names none."""

WHOLE_DEFAULT_REWARDS: tuple[str, ...] = ("whole_format", "reference_match")
"""Rewards of a ``mode: whole`` run that names none (``leantrain grpo --mode whole``'s)."""

LEAN_REWARDS = ("lean", "lean_verified")
"""Names of the ``lean`` reward (``lean_verified``: its old name)."""


def default_rewards(mode: str) -> tuple[str, ...]:
    """The rewards of a run in ``mode`` (``tactic`` or ``whole``) that names none."""
    return WHOLE_DEFAULT_REWARDS if mode == "whole" else DEFAULT_REWARDS


def mode_rewards(specs: Sequence[Any] | None, mode: str) -> list[Any] | None:
    """The rewards a run in ``mode`` scores with: ``specs`` as given in mode ``tactic``
    (``None``: :data:`DEFAULT_REWARDS`); in mode ``whole`` :data:`WHOLE_DEFAULT_REWARDS` when
    ``specs`` names none, and every ``lean`` reward that names no level at level ``whole`` (it
    judges the proof in a whole-proof reply, as ``leantrain grpo --mode whole``'s); an explicit
    ``level: tactic`` or ``proof`` there is one :class:`ConfigError` line."""
    if mode != "whole":
        return None if specs is None else list(specs)
    out: list[Any] = []
    for spec in specs or WHOLE_DEFAULT_REWARDS:
        name = spec.get("name") if isinstance(spec, Mapping) else spec
        if name in LEAN_REWARDS:
            spec = dict(spec) if isinstance(spec, Mapping) else {"name": name}
            level = spec.setdefault("level", "whole")
            if level != "whole":
                raise ConfigError(
                    f"reward '{name}': level '{level}' judges tactic scripts, and mode is whole "
                    "(the replies are whole proofs)",
                    hint="leave level out (mode whole implies level: whole), or train in mode "
                    "tactic",
                )
        out.append(spec)
    return out


def register_reward_function(name: str | None = None, *, overwrite: bool = False) -> Any:
    """Decorator: ``@register_reward_function("name")`` on ``fn(input_text, response_text, **kw)``."""
    return REWARD_FUNCTIONS.register(name, overwrite=overwrite)


def register_reward_manager(name: str | None = None, *, overwrite: bool = False) -> Any:
    """Decorator: ``@register_reward_manager("name")`` on a class called on a batch of items."""
    return REWARD_MANAGERS.register(name, overwrite=overwrite)


class _SeedRegistry:
    """The seed toolkit's ``registry``: ``get_reward_function`` / ``get_reward_manager``."""

    def get_reward_function(self, name: str) -> Callable[..., float]:
        """The function registered as ``name`` (an unknown name is one line)."""
        return REWARD_FUNCTIONS.get(name)

    def get_reward_manager(self, name: str) -> type:
        """The class registered as ``name`` (an unknown name is one line)."""
        return REWARD_MANAGERS.get(name)


registry = _SeedRegistry()
"""``registry.get_reward_function(name)`` / ``registry.get_reward_manager(name)``, as in the seed."""

SEED_MANAGER_ARGS = ("tokenizer", "num_examine", "config", "compute_score")
"""What the seed toolkit built a reward manager class with (``__init__`` keywords)."""


def registered_name(registry_: Registry[Any], obj: Any, what: str) -> str:
    """The name ``obj`` is registered under; one line when it is not registered."""
    for name, item in registry_._items.items():
        if item is obj:
            return name
    raise ConfigError(
        f"{what} {getattr(obj, '__name__', obj)!r} is not registered",
        hint=f'decorate it with @register_{what.replace(" ", "_")}("name") in a module of its own',
    )


def manager_contract(cls: Any, name: str, options: Mapping[str, Any] | None = None) -> str:
    """``"seed"`` (``__init__`` takes the tokenizer…, ``__call__(DataProto)``) or ``"items"``
    (``__init__(**options)``, ``__call__(items)``); a class fitting neither is a
    :class:`ConfigError` naming what it takes, before any worker starts."""
    import inspect

    where = f"reward manager '{name}' ({getattr(cls, '__qualname__', cls)})"
    if not isinstance(cls, type) or not any("__call__" in vars(k) for k in cls.__mro__[:-1]):
        raise ConfigError(f"{where} is not a class with __call__", hint="register a class")
    init = inspect.signature(cls.__init__).parameters
    params = [p for n, p in init.items() if n != "self"]
    names = {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    open_kw = any(p.kind is p.VAR_KEYWORD for p in params)
    required = {p.name for p in params if p.default is p.empty and p.name in names}
    seed = "tokenizer" in names
    given = set(SEED_MANAGER_ARGS if seed else ()) | set(options or {})
    unknown = set(options or {}) - names if not open_kw else set()
    call = [
        p
        for n, p in inspect.signature(cls.__call__).parameters.items()
        if n != "self" and p.kind is not p.VAR_KEYWORD
    ]
    call_ok = bool(call) and all(p.default is not p.empty for p in call[1:])
    if required - given or unknown or not call_ok:
        taken = ", ".join(str(p) for p in params) or "nothing"
        raise ConfigError(
            f"{where}: __init__({taken}) / __call__ with {len(call)} argument(s) fits neither "
            "contract",
            hint="__init__(tokenizer, num_examine, config, compute_score=None) and "
            "__call__(data: DataProto) (the seed's), or __init__(**reward_manager_options) and "
            "__call__(items) -> list[float]",
        )
    return "seed" if seed else "items"


def seed_scores(result: Any, n: int) -> list[float]:
    """Per-response scores of a seed-style manager's result: a ``[n, len]`` reward tensor (summed
    over tokens), a dict holding ``reward_tensor``, or ``n`` scores."""
    if isinstance(result, Mapping):
        result = result.get("reward_tensor", result.get("scores"))
    if hasattr(result, "sum") and getattr(result, "ndim", 1) == 2:
        result = result.sum(-1)
    values = result.tolist() if hasattr(result, "tolist") else list(result or [])
    if len(values) != n:
        raise LeanTrainError(f"reward manager returned {len(values)} scores for {n} responses")
    return [float(v) for v in values]


class _Scorer:
    """One named reward, called on one response."""

    def __init__(self, label: str, fn: Callable[..., Any], weight: float, verl_style: bool):
        self.label, self.fn, self.weight, self.verl_style = label, fn, weight, verl_style

    def __call__(self, item: Mapping[str, Any]) -> float | None:
        extra = dict(item.get("extra_info") or {})
        if self.verl_style:
            value = self.fn(
                item["input_text"],
                item["response_text"],
                ground_truth=item.get("ground_truth"),
                extra_info=extra,
                data_source=item.get("data_source"),
            )
        else:
            columns = {k: [v] for k, v in extra.items() if k not in ("split", "index")}
            columns.setdefault("reference", [item.get("ground_truth")])
            columns.setdefault("problem", [item["input_text"]])
            out = self.fn(
                prompts=[item.get("prompt") or item["input_text"]],
                completions=[item["response_text"]],
                completion_ids=None,
                **columns,
            )
            value = out[0]
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise LeanTrainError(f"reward '{self.label}' returned {value!r}, not a finite number")
        return float(value)


def _spec_parts(spec: Any) -> tuple[str, dict[str, Any], float]:
    if isinstance(spec, str):
        return spec, {}, 1.0
    if isinstance(spec, Mapping):
        options = dict(spec)
        if "name" not in options:
            raise ConfigError(f"reward spec {dict(spec)} has no 'name'")
        name = str(options.pop("name"))
        weight = options.pop("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise ConfigError(f"reward '{name}': weight must be a number, got {weight!r}")
        return name, options, float(weight)
    raise ConfigError(f"cannot use {spec!r} as a reward", hint="give a name or a dict")


def build_scorers(specs: Sequence[Any] | None = None, *, allow_code: bool = False) -> list[_Scorer]:
    """The scorers of ``specs`` (names or ``{"name", "weight", **options}`` dicts)."""
    from leantrain.llm.rewards import build_reward_funcs

    specs = list(specs) if specs else list(DEFAULT_REWARDS)
    scorers: list[_Scorer] = []
    for spec in specs:
        name, options, weight = _spec_parts(spec)
        if name in REWARD_FUNCTIONS:
            fn = REWARD_FUNCTIONS.get(name)
            if options:
                import functools

                fn = functools.partial(fn, **options)
            scorers.append(_Scorer(name, fn, weight, verl_style=True))
            continue
        if name not in REWARDS and ":" not in name:
            known = sorted({*REWARD_FUNCTIONS.names(), *REWARDS.names()})
            import difflib

            close = difflib.get_close_matches(name, known, n=1)
            raise ConfigError(
                f"unknown reward '{name}'",
                hint=f"did you mean '{close[0]}'?" if close else f"choose from: {', '.join(known)}",
            )
        funcs, _ = build_reward_funcs([{"name": name, **options}], allow_code=allow_code)
        scorers.append(_Scorer(name, funcs[0], weight, verl_style=False))
    return scorers


_CACHE: dict[str, list[_Scorer]] = {}


def _cached_scorers(specs: Any, allow_code: bool) -> list[_Scorer]:
    key = json.dumps([specs, allow_code], sort_keys=True, default=str)
    if key not in _CACHE:
        from leantrain.verl.worker_setup import ensure_worker_imports

        ensure_worker_imports()  # in a VERL worker: the run's reward modules, if not yet
        _CACHE[key] = build_scorers(specs, allow_code=allow_code)
    return _CACHE[key]


def score_item(item: Mapping[str, Any], scorers: Sequence[_Scorer]) -> dict[str, float]:
    """``{"score": Σ weight × value, <label>: value}`` (a ``None`` value counts 0, as in TRL)."""
    out: dict[str, float] = {}
    total = 0.0
    for scorer in scorers:
        value = scorer(item)
        out[scorer.label] = float("nan") if value is None else value
        total += 0.0 if value is None else scorer.weight * value
    return {"score": total, **out}


def compute_score(
    data_source: str | None = None,
    solution_str: str = "",
    ground_truth: str | None = None,
    extra_info: Mapping[str, Any] | None = None,
    *,
    rewards: Sequence[Any] | None = None,
    allow_code: bool = False,
    **kwargs: Any,
) -> dict[str, float]:
    """VERL's custom reward function (``reward.custom_reward_function.name: compute_score``)."""
    extra = dict(extra_info or {})
    item = {
        "data_source": data_source,
        "input_text": extra.get("problem", ""),
        "response_text": solution_str,
        "ground_truth": ground_truth,
        "extra_info": extra,
    }
    return score_item(item, _cached_scorers(rewards, allow_code))


def score_batch(
    manager: str | Any, items: Sequence[Mapping[str, Any]], **options: Any
) -> list[float]:
    """Scores of ``items`` by a registered reward manager (name or instance)."""
    obj = REWARD_MANAGERS.get(manager)(**options) if isinstance(manager, str) else manager
    scores = list(obj(list(items)))
    if len(scores) != len(items):
        raise LeanTrainError(
            f"reward manager {manager!r} returned {len(scores)} scores for {len(items)} items"
        )
    return [float(s["score"] if isinstance(s, Mapping) else s) for s in scores]
