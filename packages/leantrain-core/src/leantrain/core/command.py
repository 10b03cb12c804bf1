"""The ``leantrain`` subcommand type that packages publish under the ``leantrain.commands``
entry point, and the argument parser of subcommands that take positional arguments (kept apart
from :mod:`leantrain.core.cli`, so that importing ``leantrain.core`` does not import the CLI
module that ``python -m leantrain.core.cli`` runs)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from leantrain.core.errors import ConfigError


@dataclass(frozen=True)
class Command:
    """A ``leantrain NAME …`` subcommand: ``run`` gets the remaining argv, returns an exit code."""

    name: str
    help: str
    run: Callable[[list[str]], int | None]
    package: str = ""


class ArgumentParser(argparse.ArgumentParser):
    """``argparse`` whose errors are one :class:`ConfigError` line (exit 2) naming the command
    and its ``--help``, not usage + message. For commands with positional arguments; a config
    dataclass is read by :func:`leantrain.core.config.parse_cli` instead."""

    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"{self.prog}: {message}", hint=f"run '{self.prog} --help'")
