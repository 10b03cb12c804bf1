"""One way to fill a trainer's config dataclass: from Python, a plain dict, YAML or CLI flags.

Every trainer config is a dataclass (often subclassing TRL's or transformers' arguments). The
same class is filled by:

* Python — ``SFTConfig(model_name="tiny", ...)``;
* a dict — :func:`config_from_dict` (what an agent tool call passes);
* YAML — :func:`config_from_yaml` (``yaml.safe_load``);
* the command line — :func:`parse_cli`, with ``--config file.yaml`` and flags overriding it.

Unknown keys are errors that name the closest valid key. Type checking and coercion of CLI
strings are done by `jsonargparse <https://jsonargparse.readthedocs.io>`_; help texts come from
each field's ``metadata["help"]`` (TRL's convention), so they are written once.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import json
import math
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
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
    close = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
    return (
        f"did you mean '{close[0]}'?"
        if close
        else f"valid keys include: {', '.join(sorted(valid)[:12])} …"
    )


def check_keys(cls: type, keys: Sequence[str], *, source: str) -> None:
    """Raise :class:`ConfigError` for the first key that is not a field of ``cls``."""
    valid = list(config_fields(cls))
    for key in keys:
        if key not in valid:
            raise ConfigError(
                f"{source}: unknown key '{key}' for {cls.__name__}", hint=_suggest(key, valid)
            )


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


def _resolve_hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # forward refs that cannot be resolved: fall back to raw annotations
        hints: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            hints.update(getattr(klass, "__annotations__", {}))
        return hints


def _type_ok(value: Any, tp: Any) -> bool:
    """Loose structural check of a Python value against a type hint (for dict / YAML input)."""
    if tp is Any or isinstance(tp, (str, typing.TypeVar)):
        return True
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_type_ok(value, a) for a in typing.get_args(tp))
    if origin is typing.Literal:
        return value in typing.get_args(tp)
    if tp is type(None):
        return value is None
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is bool:
        return isinstance(value, bool)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return isinstance(value, (tp, str))
    if origin in (list, tuple, Sequence, typing.Sequence, set):
        return isinstance(value, (list, tuple, set))
    if origin in (dict, Mapping, typing.Mapping):
        return isinstance(value, Mapping)
    if isinstance(tp, type):
        return isinstance(value, tp) or (tp in (Path,) and isinstance(value, str))
    return True


MAX_INT = 2**63 - 1
"""The largest integer setting :func:`check_numbers` accepts (a 64-bit signed integer: seeds,
step counts and sizes go to torch / numpy / SQLite, which hold no more)."""


def check_types(cls: type, data: Mapping[str, Any], *, source: str = "config") -> None:
    """Raise :class:`ConfigError` for the first value of ``data`` (dict / YAML input) whose
    type does not fit its field of ``cls`` (``seed: [1, 2]``, ``model_name: {a: 1}``)."""
    hints = _resolve_hints(cls)
    for key, value in data.items():
        tp = hints.get(key, Any)
        if not _type_ok(value, tp):
            shown = _short_repr(value)
            raise ConfigError(
                f"{source}: key '{key}' has the wrong type: got {type(value).__name__} {shown}",
                hint=f"expected {getattr(tp, '__name__', None) or str(tp).replace('typing.', '')}",
            )


def _short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (a huge YAML value stays one short line)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
        return f"<an integer of {len(str(abs(value)))} digits>"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def config_from_dict(cls: type[C], data: Mapping[str, Any] | None, *, source: str = "config") -> C:
    """Build ``cls`` from a plain dict; unknown keys and wrongly typed values are errors."""
    data = resolve_aliases(cls, dict(data or {}), source=source)
    check_keys(cls, list(data), source=source)
    check_types(cls, data, source=source)
    return _build(cls, data, source=source)


_NUMBER_RULES: dict[str, tuple[Callable[[float], bool], str]] = {
    ">=1": (lambda v: v >= 1, "at least 1"),
    ">0": (lambda v: v > 0, "positive"),
    ">=0": (lambda v: v >= 0, "zero or more"),
    "[0,1]": (lambda v: 0 <= v <= 1, "between 0 and 1"),
    "[0,1)": (lambda v: 0 <= v < 1, "at least 0 and below 1"),
    "-1|>=1": (lambda v: v == -1 or v >= 1, "-1 (no limit) or at least 1"),
}
"""The ranges :func:`check_numbers` knows, with how its errors describe them."""


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


MAX_YAML_BYTES = 10 * 2**20
"""The largest config file :func:`load_yaml` reads (configs are a few kB)."""

MAX_YAML_NODES = 100_000
"""The most values a YAML config may hold once its aliases are expanded: a "billion laughs"
alias bomb fails fast, before anything is built from it."""


def _expanded_size(root: yaml.Node, path: Path) -> int:
    """The number of nodes of ``root`` with every alias expanded, counted once per shared node
    (so in time linear in the file); over :data:`MAX_YAML_NODES` or recursive is an error."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise ConfigError(f"{path}: a YAML alias refers to itself (a recursive structure)")
        open_nodes.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        open_nodes.discard(key)
        if total > MAX_YAML_NODES:
            raise ConfigError(
                f"{path}: the YAML expands to more than {MAX_YAML_NODES:,} values "
                "(aliases repeated into an 'alias bomb'?)",
                hint="a config file is a small mapping of keys; write it without nested aliases",
            )
        sizes[key] = total
        return total

    return size(root)


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping of config keys (``yaml.SafeLoader``); every error is one
    :class:`ConfigError` naming the file: not found, too large, not UTF-8 text, malformed,
    nested too deeply, aliases expanding past :data:`MAX_YAML_NODES`, empty or ``null`` (a
    config file without keys is a mistake), or not a mapping."""
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
    loader = None
    try:
        loader = yaml.SafeLoader(text)  # its reader refuses control characters here
        node = loader.get_single_node()
        if node is not None:
            _expanded_size(node, path)
            data = loader.construct_document(node)
        else:
            data = None
    except yaml.YAMLError as e:
        detail = " ".join(str(e).split())
        raise ConfigError(f"{path}: malformed YAML: {detail}") from None
    except RecursionError:
        raise ConfigError(f"{path}: the YAML is nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()
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
    """Build ``cls`` from a YAML file, with keyword overrides applied on top."""
    data = load_yaml(path)
    data.update(overrides)
    return config_from_dict(cls, data, source=str(path))


def _list_fields(cls: type) -> set[str]:
    out = set()
    for name, tp in _resolve_hints(cls).items():
        is_union = typing.get_origin(tp) in (typing.Union, types.UnionType)
        candidates = list(typing.get_args(tp)) if is_union else [tp]
        if all(
            typing.get_origin(c) in (list, Sequence, typing.Sequence) or c is type(None)
            for c in candidates
        ) and any(typing.get_origin(c) in (list, Sequence, typing.Sequence) for c in candidates):
            out.add(name)
    return out


def _normalise_argv(
    cls: type, argv: Sequence[str], aliases: Mapping[str, str]
) -> tuple[list[str], str | None]:
    """Map ``--foo-bar``/aliases to field names, group repeated list flags, pull ``--config``."""
    fields = config_fields(cls)
    lists = _list_fields(cls)
    config_path: str | None = None
    order: list[str] = []
    values: dict[str, list[str]] = {}
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
        key = aliases.get(name, aliases.get(name.replace("-", "_"), name.replace("-", "_")))
        if key not in fields:
            valid = sorted({*fields, *aliases})
            hint = _suggest(name.replace("-", "_"), valid)
            if hint.startswith("did you mean"):
                hint = "did you mean '--" + hint.split("'")[1].replace("_", "-") + "'?"
            raise ConfigError(f"unknown option '--{name}'", hint=hint)
        if value is None:
            value = "true"  # a bare flag switches a boolean on
        if key not in values:
            order.append(key)
            values[key] = []
        values[key].append(value)
    out: list[str] = []
    for key in order:
        vals = values[key]
        if key in lists:
            items: list[str] = []
            for v in vals:
                items.extend(json.loads(v) if v.startswith("[") else [v])
            out += [f"--{key}", json.dumps(items)]
        else:
            out += [f"--{key}", vals[-1]]
    return out, config_path


def build_parser(cls: type, *, prog: str | None = None, description: str | None = None) -> Any:
    """A jsonargparse parser for ``cls`` with each field's ``metadata['help']`` as its help."""
    from jsonargparse import ArgumentParser

    parser = ArgumentParser(
        prog=prog, description=description, exit_on_error=False, default_env=False
    )
    parser.add_argument("--config", help="YAML file of config keys; flags given here override it")
    parser.add_class_arguments(cls, fail_untyped=False, sub_configs=False)
    fields = config_fields(cls)
    for action in parser._actions:
        f = fields.get(action.dest)
        if f is not None and f.metadata.get("help"):
            action.help = f.metadata["help"]
    return parser


def parse_cli(
    cls: type[C],
    argv: Sequence[str],
    *,
    aliases: Mapping[str, str] | None = None,
    defaults: Mapping[str, Any] | None = None,
    prog: str | None = None,
    description: str | None = None,
) -> C:
    """Build ``cls`` from command-line flags (``--config FILE`` first, flags override it).

    ``aliases`` maps friendly flag names to fields (``{"model": "model_name"}``); ``--foo-bar``
    and ``--foo_bar`` are the same flag; a list field may be given by repeating its flag.
    ``--help`` prints every field with its help text and exits 0.
    """
    aliases = {
        **{
            a: f
            for a, f in ALIASES.items()
            if f in config_fields(cls) and a not in config_fields(cls)
        },
        **dict(aliases or {}),
    }
    if "-h" in argv or "--help" in argv:
        parser = build_parser(cls, prog=prog, description=description)
        if aliases:
            parser.epilog = "aliases: " + ", ".join(f"--{a} = --{f}" for a, f in aliases.items())
        parser.print_help()
        raise SystemExit(0)
    normalized, config_path = _normalise_argv(cls, argv, aliases)
    data: dict[str, Any] = dict(defaults or {})
    if config_path is not None:
        yaml_data = resolve_aliases(cls, load_yaml(config_path), source=config_path)
        check_keys(cls, list(yaml_data), source=config_path)
        check_types(cls, yaml_data, source=config_path)
        data.update(yaml_data)
    if normalized:
        parser = build_parser(cls, prog=prog)
        try:
            ns = parser.parse_args(normalized, defaults=False)
        except (Exception, SystemExit) as e:  # jsonargparse reports type errors this way
            detail = " ".join(line.strip() for line in str(e).strip().splitlines() if line.strip())
            raise ConfigError(f"invalid command-line value: {detail[:300]}") from None
        for key in dict.fromkeys(a[2:] for a in normalized if a.startswith("--")):
            data[key] = ns[key]
    check_keys(cls, list(data), source="command line")
    return _build(cls, data, source="command line")


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
        return "<redacted>" if v and _SECRET.search(name) else safe(v)

    return {
        f.name: value(f.name) for f in dataclasses.fields(cfg) if f.init and hasattr(cfg, f.name)
    }


# Config fields never written to a manifest in clear (e.g. TrainingArguments.hub_token).
_SECRET = re.compile(r"token|secret|password|api_key", re.IGNORECASE)
