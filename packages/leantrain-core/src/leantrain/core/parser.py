"""The one command-line parser: argparse generated from the fields of config groups.

``parse((ModelArgs, EvalArgs), argv)`` returns one instance per group (TRL's ``TrlParser``
shape); ``parse(SFTConfig, argv)`` one instance of a class composed of groups by inheritance.
Every field is ``--foo-bar`` and ``--foo_bar`` (and ``--ALIAS`` for each declared alias), one
argparse help group per dataclass (leantrain's first, the engine's after), ``--config FILE.yaml``
below the flags. A flag's text goes to :func:`leantrain.core.config.typed` (``type=str``, then
the one type check): a string field takes the text as given; a list field collects repeated
flags or a YAML ``[a, b]``; a bare boolean flag is true. Required fields (no default) are
argparse-required unless ``--config`` gives them; ``--help`` marks them. Every error is one
:class:`ConfigError` line (exit 2), with did-you-mean for an unknown flag.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
import typing
from collections.abc import Sequence
from typing import Any, NoReturn, TypeVar

from leantrain.core import config as c
from leantrain.core.errors import ConfigError

_SOURCE = "command line"
C = TypeVar("C")


class ArgumentParser(argparse.ArgumentParser):
    """``argparse`` whose errors are one :class:`ConfigError` line naming the flag."""

    def error(self, message: str) -> NoReturn:
        required = re.match(r"the following arguments are required: (.*)", message)
        if required:  # each option by its first spelling
            names = ", ".join(n.split("/")[0] for n in required[1].split(", "))
            message = f"missing required {names}"
        raise ConfigError(f"{self.prog}: {message}", hint=f"run '{self.prog} --help'")


class _Collect(argparse.Action):
    """Keeps every ``(option string, raw text)`` of a field, in order."""

    def __call__(self, parser: Any, ns: Any, values: Any, option_string: str | None = None) -> None:
        got = [(option_string, v) for v in (values if isinstance(values, list) else [values])]
        setattr(ns, self.dest, [*(getattr(ns, self.dest, None) or []), *got])


def _flag(name: str) -> list[str]:
    """``--foo-bar`` and ``--foo_bar``; a one-letter name is ``-k`` too."""
    short = [f"-{name}"] if len(name) == 1 else []
    return list(dict.fromkeys([f"--{name.replace('_', '-')}", f"--{name}", *short]))


def _readings(raws: list[str]) -> list[Any]:
    """A flag's raw values read most specific first: as YAML (``1e-5``, ``null``, ``[a, b]``),
    the plain string, then all values as a list (a repeated list flag)."""

    def as_yaml(raw: str) -> Any:
        try:
            return c.parse_yaml(raw, where=_SOURCE)
        except ConfigError as e:  # not YAML (``*.lean``): the text; an alias bomb: refused
            if "alias bomb" in str(e) or "refers to itself" in str(e):
                raise
            return raw

    items: list[Any] = []
    for raw in raws:
        value = as_yaml(raw) if raw.lstrip().startswith("[") else raw
        items.extend(value if isinstance(value, list) else [value])
    singles = [as_yaml(raws[-1]), raws[-1]]
    return [*singles, items] if len(raws) == 1 else [items, *singles]


def flag_value(cls: type, key: str, raws: list[str]) -> Any:
    """The typed value of field ``key`` given its flag's ``raws``: a field that takes text gets
    the text as typed (``--model_name 1e3`` is ``"1e3"``, ``--system_prompt ""`` is ``""``,
    ``#`` is no comment); ``null``/``~`` is None, a quoted text is read as YAML."""
    value = c.typed(cls, key, _readings(raws), source=_SOURCE)
    raw = raws[-1]
    as_text = (isinstance(value, str) and value != raw) or (value is None and not raw.strip())
    if as_text and not raw.lstrip().startswith(("'", '"')):
        try:
            text = c.typed(cls, key, [raw, [raw]], source=_SOURCE)  # a list field: [raw]
        except ConfigError:
            return value
        if isinstance(text, (str, list)):
            return text
    return value


def _help(cls: type, f: dataclasses.Field[Any], required: bool) -> str:
    text = " ".join(str(f.metadata.get("help", "")).split())
    choices = c._choices(c._hints(cls).get(f.name))
    if choices:
        text += f" (choices: {', '.join(map(str, choices))})"
    if required:
        text += " (required)"
    elif f.default is not dataclasses.MISSING and f.default is not None:
        text += f" (default: {getattr(f.default, 'value', f.default)!s})"
    return text.replace("%%", "%").replace("%", "%%")  # engine help comes escaped already


def build_parser(
    groups: Sequence[type],
    *,
    prog: str | None = None,
    description: str | None = None,
    given: Sequence[str] = (),
) -> ArgumentParser:
    """The argparse parser of ``groups``' fields (``given``: fields a ``--config`` file sets,
    so not required on the command line)."""
    parser = ArgumentParser(prog=prog, description=description, allow_abbrev=False)
    own_config = any("config" in c.config_fields(g) for g in groups)  # a group's own file
    needed = any(getattr(g, "config_required", False) for g in groups)  # a class's own hook
    if not own_config:
        parser.add_argument(
            "--config",
            metavar="FILE",
            required=needed,
            help="YAML file of options; flags override it" + (" (required)" if needed else ""),
        )
    sections: dict[type, Any] = {}  # one help group per class that declares fields
    for cls in groups:
        aliases = c.aliases_of(cls)
        for name, f in c.config_fields(cls).items():
            owner = next((k for k in cls.__mro__ if name in inspect.get_annotations(k)), cls)
            top = owner.__module__.split(".")[0]
            ours = top == groups[0].__module__.split(".")[0]
            if owner not in sections:
                # the docstring's first sentence (a wrapped one whole, not its first line)
                doc = " ".join((owner.__doc__ or "").strip().split("\n\n")[0].split())
                doc = re.split(r"(?<=[a-z)`]\.)\s", doc, maxsplit=1)[0]
                doc = owner.__name__ if doc.startswith(owner.__name__ + "(") or not doc else doc
                engine = f" of {owner.__name__} (passed to the engine)"
                title = f"{top} options" + (f": {owner.__name__}" if ours else engine)
                sections[owner] = parser.add_argument_group(title, doc if ours else None)
                sections[owner].order = (not ours, cls.__mro__.index(owner) * (-1 if ours else 1))
            required = f.default is f.default_factory is dataclasses.MISSING and name not in given
            tp = c._strip(c._hints(cls).get(name, Any))
            is_bool = tp is bool or tp == bool | None
            kinds = [m for m in c._members(tp) or (tp,) if m is not type(None)]
            metavar = "BOOL" if is_bool else "|".join(map(c._type_name, kinds)).upper()
            kw: dict[str, Any] = dict(
                dest=name, action=_Collect, help=_help(cls, f, required), default=argparse.SUPPRESS
            )
            if f.metadata.get("positional"):  # a list: any number (at least one if required)
                if typing.get_origin(kinds[0]) is list:
                    kw["nargs"] = "+" if required else "*"
                sections[owner].add_argument(metavar=name.upper(), **kw)
                continue
            names = [*_flag(name), *(s for a, t in aliases.items() if t == name for s in _flag(a))]
            if is_bool:
                kw.update(nargs="?", const="true")
            sections[owner].add_argument(*names, required=required, metavar=metavar, **kw)
        for section, keys in (getattr(cls, "flag_sections", dict)() or {}).items():
            for key in keys:  # a dict field's keys as flags (retrieval's ``trainer``)
                parser.add_argument(
                    *_flag(key),
                    dest=f"{section}.{key}",
                    action=_Collect,
                    default=argparse.SUPPRESS,
                    help=argparse.SUPPRESS,
                )
    formatter = parser._get_formatter()  # argparse's own "X [X ...]" for a positional list
    shown = [
        " ".join([*a.option_strings[:1], formatter._format_args(a, a.dest.upper())])
        for a in parser._actions
        if (a.required or not a.option_strings) and a.dest not in ("help", "config")
    ]
    config = "" if own_config else (" --config FILE" if needed else " [--config FILE]")
    parser.usage = " ".join([f"%(prog)s [-h]{config} [--OPTION VALUE ...]", *shown])
    groups_in_order = sorted(parser._action_groups[2:], key=lambda g: getattr(g, "order", (0, 0)))
    parser._action_groups[2:] = groups_in_order
    return parser


_BOOLEAN_WORDS = {"true", "false", "yes", "no", "on", "off", "1", "0", "t", "f", "y", "n", "null"}
"""The words a boolean flag reads as its value (pydantic's; ``null``), as in ``--dry-run no``."""


def _join_values(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """``--flag VALUE`` → ``--flag=VALUE`` for a flag that takes a value (argparse would read a
    VALUE ``-2.5e-3`` or ``-x`` as an option); a ``--flag`` without one is an error. A boolean
    flag takes the next word only if it is a boolean, so a positional may follow it."""
    takes_value = {s for a in parser._actions if a.nargs is None for s in a.option_strings}
    switches = {s for a in parser._actions if a.nargs == "?" for s in a.option_strings}
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok in switches:  # a boolean flag takes a following word only if it is a boolean
            word = argv[i + 1] if i + 1 < len(argv) else ""
            out.append(f"{tok}={word if word.lower() in _BOOLEAN_WORDS else 'true'}")
            i += 2 if word.lower() in _BOOLEAN_WORDS else 1  # else: a positional follows
        elif tok in takes_value:  # the flag as given, in its dashed spelling
            if i + 1 == len(argv) or argv[i + 1].startswith("--"):
                flag = "--" + tok[2:].replace("_", "-")
                raise ConfigError(f"{_SOURCE}: {flag} needs a value", hint=f"give {flag} VALUE")
            out.append(f"{tok}={argv[i + 1]}")
            i += 2
        else:
            out.append(tok)
            i += 1
    return out


def _unknown(groups: Sequence[type], extras: list[str], parser: argparse.ArgumentParser) -> None:
    tok = extras[0]
    if not tok.startswith("--"):
        raise ConfigError(f"unexpected argument '{tok}'", hint="flags look like --name value")
    name, _, inline = tok[2:].partition("=")
    name = name.replace("-", "_")
    moved = getattr(groups[0], "moved_key", None) if len(groups) == 1 else None
    if moved is not None:
        following = extras[1] if len(extras) > 1 and not extras[1].startswith("--") else "true"
        error = moved(name, _readings([inline or following])[0])
        if error is not None:
            raise error
    valid = sorted({s[2:].replace("-", "_") for a in parser._actions for s in a.option_strings})
    hint = c.suggest(name, [v for v in valid if v not in ("", "h", "help")])
    if hint.startswith("did you mean"):
        hint = "did you mean '--" + hint.split("'")[1].replace("_", "-") + "'?"
    raise ConfigError(f"unknown option '--{name.replace('_', '-')}'", hint=hint)


def parse(
    groups: Any,
    argv: Sequence[str],
    *,
    prog: str | None = None,
    description: str | None = None,
    known_only: bool = False,
) -> Any:
    """Instances of ``groups`` (one class: one instance; a tuple: a tuple) from ``--config
    FILE`` and flags (flags win). ``known_only`` ignores settings that are no field of the
    groups: the light-groups-first check before the engine's heavy class is imported."""
    single = isinstance(groups, type)
    groups = (groups,) if single else tuple(groups)
    prog = prog or groups[0].__name__
    owner = {n: g for g in groups for n in c.config_fields(g)}
    pre = ArgumentParser(prog=prog, add_help=False, allow_abbrev=False)
    pre.add_argument("--config")
    # a group that declares a ``config`` field reads that file itself (VERL's YAML)
    path = None if "config" in owner else pre.parse_known_args(list(argv))[0].config
    if len(owner) < sum(len(c.config_fields(g)) for g in groups):
        raise TypeError(f"a field is declared in two of the groups {[g.__name__ for g in groups]}")
    values: dict[type, dict[str, Any]] = {g: {} for g in groups}
    if path is not None:
        for k, v in c.load_yaml(path).items():
            g = owner.get(k) or next((g for g in groups if k in c.aliases_of(g)), None)
            if g is not None:
                values[g][k] = v
            elif not known_only:
                if single:
                    raise c.unknown_key(groups[0], k, v, source=path)
                raise ConfigError(f"{path}: unknown key '{k}'", hint=c.suggest(k, list(owner)))
        for g in groups:
            values[g] = c.typed_values(g, c.resolve(g, values[g], source=path), source=path)
    given = [k for g in groups for k in values[g]]
    parser = build_parser(groups, prog=prog, description=description, given=given)
    ns, extras = parser.parse_known_args(_join_values(parser, argv))
    if extras and not known_only:
        _unknown(groups, extras, parser)
    for dest, got in vars(ns).items():
        if (dest == "config" and dest not in owner) or not got:
            continue
        spellings = sorted({o.lstrip("-").replace("-", "_") for o, _ in got if o})
        if len(spellings) > 1:
            first, second = (f"'--{s.replace('_', '-')}'" for s in spellings[:2])
            raise ConfigError(f"{_SOURCE}: {first} and {second} are the same setting; give one")
        section, _, key = dest.partition(".")
        if key:  # a flag of a dict field's section
            g = owner[section]
            values[g][section] = {**values[g].get(section, {}), key: _readings([got[-1][1]])[0]}
        else:
            values[owner[dest]][dest] = flag_value(owner[dest], dest, [raw for _, raw in got])
    built = tuple(c._build(g, values[g], source=_SOURCE) for g in groups)
    for cfg, g in zip(built, groups):
        if hasattr(cfg, "__dict__"):
            cfg.__dict__["_given"] = frozenset(values[g])  # read by given()
    return built[0] if single else built


def given(cfg: Any) -> frozenset[str]:
    """The fields of ``cfg`` (built by :func:`parse`) that its flags or ``--config`` file set;
    the others hold their defaults. A config built otherwise: none."""
    return getattr(cfg, "_given", frozenset())


def parse_cli(cls: type[C], argv: Sequence[str], **kw: Any) -> C:
    """One config class from ``argv``: :func:`parse` of one group."""
    return parse(cls, argv, **kw)
