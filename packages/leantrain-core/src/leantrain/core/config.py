"""One way to fill a trainer's config dataclass: from Python, a plain dict, YAML or CLI flags.

Every trainer config is a dataclass (often subclassing TRL's or transformers' arguments). The
same class is filled by:

* Python — ``SFTConfig(model_name="tiny", ...)`` (keyword arguments are not converted);
* a dict — :func:`config_from_dict` (what an agent tool call passes);
* YAML — :func:`config_from_yaml` / :func:`load_yaml` (a guarded safe loader that reads
  ``1e-5`` as a float, as YAML 1.2 does);
* the command line — :func:`parse_cli`, with ``--config file.yaml`` and flags overriding it.

Every value from a dict, a YAML file or a flag goes through one check: the field's type hint
as a pydantic ``TypeAdapter`` (lax mode: ``3`` is a float, ``"3"`` an int, ``~`` is ``None`` for
an optional field; but a boolean is never a number). A flag's text is read as a YAML value first (``1e-5``, ``[a, b]``, ``null``)
and taken as the plain string where the field wants one. Unknown keys are errors that name the
closest valid key; a wrong type is one line naming the source, the key and the expected type.
Help texts come from each field's ``metadata["help"]`` (TRL's convention), written once.
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
import textwrap
import types
import typing
from collections.abc import Callable, Mapping, Sequence, Set
from pathlib import Path
from typing import Any, TypeVar

import yaml
from leantrain.core.errors import ConfigError

C = TypeVar("C")

ALIASES: dict[str, str] = {
    "model": "model_name",
    "data": "data_path",
    "lr": "learning_rate",
    "batch_size": "per_device_train_batch_size",
    "epochs": "num_train_epochs",
    "epochs_per_repo": "num_train_epochs",
    "reward": "reward_funcs",
    "k": "eval_k",
}
"""The one alias table of every config (dict, YAML, flags, keyword arguments): an alias applies
only to a class that has the target field and no field of the alias's own name."""


def resolve_aliases(
    cls: type, data: Mapping[str, Any], *, source: str = "config"
) -> dict[str, Any]:
    """``data`` with each alias of :data:`ALIASES` renamed to its field for ``cls``; giving both
    an alias and its field is an error."""
    fields = config_fields(cls)
    out: dict[str, Any] = {}
    for key, value in data.items():
        target = ALIASES.get(key)
        if key not in fields and target in fields:
            if target in data:
                raise ConfigError(
                    f"{source}: '{key}' and '{target}' are the same setting; give one"
                )
            key = target
        out[key] = value
    return out


def config_fields(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """The init fields of a config dataclass, by name."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    return {f.name: f for f in dataclasses.fields(cls) if f.init}


def _suggest(name: str, valid: Sequence[str]) -> str:
    target = ALIASES.get(name)
    close = [target] if target in valid else difflib.get_close_matches(name, valid, n=1)
    return (
        f"did you mean '{close[0]}'?"
        if close
        else f"valid keys include: {', '.join(sorted(valid)[:12])} …"
    )


def unknown_key(cls: type, key: str, value: Any, *, source: str) -> ConfigError:
    """The one-line error for ``key``, which is not a field of ``cls``: the class's own
    ``moved_key(key, value)`` error where it names one (a setting that lives elsewhere now:
    retrieval's ``num_gpus`` is ``trainer={'devices': N}``), else the closest valid key. The
    same line from a keyword argument, a dict, YAML and ``--config``."""
    moved = getattr(cls, "moved_key", None)
    error = moved(key, value) if moved is not None else None
    return error or ConfigError(
        f"{source}: unknown key '{key}' for {cls.__name__}",
        hint=_suggest(key, list(config_fields(cls))),
    )


def check_keys(cls: type, data: Mapping[str, Any], *, source: str) -> None:
    """Raise :func:`unknown_key`'s error for the first key of ``data`` that is not a field."""
    fields = config_fields(cls)
    for key, value in data.items():
        if key not in fields:
            raise unknown_key(cls, key, value, source=source)


def check_choices(cls: type, values: Mapping[str, Any], *, source: str = "config") -> None:
    """Raise :class:`ConfigError` for a value outside its field's ``metadata["choices"]`` (each
    item of a list is checked); the message lists the allowed values."""
    fields = config_fields(cls)
    for key, value in values.items():
        f = fields.get(key)
        choices = f.metadata.get("choices") if f is not None else None
        if not choices or value is None:
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if item not in choices:
                raise ConfigError(
                    f"{source}: '{key}' cannot be {item!r}",
                    hint=f"choose one of: {', '.join(map(str, choices))}",
                )


def _build(cls: type[C], values: Mapping[str, Any], *, source: str) -> C:
    check_choices(cls, values, source=source)
    try:
        return cls(**values)
    except ConfigError:
        raise
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{source}: invalid {cls.__name__}: {e}") from None


# --- the one type check ------------------------------------------------------------------------


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """Field name → type hint, resolved class by class along the MRO (a base whose forward
    references do not resolve leaves its fields unchecked, not the whole class)."""
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        own = inspect.get_annotations(klass)
        if not own:
            continue
        try:
            hints.update({n: tp for n, tp in typing.get_type_hints(klass).items() if n in own})
        except Exception:  # one unresolvable annotation: resolve the others one by one
            module = sys.modules.get(klass.__module__)
            for name, annotation in own.items():
                holder = types.SimpleNamespace(__annotations__={name: annotation})
                try:
                    hints[name] = typing.get_type_hints(holder, vars(module) if module else None)[
                        name
                    ]
                except Exception:
                    hints[name] = Any
    return hints


@functools.cache
def _adapter(cls: type, key: str) -> Any:
    """The pydantic ``TypeAdapter`` of field ``key`` of ``cls``, or None (untyped: not checked)."""
    tp = _hints(cls).get(key, Any)
    if tp is Any or isinstance(tp, (str, typing.TypeVar, typing.ForwardRef)):
        return None
    from pydantic import ConfigDict, TypeAdapter

    try:
        return TypeAdapter(
            tp, config=ConfigDict(arbitrary_types_allowed=True, coerce_numbers_to_str=True)
        )
    except Exception:
        try:  # dataclasses and models carry their own config
            return TypeAdapter(tp)
        except Exception:  # a type pydantic cannot describe: left to the class itself
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


def _typed(cls: type, key: str, candidates: Sequence[Any], *, source: str) -> Any:
    """The first of ``candidates`` (readings of one value) that field ``key`` accepts,
    converted to its type; none fits: one :class:`ConfigError` naming source, key and type."""
    adapter = _adapter(cls, key)
    if adapter is None:
        return candidates[0]
    from pydantic import ValidationError

    for value in candidates:
        try:
            # strict for a boolean: true is not the number 1 (lax mode would take it)
            return adapter.validate_python(value, strict=isinstance(value, bool) or None)
        except (ValidationError, ValueError, TypeError, OverflowError):
            continue
    value = candidates[0]
    tp = _hints(cls)[key]
    shown = "<redacted>" if _is_secret(key) else _short_repr(value)  # no token in a log
    raise ConfigError(
        f"{source}: key '{key}' has the wrong type: got {type(value).__name__} {shown}",
        hint=f"give a value of type {_type_name(tp)}",
    )


def typed_values(cls: type, data: Mapping[str, Any], *, source: str = "config") -> dict[str, Any]:
    """``data`` (field names → values from a dict or YAML) checked against the fields' types
    and converted (``3`` → ``3.0`` for a float, ``"1e-5"`` → ``1e-05``); the first value that
    does not fit is a :class:`ConfigError` naming ``source`` and the key."""
    return {key: _typed(cls, key, [value], source=source) for key, value in data.items()}


def config_from_dict(cls: type[C], data: Mapping[str, Any] | None, *, source: str = "config") -> C:
    """Build ``cls`` from a plain dict: aliases resolved, unknown keys and wrongly typed values
    are errors naming ``source``, values converted to their fields' types."""
    data = resolve_aliases(cls, dict(data or {}), source=source)
    check_keys(cls, data, source=source)
    return _build(cls, typed_values(cls, data, source=source), source=source)


_NUMBER_RULES: dict[str, tuple[Callable[[float], bool], str]] = {
    ">=1": (lambda v: v >= 1, "at least 1"),
    ">0": (lambda v: v > 0, "positive"),
    ">=0": (lambda v: v >= 0, "zero or more"),
    "[0,1]": (lambda v: 0 <= v <= 1, "between 0 and 1"),
    "[0,1)": (lambda v: 0 <= v < 1, "at least 0 and below 1"),
    "-1|>=1": (lambda v: v == -1 or v >= 1, "-1 (no limit) or at least 1"),
}
"""The ranges :func:`check_numbers` knows, with how its errors describe them."""

MAX_INT = 2**63 - 1
"""The largest integer setting :func:`check_numbers` accepts (a 64-bit signed integer: seeds,
step counts and sizes go to torch / numpy / SQLite, which hold no more)."""

TRAINING_ARGUMENT_RULES: dict[str, str] = {
    # transformers TrainingArguments settings that crash (or silently misbehave) later when out
    # of range; trainer configs subclassing it extend this table (see :func:`check_numbers`)
    "per_device_train_batch_size": ">=1",
    "per_device_eval_batch_size": ">=1",
    "gradient_accumulation_steps": ">=1",
    "num_train_epochs": ">0",
    "max_steps": "-1|>=1",
    "learning_rate": ">=0",
    "weight_decay": ">=0",
    "warmup_steps": ">=0",
    "warmup_ratio": "[0,1]",
    "max_grad_norm": ">=0",
    "logging_steps": ">0",
    "save_steps": ">0",
    "eval_steps": ">0",
    "save_total_limit": ">=0",
    "dataloader_num_workers": ">=0",
    "seed": ">=0",
}


def check_numbers(cfg: Any, rules: Mapping[str, str], *, prefix: str = "--") -> None:
    """Raise one :class:`ConfigError` naming the flag for the first number of ``cfg`` out of
    its range: ``rules`` maps a field to one of ``>=1``, ``>0``, ``>=0``, ``[0,1]``, ``[0,1)``,
    ``-1|>=1``. ``None`` (where a field allows it), non-numbers and absent fields are skipped;
    NaN, infinity and integers beyond :data:`MAX_INT` (``seed: 1000…0`` of 400 digits) are out
    of every range."""
    for name, rule in rules.items():
        value = getattr(cfg, name, None)
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        ok, expected = _NUMBER_RULES[rule]
        if isinstance(value, int) and abs(value) > MAX_INT:
            raise ConfigError(
                f"{prefix}{name} must be {expected} and at most {MAX_INT:,}, "
                f"got {_short_repr(value)}"
            )
        if not (math.isfinite(value) and ok(value)):
            raise ConfigError(f"{prefix}{name} must be {expected}, got {value!r}")


# --- YAML ----------------------------------------------------------------------------------------

MAX_YAML_BYTES = 10 * 2**20
"""The largest config file :func:`load_yaml` reads (configs are a few kB)."""

MAX_YAML_NODES = 100_000
"""The most values a YAML config may hold once its aliases are expanded: a "billion laughs"
alias bomb fails fast, before anything is built from it."""


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key: Any, first: int, second: int) -> None:
        super().__init__(f"key {key!r} is given twice (lines {first} and {second})")


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2's floats (``1e-5``, ``1E-5``, ``5e3``, ``.5``: PyYAML
    alone reads the first three as strings) and duplicate keys refused."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(
                key_node, yaml.ScalarNode
            ):
                continue
            key = self.construct_object(key_node)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise _DuplicateKey(key, seen[key], line)
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


# a copy of every resolver list: PyYAML's add_implicit_resolver copies the table but appends to
# the lists it shares with SafeLoader, which would change every safe_load in the process
_Loader.yaml_implicit_resolvers = {
    first: list(resolvers) for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+|\.[0-9_]+)$"),
    list("-+0123456789."),
)


def _expanded_size(root: yaml.Node, where: str) -> int:
    """The number of nodes of ``root`` with every alias expanded, counted once per shared node
    (so in time linear in the file); over :data:`MAX_YAML_NODES` or recursive is an error."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise ConfigError(f"{where}: a YAML alias refers to itself (a recursive structure)")
        open_nodes.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        open_nodes.discard(key)
        if total > MAX_YAML_NODES:
            raise ConfigError(
                f"{where}: the YAML expands to more than {MAX_YAML_NODES:,} values "
                "(aliases repeated into an 'alias bomb'?)",
                hint="a config file is a small mapping of keys; write it without nested aliases",
            )
        sizes[key] = total
        return total

    return size(root)


def parse_yaml(text: str, *, where: str = "config") -> Any:
    """``text`` read by leantrain's YAML loader (safe, YAML 1.2 floats, duplicate keys and alias
    bombs refused); every error is one :class:`ConfigError` naming ``where``."""
    loader = None
    try:
        loader = _Loader(text)  # its reader refuses control characters here
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, where)
        return loader.construct_document(node)
    except _DuplicateKey as e:
        raise ConfigError(f"{where}: {e}", hint="give each key once") from None
    except yaml.YAMLError as e:
        detail = " ".join(str(e).split())
        raise ConfigError(f"{where}: malformed YAML: {detail}") from None
    except RecursionError:
        raise ConfigError(f"{where}: the YAML is nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


def read_yaml_file(path: str | Path) -> Any:
    """The document of a YAML file (any value, ``None`` when empty); an unreadable, oversized,
    non-UTF-8 or malformed file is one :class:`ConfigError` naming it."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}", hint="check the --config path")
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_YAML_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the config file: {e.strerror or e}") from None
    if len(raw) > MAX_YAML_BYTES:
        raise ConfigError(
            f"{path}: a config file of more than {MAX_YAML_BYTES // 2**20} MiB",
            hint="is this the right file? configs are small YAML mappings",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(
            f"{path}: not a UTF-8 text file (byte {e.start}); is it a YAML config?",
            hint="save it as UTF-8 YAML",
        ) from None
    return parse_yaml(text, where=str(path))


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping of config keys (:func:`read_yaml_file`); also an error: an empty or
    ``null`` file (a config file without keys is a mistake), or one that is not a mapping of
    names."""
    data = read_yaml_file(path)
    if data is None or data == {}:
        raise ConfigError(
            f"{path}: the config file is empty (no keys)",
            hint="add the config's keys to it (a config file without any is a mistake)",
        )
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys, got {type(data).__name__}")
    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise ConfigError(
            f"{path}: config key {bad[0]!r} is not a name ({type(bad[0]).__name__})",
            hint="config keys are names such as max_steps",
        )
    return data


def config_from_yaml(cls: type[C], path: str | Path, **overrides: Any) -> C:
    """Build ``cls`` from a YAML file, with keyword overrides applied on top (not converted)."""
    data = resolve_aliases(cls, load_yaml(path), source=str(path))
    check_keys(cls, data, source=str(path))
    values = typed_values(cls, data, source=str(path))
    values.update(resolve_aliases(cls, overrides, source="keyword arguments"))
    check_keys(cls, values, source="keyword arguments")
    return _build(cls, values, source=str(path))


# --- flags ---------------------------------------------------------------------------------------


def _read_argv(argv: Sequence[str]) -> tuple[dict[str, list[str]], str | None, set[str]]:
    """``--name value`` / ``--name=value`` / bare ``--name`` (``true``) flags of ``argv``: the
    raw values of each name (``-`` read as ``_``; repeated flags collect), the ``--config``
    path and the names given bare."""
    flags: dict[str, list[str]] = {}
    bare: set[str] = set()
    config_path: str | None = None
    i = 0
    argv = list(argv)
    while i < len(argv):
        tok = argv[i]
        if not tok.startswith("--"):
            raise ConfigError(f"unexpected argument '{tok}'", hint="flags look like --name value")
        name, eq, inline = tok[2:].partition("=")
        if eq:
            value: str | None = inline
            i += 1
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            value = argv[i + 1]
            i += 2
        else:
            value = None
            i += 1
        if name == "config":
            if value is None:
                raise ConfigError("--config needs a path to a YAML file")
            config_path = value
            continue
        name = name.replace("-", "_")
        if value is None:
            bare.add(name)
        flags.setdefault(name, []).append("true" if value is None else value)
    return flags, config_path, bare


def _flag_readings(raws: list[str]) -> list[Any]:
    """The readings of a flag's raw values, most specific first: the value as YAML (``1e-5``,
    ``null``, ``[a, b]``), the plain string, then all values as a list (a repeated list flag)."""

    def as_yaml(raw: str) -> Any:
        try:
            return parse_yaml(raw, where="command line")
        except ConfigError as e:
            # an alias bomb or a recursive alias is refused; any other text that is not YAML
            # (``*.lean``, ``*Important*: …``, which YAML scans as an alias) is the string typed
            if "alias bomb" in str(e) or "refers to itself" in str(e):
                raise
            return raw

    items: list[Any] = []
    for raw in raws:
        value = as_yaml(raw) if raw.lstrip().startswith("[") else raw
        items.extend(value if isinstance(value, list) else [value])
    last = raws[-1]
    singles = [as_yaml(last), last]
    return [*singles, items] if len(raws) == 1 else [items, *singles]


def _flag_value(cls: type, key: str, raws: list[str]) -> Any:
    """The typed value of flag ``key`` given ``raws``. A field that takes the flag as text gets
    the text typed, not its YAML reading: ``--model_name 1e3`` is ``"1e3"`` (not ``"1000.0"``),
    ``--system_prompt 'Prove it. #lean'`` keeps ``#lean`` (not cut as a YAML comment) and its
    spaces, ``--system_prompt ""`` is ``""`` (not ``None``); a quoted YAML string
    (``--x "'null'"``) is still read as YAML."""
    value = _typed(cls, key, _flag_readings(raws), source="command line")
    raw = raws[-1]
    # an empty text is an empty YAML document, None: a string field gets the "" typed
    # (``--system_prompt ""``: no system message, where None means the default one)
    as_text = (isinstance(value, str) and value != raw) or (value is None and not raw.strip())
    if as_text and not raw.lstrip().startswith(("'", '"')):
        try:
            text = _typed(cls, key, [raw], source="command line")
        except ConfigError:
            return value
        if isinstance(text, str):
            return text
    return value


def _check_bare(cls: type, key: str, name: str) -> None:
    """A bare ``--name`` means ``true``: an error for a field that takes no boolean (``--model
    --lr 1e-5``, a forgotten value, would otherwise be the model ``"true"``)."""
    adapter = _adapter(cls, key)
    if adapter is None:
        return
    from pydantic import ValidationError

    try:
        adapter.validate_python(True, strict=True)
    except (ValidationError, ValueError, TypeError):
        flag = "--" + name.replace("_", "-")
        raise ConfigError(
            f"command line: {flag} needs a value",
            hint=f"give {flag} VALUE (a value of type {_type_name(_hints(cls)[key])})",
        ) from None


def _sections(cls: type) -> dict[str, Sequence[str]]:
    """The class's ``flag_sections()``: dict fields whose keys are flags of their own
    (retrieval's ``trainer``: ``--max-steps 20`` is ``trainer: {max_steps: 20}``), each key
    read as YAML and merged over the ``--config`` file's section."""
    hook = getattr(cls, "flag_sections", None)
    return dict(hook()) if hook is not None else {}


def _flag_data(
    cls: type,
    flags: Mapping[str, list[str]],
    aliases: Mapping[str, str],
    *,
    known_only: bool,
    bare: Set[str] = frozenset(),
    sections: Mapping[str, Sequence[str]],
) -> dict[str, Any]:
    fields = config_fields(cls)
    data: dict[str, Any] = {}
    given_as: dict[str, str] = {}
    for name, raws in flags.items():
        key = aliases.get(name, name)
        section = next((s for s, keys in sections.items() if name in keys), None)
        if key not in fields and section is not None:
            data.setdefault(section, {})[name] = _flag_readings(raws[-1:])[0]
            continue
        if key not in fields:
            if known_only:
                continue
            moved = getattr(cls, "moved_key", None)
            error = moved(name, _flag_readings(raws[-1:])[0]) if moved is not None else None
            if error is not None:
                raise error
            hint = _suggest(
                name, sorted({*fields, *aliases, *(k for s in sections.values() for k in s)})
            )
            if hint.startswith("did you mean"):
                hint = "did you mean '--" + hint.split("'")[1].replace("_", "-") + "'?"
            raise ConfigError(f"unknown option '--{name.replace('_', '-')}'", hint=hint)
        if key in given_as:  # an alias and its field (or two aliases): one would silently win
            first, second = sorted((given_as[key], name))
            raise ConfigError(
                f"command line: '--{first.replace('_', '-')}' and "
                f"'--{second.replace('_', '-')}' are the same setting; give one"
            )
        given_as[key] = name
        if name in bare:
            _check_bare(cls, key, name)
        data[key] = _flag_value(cls, key, raws)
    return data


def _cli_aliases(cls: type, aliases: Mapping[str, str] | None) -> dict[str, str]:
    fields = config_fields(cls)
    own = {a: f for a, f in ALIASES.items() if f in fields and a not in fields}
    return {**own, **dict(aliases or {})}


def _cli_values(
    cls: type,
    argv: Sequence[str],
    aliases: Mapping[str, str] | None,
    *,
    known_only: bool = False,
) -> dict[str, Any]:
    """The typed values that ``--config FILE`` and the flags of ``argv`` give ``cls``'s
    fields (flags win); ``known_only`` skips keys that are not fields instead of refusing."""
    aliases = _cli_aliases(cls, aliases)
    flags, config_path, bare = _read_argv(argv)
    data: dict[str, Any] = {}
    if config_path is not None:
        yaml_data = resolve_aliases(cls, load_yaml(config_path), source=config_path)
        if known_only:
            yaml_data = {k: v for k, v in yaml_data.items() if k in config_fields(cls)}
        check_keys(cls, yaml_data, source=config_path)
        data.update(typed_values(cls, yaml_data, source=config_path))
    sections = {} if known_only else _sections(cls)
    for key, value in _flag_data(
        cls, flags, aliases, known_only=known_only, bare=bare, sections=sections
    ).items():
        data[key] = {**data.get(key, {}), **value} if key in sections else value
    return data


def parse_known(
    cls: type[C], argv: Sequence[str], *, aliases: Mapping[str, str] | None = None
) -> C:
    """``cls`` built from only those settings of ``argv`` (flags and ``--config FILE``) that are
    its fields, the rest ignored: a light class (leantrain's own fields) read and checked
    *before* a command imports the heavy engine class that :func:`parse_cli` then fills."""
    return _build(cls, _cli_values(cls, argv, aliases, known_only=True), source="command line")


def parse_cli(
    cls: type[C],
    argv: Sequence[str],
    *,
    aliases: Mapping[str, str] | None = None,
    prog: str | None = None,
    description: str | None = None,
) -> C:
    """Build ``cls`` from command-line flags (``--config FILE`` first, flags override it).

    ``aliases`` maps friendly flag names to fields (``{"model": "model_name"}``); ``--foo-bar``
    and ``--foo_bar`` are the same flag; a list field may be given by repeating its flag.
    ``--help`` prints leantrain's own fields
    first, then the engine's by class, each with its help text, and exits 0.
    """
    if "-h" in argv or "--help" in argv:
        print(format_help(cls, prog=prog, description=description, aliases=aliases))
        raise SystemExit(0)
    return _build(cls, _cli_values(cls, argv, aliases), source="command line")


def _field_owner(cls: type, name: str) -> type:
    for klass in cls.__mro__:
        if name in inspect.get_annotations(klass):
            return klass
    return cls


def format_help(
    cls: type,
    *,
    prog: str | None = None,
    description: str | None = None,
    aliases: Mapping[str, str] | None = None,
) -> str:
    """The ``--help`` text of ``cls``: usage, the options of its own package (leantrain's),
    then each engine base class's (TRL, transformers) under its own heading; each option with its ``metadata["help"]``."""
    groups: dict[str, list[str]] = {}
    order: dict[str, int] = {}
    width = 30
    for name, f in config_fields(cls).items():
        owner = _field_owner(cls, name)
        ours = owner.__module__.split(".")[0] == cls.__module__.split(".")[0]
        top = owner.__module__.split(".")[0]
        heading = f"{top} options" + (
            "" if ours else f" of {owner.__name__} (passed to the engine)"
        )
        tp = _hints(cls).get(name, Any)
        metavar = _type_name(tp).replace(" | null", "").replace("null | ", "").upper()
        flag = f"--{name} [BOOL]" if metavar == "BOOL" else f"--{name} {metavar}"
        text = " ".join(str(f.metadata.get("help", "")).split())
        default = f.default if f.default is not dataclasses.MISSING else None
        if default is not None and not callable(default):
            text += f" (default: {default.value if isinstance(default, enum.Enum) else default})"
        lines = textwrap.wrap(text, 100 - width) or [""]
        first = f"  {flag:<{width - 4}}  " if len(flag) <= width - 4 else f"  {flag}\n{'':{width}}"
        entry = first + lines[0] + "".join(f"\n{'':{width}}{line}" for line in lines[1:])
        groups.setdefault(heading, []).append(entry)
        order.setdefault(heading, -1 if ours else cls.__mro__.index(owner))
    out = [f"usage: {prog or cls.__name__} [--config FILE] [--OPTION VALUE ...]"]
    if description:
        out += ["", description]
    out += [
        "",
        "  --config FILE"
        + " " * (width - 15)
        + "YAML file of options; flags given here override it",
    ]
    for heading in sorted(groups, key=order.__getitem__):  # own, then most derived first
        out += ["", f"{heading}:", *groups[heading]]
    shown = _cli_aliases(cls, aliases)
    if shown:
        out += ["", "aliases: " + ", ".join(f"--{a} = --{f}" for a, f in shown.items())]
    return "\n".join(out)


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
        if hasattr(v, "to_dict"):
            try:
                return safe(v.to_dict())
            except Exception:
                pass
        return str(v)

    def value(name: str) -> Any:
        v = getattr(cfg, name)
        return "<redacted>" if v and _is_secret(name) else safe(v)

    return {
        f.name: value(f.name) for f in dataclasses.fields(cfg) if f.init and hasattr(cfg, f.name)
    }


# Config fields never written to a manifest (or an error) in clear: a whole word of the name is
# token / secret / password / api_key (TrainingArguments.hub_token, wandb_api_key). Not a name
# that only contains the letters (max_new_tokens, average_tokens_across_devices) nor a
# vocabulary token (eos_token, pad_token): those are settings whose changes a resume compares.
_SECRET_RE = re.compile(r"(?:^|_)(?:token|secret|password|passwd|api_?key)(?:_|$)", re.IGNORECASE)
_VOCABULARY_TOKEN = re.compile(r"^(?:eos|bos|pad|unk|sep|cls|mask)_token$", re.IGNORECASE)


def _is_secret(name: str) -> bool:
    """Is the config field ``name`` a secret (see above)?"""
    return bool(_SECRET_RE.search(name)) and not _VOCABULARY_TOKEN.match(name)
