"""Config groups: dataclasses whose fields carry their help, aliases and constraints.

A setting is declared once, on the group that uses it, in one line::

    eval_k: AtLeast1 = setting(4, "k of top-k accuracy.", aliases=("k",))
    split: Literal["train", "val", "test"] = setting("test", "Split evaluated.")
    model_name: str = setting(help="Model to evaluate.")  # no default: required

The constraint is in the type (``Literal``, ``Annotated[int, Ge(1)]``, pydantic's ``Field``),
checked by one pydantic ``TypeAdapter`` for every source: a dict (:func:`config_from_dict`),
YAML (:func:`config_from_yaml`), flags (:mod:`leantrain.core.parser`) and Python keywords
(:func:`validate_fields`); NaN, infinity and integers beyond :data:`MAX_INT` are out of every
range. Every error is one line naming the source and the key. Fields of transformers' and TRL's
own classes get their constraints and aliases from the one table :data:`ENGINE_FIELDS`.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import functools
import inspect
import math
import re
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, Union

from annotated_types import Ge, Gt, Le
from leantrain.core.errors import ConfigError
from leantrain.core.yaml_loader import load_yaml as load_yaml
from leantrain.core.yaml_loader import parse_yaml as parse_yaml
from leantrain.core.yaml_loader import read_yaml_file as read_yaml_file

C = TypeVar("C")

MAX_INT = 2**63 - 1
"""The largest integer a ranged setting takes (torch, numpy and SQLite hold no more)."""

AtLeast1 = Annotated[int, Ge(1)]  # a count, a size, a k
Positive = Annotated[float, Gt(0)]
NonNegative = Annotated[float, Ge(0)]
Fraction = Annotated[float, Ge(0), Le(1)]
StepLimit = Union[Literal[-1], AtLeast1]  # noqa: UP007 (-1: no limit)

_RANGES = {  # constraint → the engine's fields that have it
    (Ge(1),): "per_device_train_batch_size per_device_eval_batch_size gradient_accumulation_steps "
    "max_length max_prompt_length max_completion_length steps_per_generation "
    "generation_batch_size num_iterations",
    (Gt(0),): "num_train_epochs logging_steps save_steps eval_steps temperature",
    (Ge(0),): "learning_rate weight_decay warmup_steps max_grad_norm save_total_limit "
    "dataloader_num_workers seed beta epsilon",
    (Ge(0), Le(1)): "warmup_ratio",
}
_ALIASES: dict[str, tuple[str, ...]] = {
    "per_device_train_batch_size": ("batch_size",),
    "learning_rate": ("lr",),
    "num_train_epochs": ("epochs", "epochs_per_repo"),
}
ENGINE_FIELDS: dict[str, tuple[Any, tuple[str, ...]]] = {
    **{n: (rule, _ALIASES.get(n, ())) for rule, names in _RANGES.items() for n in names.split()},
    "max_steps": (StepLimit, ()),
}
"""Field of transformers' ``TrainingArguments`` / TRL's configs → (constraint metadata, or the
type replacing the hint; aliases): the one table of the settings leantrain does not own."""


def setting(
    default: Any = dataclasses.MISSING,
    help: str = "",
    *,
    aliases: Sequence[str] = (),
    positional: bool = False,
) -> Any:
    """A config field in one line: its default (none: a required setting, keyword-only), its
    ``--help`` text, its aliases (other names of it in dicts, YAML, flags and keywords) and
    whether the command line gives it as a positional argument. A list default is copied per
    instance."""
    meta: dict[str, Any] = {"help": help, **({"aliases": tuple(aliases)} if aliases else {})}
    meta.update({"positional": True} if positional else {})
    if default is dataclasses.MISSING:
        return dataclasses.field(kw_only=True, metadata=meta)
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def config_fields(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """The init fields of a config dataclass, by name."""
    return {f.name: f for f in dataclasses.fields(cls) if f.init}


@functools.cache
def aliases_of(cls: type) -> dict[str, str]:
    """Alias → field of ``cls``: declared on its fields (``metadata["aliases"]``), and
    :data:`ENGINE_FIELDS`' for inherited engine fields. An alias never hides a field."""
    fields = config_fields(cls)
    out: dict[str, str] = {}
    for name, f in fields.items():
        engine = ENGINE_FIELDS.get(name, ((), ()))[1] if _from_engine(cls, name) else ()
        declared = f.metadata.get("aliases") or engine
        out.update({a: name for a in declared if a not in fields})
    return out


def resolve(cls: type, data: Mapping[str, Any], *, source: str = "config") -> dict[str, Any]:
    """``data`` with each alias renamed to its field; an alias and its field (or two aliases of
    one field) together are an error."""
    aliases = aliases_of(cls)
    out: dict[str, Any] = {}
    given_as: dict[str, str] = {}
    for key, value in data.items():
        name = aliases.get(key, key)
        if name in given_as:  # the field's own name second
            first, second = sorted((given_as[name], key), key=lambda k: k == name)
            raise ConfigError(f"{source}: '{first}' and '{second}' are the same setting; give one")
        given_as[name] = key
        out[name] = value
    return out


def suggest(name: str, valid: Sequence[str], aliases: Mapping[str, str] = {}) -> str:
    """The hint of an unknown name: the closest valid one, else a few valid ones."""
    target = aliases.get(name)
    close = [target] if target and target in valid else difflib.get_close_matches(name, valid, n=3)
    close.sort(key=lambda v: sorted(v) != sorted(name))  # swapped letters first: modle → model
    if close:
        return f"did you mean '{close[0]}'?"
    return f"valid keys include: {', '.join(sorted(valid)[:12])} …"


def unknown_key(cls: type, key: str, value: Any, *, source: str) -> ConfigError:
    """The one-line error for ``key``, not a field of ``cls``: the class's own
    ``moved_key(key, value)`` error where it names one (a setting that lives elsewhere now),
    else the closest valid key."""
    moved = getattr(cls, "moved_key", None)
    error = moved(key, value) if moved is not None else None
    return error or ConfigError(
        f"{source}: unknown key '{key}' for {cls.__name__}",
        hint=suggest(key, list(config_fields(cls)), aliases_of(cls)),
    )


def check_keys(cls: type, data: Mapping[str, Any], *, source: str) -> None:
    """Raise :func:`unknown_key`'s error for the first key of ``data`` that is not a field."""
    fields = config_fields(cls)
    for key, value in data.items():
        if key not in fields:
            raise unknown_key(cls, key, value, source=source)


def _build(cls: type[C], values: Mapping[str, Any], *, source: str) -> C:
    try:
        return cls(**values)
    except (TypeError, ValueError) as e:  # a group's ConfigError is neither: it passes
        raise ConfigError(f"{source}: invalid {cls.__name__}: {e}") from None


def _members(tp: Any) -> tuple[Any, ...]:
    return typing.get_args(tp) if typing.get_origin(tp) in (Union, types.UnionType) else ()


def _from_engine(cls: type, name: str) -> bool:
    """Whether field ``name`` of ``cls`` is also declared by the engine (transformers / TRL):
    then :data:`ENGINE_FIELDS` gives its constraint and aliases, even where leantrain's class
    redeclares it for another default."""
    return name in ENGINE_FIELDS and any(
        k.__module__.split(".")[0] in ("transformers", "trl") and name in inspect.get_annotations(k)
        for k in cls.__mro__
    )


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """Field → type hint with its constraints, resolved one by one along the MRO (one that does
    not resolve leaves its field unchecked, not the whole class); an engine field of
    :data:`ENGINE_FIELDS` gets the table's constraint."""
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        module = sys.modules.get(klass.__module__)
        glob, local = (vars(module) if module else {}), dict(vars(klass))
        for name, annotation in inspect.get_annotations(klass).items():
            holder = types.SimpleNamespace(__annotations__={name: annotation})
            try:
                hints[name] = typing.get_type_hints(holder, glob, local, include_extras=True)[name]
            except Exception:  # left unchecked
                hints[name] = Any
    for name in config_fields(cls):
        tp = hints.get(name, Any)
        rule = ENGINE_FIELDS.get(name, (None,))[0] if _from_engine(cls, name) else None
        if rule is not None and tp is not Any and _strip(tp) == tp:
            if isinstance(rule, tuple):
                tp = Annotated[(tp, *rule)]
            else:
                tp = Union[rule, None] if type(None) in _members(tp) else rule  # noqa: UP007
        hints[name] = tp
    return hints


def _strip(tp: Any) -> Any:
    """``tp`` without its constraints (``Annotated`` metadata; a ``Literal`` becomes the type of
    its values): the *type* a value must have before its range is checked."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Annotated:
        return _strip(args[0])
    if origin is Literal:
        return Union[tuple({type(a) for a in args})]  # noqa: UP007
    if origin in (Union, types.UnionType):
        return Union[tuple(_strip(a) for a in args)]  # noqa: UP007
    if origin in (list, tuple, set, dict) and args:
        return origin[
            tuple(_strip(a) for a in args) if origin in (tuple, dict) else _strip(args[0])
        ]
    return tp


def _choices(tp: Any) -> tuple[Any, ...]:
    """The values of a ``Literal`` type (also in an ``Optional`` or a list), else ()."""
    if typing.get_origin(tp) is Literal:
        return typing.get_args(tp)
    inner = typing.get_args(tp) if typing.get_origin(tp) is list else _members(tp)
    found = [_choices(m) for m in inner if m is not type(None)]
    return tuple(v for f in found for v in f) if found and all(found) else ()


def describe(tp: Any) -> str:
    """The range of a constrained type in words (``at least 1``, ``between 0 and 1``)."""
    if typing.get_origin(tp) is Literal:
        return " or ".join("-1 (no limit)" if a == -1 else repr(a) for a in typing.get_args(tp))
    if _members(tp):
        return " or ".join(filter(None, (describe(a) for a in _members(tp))))
    b: dict[str, Any] = {}
    for m in typing.get_args(tp)[1:] if typing.get_origin(tp) is Annotated else ():
        for c in [m, *getattr(m, "metadata", [])]:
            b.update({k: getattr(c, k) for k in ("ge", "gt", "le", "lt") if hasattr(c, k)})
    if b in ({"ge": 0}, {"gt": 0}):
        return "zero or more" if "ge" in b else "positive"
    if b.keys() == {"ge", "le"}:
        return f"between {b['ge']} and {b['le']}"
    words = {"ge": "at least", "gt": "above", "le": "at most", "lt": "below"}
    return " and ".join(f"{words[k]} {v}" for k, v in b.items())


@functools.cache
def _adapter(cls: type, key: str, *, constrained: bool) -> Any:
    """The pydantic ``TypeAdapter`` of field ``key`` (``constrained``: with its range), or None
    (untyped, or a type pydantic cannot describe: left to the class itself)."""
    tp = _hints(cls).get(key, Any)
    if tp is Any or isinstance(tp, (str, typing.TypeVar, typing.ForwardRef)):
        return None
    tp = tp if constrained else _strip(tp)
    from pydantic import ConfigDict, TypeAdapter

    try:
        config = ConfigDict(arbitrary_types_allowed=True, coerce_numbers_to_str=True)
        return TypeAdapter(tp, config=config)
    except Exception:
        try:  # dataclasses and models carry their own config
            return TypeAdapter(tp)
        except Exception:
            return None


def _type_name(tp: Any) -> str:
    if tp is type(None):
        return "null"
    if isinstance(tp, type):
        return tp.__name__
    text = re.sub(r"\bNone(?:Type)?\b", "null", str(tp).replace("typing.", ""))
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)", r"\1", text)


def _short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (a huge YAML value stays one short line)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
        return f"<an integer of {len(str(abs(value)))} digits>"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _out_of_range(value: Any) -> bool:
    numbers = value if isinstance(value, (list, tuple)) else [value]
    return any(
        isinstance(v, (int, float))
        and not isinstance(v, bool)
        and (abs(v) > MAX_INT if isinstance(v, int) else not math.isfinite(v))
        for v in numbers
    )


def _check_range(cls: type, key: str, value: Any, *, source: str) -> Any:
    """``value`` (already of the field's type) checked against the field's constraint."""
    tp = _hints(cls)[key]
    if _strip(tp) == tp:
        return value
    adapter = _adapter(cls, key, constrained=True)
    try:
        checked = adapter.validate_python(value) if adapter is not None else value
        if not _out_of_range(checked):
            return checked
    except (ValueError, TypeError, OverflowError):  # pydantic's ValidationError too
        pass
    choices = list(dict.fromkeys(_choices(tp)))
    if choices:
        bad = next(v for v in (value if isinstance(value, list) else [value]) if v not in choices)
        raise ConfigError(
            f"{source}: key '{key}' has the wrong type: got {type(bad).__name__} {_short_repr(bad)}",
            hint=f"choose one of: {', '.join(map(repr, choices))}",
        )
    who = (
        f"--{key}" if source in ("command line", "keyword arguments") else f"{source}: key '{key}'"
    )
    extra = f" and at most {MAX_INT:,}" if _out_of_range(value) and isinstance(value, int) else ""
    raise ConfigError(f"{who} must be {describe(tp)}{extra}, got {_short_repr(value)}")


def typed(cls: type, key: str, candidates: Sequence[Any], *, source: str) -> Any:
    """The first of ``candidates`` (readings of one value) of field ``key``'s type, converted
    to it and checked against its range; none fits: one :class:`ConfigError` naming source,
    key and type (or range)."""
    adapter = _adapter(cls, key, constrained=False)
    if adapter is None:
        return candidates[0]
    for value in candidates:
        try:
            # strict for a boolean: true is not the number 1 (lax mode would take it)
            value = adapter.validate_python(value, strict=isinstance(value, bool) or None)
        except (ValueError, TypeError, OverflowError):  # pydantic's ValidationError too
            continue
        return _check_range(cls, key, value, source=source)
    value = candidates[0]
    shown = "<redacted>" if _is_secret(key) else _short_repr(value)  # no token in a log
    raise ConfigError(
        f"{source}: key '{key}' has the wrong type: got {type(value).__name__} {shown}",
        hint=f"give a value of type {_type_name(_hints(cls)[key])}",
    )


def typed_values(cls: type, data: Mapping[str, Any], *, source: str = "config") -> dict[str, Any]:
    """``data`` (field names → values) checked against the fields' types and ranges and
    converted (``3`` → ``3.0`` for a float); the first misfit is a :class:`ConfigError`."""
    return {key: typed(cls, key, [value], source=source) for key, value in data.items()}


def validate_fields(cfg: Any, *, source: str = "keyword arguments") -> None:
    """Check a built config (call it in the ``__post_init__`` of a class you instantiate):
    Python keyword arguments meet the ranges and choices that dict, YAML and flags meet (values
    not converted; an error names the field as its flag: ``--eval_k must be at least 1``), then
    each group's own ``check_group(self)`` runs, base classes first. Groups define
    ``check_group``, not ``__post_init__``, so composing them never cuts an engine's
    ``__post_init__`` chain."""
    cls: type = type(cfg)
    for name in config_fields(cls):
        value = getattr(cfg, name, None)
        if value is not None:
            _check_range(cls, name, value, source=source)
    for klass in reversed(cls.__mro__):
        if "check_group" in klass.__dict__:
            klass.__dict__["check_group"](cfg)


def config_from_dict(cls: type[C], data: Mapping[str, Any] | None, *, source: str = "config") -> C:
    """Build ``cls`` from a plain dict: aliases resolved, unknown keys and wrongly typed values
    are errors naming ``source``, values converted to their fields' types."""
    data = resolve(cls, dict(data or {}), source=source)
    check_keys(cls, data, source=source)
    return _build(cls, typed_values(cls, data, source=source), source=source)


def config_from_yaml(cls: type[C], path: str | Path, **overrides: Any) -> C:
    """Build ``cls`` from a YAML file, with keyword overrides applied on top (not converted)."""
    data = resolve(cls, load_yaml(path), source=str(path))
    check_keys(cls, data, source=str(path))
    values = typed_values(cls, data, source=str(path))
    values.update(resolve(cls, overrides, source="keyword arguments"))
    check_keys(cls, values, source="keyword arguments")
    return _build(cls, values, source=str(path))


def config_to_dict(cfg: Any) -> dict[str, Any]:
    """A JSON-safe dict of a config dataclass (for manifests); odd values become strings."""

    def safe(v: Any) -> Any:
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, enum.Enum):
            return v.value
        if isinstance(v, Mapping):
            return {str(k): safe(x) for k, x in v.items()}
        if isinstance(v, (list, tuple, set)):
            return [safe(x) for x in v]
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return config_to_dict(v)
        return str(v)

    fields = [f.name for f in dataclasses.fields(cfg) if f.init and hasattr(cfg, f.name)]
    values = {name: getattr(cfg, name) for name in fields}
    return {k: "<redacted>" if v and _is_secret(k) else safe(v) for k, v in values.items()}


_SECRET_RE = re.compile(r"(?:^|_)(?:token|secret|password|passwd|api_?key)(?:_|$)", re.IGNORECASE)
_VOCABULARY_TOKEN = re.compile(r"^(?:eos|bos|pad|unk|sep|cls|mask)_token$", re.IGNORECASE)


def _is_secret(name: str) -> bool:
    """Is config field ``name`` never written in clear (to a manifest or an error)? A whole word
    of it is token / secret / password / api_key (``hub_token``, ``wandb_api_key``); not a name
    that only contains the letters (``max_new_tokens``) nor a vocabulary token (``eos_token``,
    ``pad_token``): those are settings whose changes a resume compares."""
    return bool(_SECRET_RE.search(name)) and not _VOCABULARY_TOKEN.match(name)
