"""The ``leantrain`` subcommand type that packages publish under the ``leantrain.commands``
entry point (kept apart from :mod:`leantrain.core.cli`, so that importing ``leantrain.core``
does not import the CLI module that ``python -m leantrain.core.cli`` runs)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """A ``leantrain NAME …`` subcommand: ``run`` gets the remaining argv, returns an exit code."""

    name: str
    help: str
    run: Callable[[list[str]], int | None]
    package: str = ""
