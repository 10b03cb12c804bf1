"""Every installed command's settings, read from the one registry (issue 32): each command
declares its groups, each setting is declared once, ``--help`` marks what is required, and an
option that works for one subcommand works for its siblings."""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import inspect
import itertools
import re
from collections.abc import Iterator

import pytest
from leantrain.core.cli import discover_commands
from leantrain.core.command import Command, load
from leantrain.core.config import config_fields
from leantrain.core.parser import build_parser

#: (command, subcommand, option) that a sibling has and this subcommand does not, and why.
#: Empty means every option of two or more siblings is every sibling's option.
NOT_SHARED: dict[tuple[str, str, str], str] = {
    ("progress", "evaluate", "allow_code"): "loads a trained model's weights only "
    "(trust_remote_code=False); it names no 'module:attr' code",
    ("progress", "predict", "allow_code"): "loads a trained model's weights only "
    "(trust_remote_code=False); it names no 'module:attr' code",
    ("progress", "predict", "data"): "reads a goal and tactics from flags, no data file",
    ("progress", "predict", "split"): "reads a goal and tactics from flags, no data file",
    ("retrieval", "evaluate", "split"): "scores every split of the export (random and "
    "novel_premises) side by side; --split_file picks the file",
    ("retrieval", "index", "split"): "encodes the export's corpus.jsonl, which every split shares",
    ("retrieval", "retrieve", "split"): "ranks the corpus premises accessible from --file for "
    "one --state; no split is read",
}


#: Field names two classes declare for different things, and why that is no copy.
SAME_NAME = {
    "progress": "the pipeline's 'progress:' section (the progress trainer's config, one per "
    "registered trainer) vs prove's --progress (a trained progress model's directory)",
    "url": "export trace's positional URL (the git repository to trace) vs leantrain-lean's "
    "--url (the Kimina Lean Server; export depends on leantrain-lean for its benchmark-row "
    "reader, and no command takes both)",
}


def _leaves(cmd: Command, prefix: str = "") -> Iterator[tuple[str, Command]]:
    path = f"{prefix} {cmd.name}".strip()
    if cmd.subcommands:
        for sub in cmd.subcommands:
            yield from _leaves(sub, path)
    else:
        yield path, cmd


COMMANDS = discover_commands()
LEAVES = dict(leaf for cmd in COMMANDS.values() for leaf in _leaves(cmd))


def _groups(cmd: Command) -> tuple[type, ...]:
    return tuple(load(g) for g in cmd.groups)


def _ours(klass: type) -> bool:
    return klass.__module__.startswith("leantrain.")


@pytest.mark.parametrize("path", sorted(LEAVES))
def test_every_command_declares_its_settings(path):
    """No command parses its own argv: each one's settings are groups the core parser reads."""
    assert LEAVES[path].groups, f"'leantrain {path}' has no groups (a hand-written parser)"


@pytest.mark.parametrize("path", sorted(p for p, c in LEAVES.items() if c.groups))
def test_help_marks_every_required_option(path):
    groups = _groups(LEAVES[path])
    parser = build_parser(groups, prog=f"leantrain {path}")
    required = [
        name
        for g in groups
        for name, f in config_fields(g).items()
        if f.default is f.default_factory is dataclasses.MISSING
    ]
    text = parser.format_help()
    assert text.count("(required)") >= len(required), (path, required)
    for action in parser._actions:
        if action.required:
            assert "(required)" in (action.help or ""), (path, action.dest)


def _package(klass: type) -> str:
    part = klass.__module__.split(".")[1]
    return "leantrain" if part == "pipeline" else f"leantrain-{part}"


@functools.cache
def _depends_on(dist: str) -> frozenset[str]:
    """The leantrain distributions ``dist`` requires, transitively (extras left out)."""
    found: set[str] = set()
    for req in importlib.metadata.requires(dist) or []:
        name = re.split(r"[ ;<>=!~\[]", req, maxsplit=1)[0]
        if name.startswith("leantrain") and "extra ==" not in req and name not in found:
            found |= {name, *_depends_on(name)}
    return frozenset(found)


def _declares(klass: type, name: str) -> bool:
    """Whether ``klass`` declares setting ``name`` (a class that only gives an inherited setting
    its own default — the same help and aliases — does not)."""
    if name not in inspect.get_annotations(klass):
        return False
    earlier = [k for k in klass.__mro__[1:] if name in inspect.get_annotations(k)]
    if not earlier or not dataclasses.is_dataclass(earlier[0]):
        return True
    mine = dict(klass.__dataclass_fields__[name].metadata)
    return mine != dict(earlier[0].__dataclass_fields__[name].metadata)


def test_each_setting_is_declared_once():
    """A setting is declared by one class: two declarations of a field name in one package,
    or in two packages of which one depends on the other (so could take the other's group), are
    copies that drift. Engine fields a leantrain class re-defaults are the engine's."""
    declared: dict[str, set[type]] = {}
    for cmd in LEAVES.values():
        for group in _groups(cmd):
            engine = {n for k in group.__mro__ if not _ours(k) for n in inspect.get_annotations(k)}
            for klass in filter(_ours, group.__mro__):
                for name in config_fields(group):
                    if name not in engine and _declares(klass, name):
                        declared.setdefault(name, set()).add(klass)
    copies = {}
    for name, classes in declared.items():
        if name in SAME_NAME:
            continue
        for a, b in itertools.combinations(sorted(classes, key=str), 2):
            pa, pb = _package(a), _package(b)
            if pa == pb or pa in _depends_on(pb) or pb in _depends_on(pa):
                copies.setdefault(name, []).append(
                    f"{a.__module__}.{a.__qualname__} = {b.__module__}.{b.__qualname__}"
                )
    assert not copies, copies


def _options(cmd: Command) -> set[str]:
    """Every flag of ``cmd``, aliases included, in the underscore spelling."""
    parser = build_parser(_groups(cmd))
    return {
        flag[2:].replace("-", "_")
        for a in parser._actions
        for flag in a.option_strings
        if flag.startswith("--") and a.dest not in ("help", "config")
    }


#: Options whose meaning does not depend on the subcommand: whichever of these one subcommand
#: that loads a model (has ``--model``) takes, its siblings that load a model take too.
CROSS_CUTTING = ("model", "data", "batch_size", "max_length", "allow_code", "device", "split")

SIBLINGS = [
    (name, sub.name, option)
    for name, cmd in COMMANDS.items()
    if len(cmd.subcommands) > 1 and all(s.groups for s in cmd.subcommands)
    for loaders in [[s for s in cmd.subcommands if "model" in _options(s)]]
    for sub in loaders
    for option in CROSS_CUTTING
    if any(option in _options(s) for s in loaders)
]


@pytest.mark.parametrize(("command", "sub", "option"), SIBLINGS)
def test_sibling_subcommands_share_options(command, sub, option):
    """A cross-cutting option one subcommand takes, its siblings take (``retrieval evaluate
    --batch_size 8`` as ``retrieval train --batch_size 8``), unless NOT_SHARED says why it
    means nothing there."""
    cmd = next(s for s in COMMANDS[command].subcommands if s.name == sub)
    if (command, sub, option) in NOT_SHARED:
        assert option not in _options(cmd), "listed as not shared, but it is: drop the entry"
        return
    assert option in _options(cmd), f"'leantrain {command} {sub}' lacks --{option}"
