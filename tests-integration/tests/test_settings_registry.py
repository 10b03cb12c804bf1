"""Every installed command's settings, read from the one registry (issue 32): each command
declares its groups, each setting is declared once, ``--help`` marks what is required, and an
option that works for one subcommand works for its siblings."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterator

import pytest
from leantrain.core.cli import discover_commands
from leantrain.core.command import Command, load
from leantrain.core.config import config_fields
from leantrain.core.parser import build_parser

#: (command, subcommand, option) that a sibling has and this subcommand does not, and why.
#: Empty means every option of two or more siblings is every sibling's option.
NOT_SHARED: dict[tuple[str, str, str], str] = {}


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


def test_each_setting_is_declared_once():
    """A field name that leantrain declares is declared by one class only, whatever the command
    (engine fields that a leantrain class re-defaults are the engine's, not counted)."""
    declared: dict[str, set[str]] = {}
    for cmd in LEAVES.values():
        for group in _groups(cmd):
            engine = {n for k in group.__mro__ if not _ours(k) for n in inspect.get_annotations(k)}
            first: dict[str, type] = {}  # a class re-declaring its own base's field (to drop
            for klass in group.__mro__:  # its default: prove's required --generator) is one
                if _ours(klass):  # setting, counted at the base that declares it
                    first.update(dict.fromkeys(inspect.get_annotations(klass), klass))
            for name, klass in first.items():
                if name in config_fields(group) and name not in engine:
                    declared.setdefault(name, set()).add(f"{klass.__module__}.{klass.__qualname__}")
    twice = {n: sorted(where) for n, where in declared.items() if len(where) > 1}
    assert not twice, twice


def _options(cmd: Command) -> set[str]:
    parser = build_parser(_groups(cmd))
    return {
        a.dest for a in parser._actions if a.option_strings and a.dest not in ("help", "config")
    }


SIBLINGS = [
    (name, sub.name, option)
    for name, cmd in COMMANDS.items()
    if len(cmd.subcommands) > 1 and all(s.groups for s in cmd.subcommands)
    for shared in [
        {
            o
            for o in set().union(*(_options(s) for s in cmd.subcommands))
            if sum(o in _options(s) for s in cmd.subcommands) >= 2
        }
    ]
    for sub in cmd.subcommands
    for option in sorted(shared)
]


@pytest.mark.parametrize(("command", "sub", "option"), SIBLINGS)
def test_sibling_subcommands_share_options(command, sub, option):
    """An option two subcommands of a command take, every subcommand takes (``retrieval
    evaluate --batch_size 8`` as ``retrieval train --batch_size 8``), unless NOT_SHARED says why
    it means nothing there."""
    cmd = next(s for s in COMMANDS[command].subcommands if s.name == sub)
    if (command, sub, option) in NOT_SHARED:
        assert option not in _options(cmd), "listed as not shared, but it is: drop the entry"
        return
    assert option in _options(cmd), f"'leantrain {command} {sub}' lacks --{option}"
