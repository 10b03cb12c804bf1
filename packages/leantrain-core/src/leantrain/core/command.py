"""The one command registry: a ``leantrain`` command (or subcommand) is one :class:`Command`,
published by a package's ``leantrain.commands`` entry point; :func:`dispatch` owns the rest
(subcommands, usage, did-you-mean, parsing, logging setup, JSON printing, exit codes).

Kept apart from :mod:`leantrain.core.cli`, so that importing ``leantrain.core`` does not import
the module that ``python -m leantrain.core.cli`` runs.
"""

from __future__ import annotations

import difflib
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from leantrain.core.errors import ConfigError
from leantrain.core.registry import import_object

Ref = Any
"""A class or function, or its ``"module:attr"`` name (imported when the command runs)."""


@dataclass(frozen=True)
class Command:
    """A ``leantrain NAME …`` command.

    ``groups``: the config classes its argv fills (``parse(groups, argv)``); ``run`` is then
    called with one instance per group, and a returned dict is printed as JSON on stdout.
    ``light`` groups are read (flags they do not know ignored) and given to ``check`` before the
    heavy ``groups`` are imported: bad settings or data fail in a second. ``subcommands``: a
    command of commands (``leantrain llm eval``). ``trainer`` names the trainer class of a
    training command and ``metrics`` the key metrics it reports; ``logger`` is shown on stderr
    while it runs. Groups, checks and run functions may be ``"module:attr"`` names, so that a
    package's ``cli.py`` imports nothing heavy."""

    name: str
    help: str
    run: Ref = None
    groups: tuple[Ref, ...] = ()
    light: tuple[Ref, ...] = ()
    check: Ref = None
    subcommands: tuple[Command, ...] = ()
    description: str = ""
    trainer: str = ""
    metrics: tuple[str, ...] = ()
    logger: str = "leantrain"


def load(ref: Ref) -> Any:
    """The object ``ref`` names (``"module:attr"``, :func:`~leantrain.core.registry.import_object`:
    a failed import is one :class:`ConfigError` line), or ``ref`` itself."""
    return import_object(ref) if isinstance(ref, str) else ref


def print_json(result: Any) -> None:
    """A command's result as indented JSON on stdout."""
    print(json.dumps(result, indent=2, ensure_ascii=False, default=str))


def usage(prog: str, commands: Sequence[Command], about: str = "") -> str:
    """The usage text of a command of ``commands``."""
    width = max((len(c.name) for c in commands), default=8)
    lines = [f"usage: {prog} COMMAND [ARGS…]", *([f"\n{about}"] if about else []), "", "commands:"]
    lines += [f"  {c.name:<{width}}  {c.help}" for c in commands]
    return "\n".join([*lines, "", f"Run '{prog} COMMAND --help' for a command's options."])


def unknown_command(prog: str, name: str, valid: Sequence[str]) -> ConfigError:
    """The one-line error of an unknown (sub)command, with the closest valid name."""
    close = difflib.get_close_matches(name, list(valid), n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"run '{prog} --help' for the list"
    return ConfigError(f"unknown command '{name}' of {prog}", hint=hint)


def dispatch(cmd: Command, argv: Sequence[str], prog: str | None = None) -> int:
    """Run ``cmd`` on ``argv`` (see :class:`Command`); returns the exit code."""
    prog = prog or f"leantrain {cmd.name}"
    argv = list(argv)
    if cmd.subcommands:
        subs = {s.name: s for s in cmd.subcommands}
        if not argv or argv[0] in ("-h", "--help", "help"):
            print(usage(prog, cmd.subcommands, cmd.description))
            return 0
        if argv[0] not in subs:
            raise unknown_command(prog, argv[0], list(subs))
        return dispatch(subs[argv[0]], argv[1:], f"{prog} {argv[0]}")
    if not cmd.groups:
        raise TypeError(f"'{prog}' declares neither groups nor subcommands")
    from leantrain.core.parser import parse

    if cmd.light and not {"-h", "--help"} & set(argv):
        light = parse(tuple(map(load, cmd.light)), argv, prog=prog, known_only=True)
        if cmd.check is not None:
            load(cmd.check)(*light)
    configs = parse(
        tuple(map(load, cmd.groups)), argv, prog=prog, description=cmd.description or cmd.help
    )
    logger = logging.getLogger(cmd.logger)
    if not logger.handlers:  # its lines as plain messages on stderr (stdout is the result)
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    result = load(cmd.run)(*configs)
    if isinstance(result, dict):
        print_json(result)
        return 0
    return int(result or 0)


__all__ = ["Command", "dispatch", "load", "print_json", "usage"]
