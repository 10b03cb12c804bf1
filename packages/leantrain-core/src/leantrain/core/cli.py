"""The ``leantrain`` console script.

Subcommands come from the entry-point group ``leantrain.commands`` of whatever leantrain
packages are installed: each entry point names a callable returning a list of
:class:`Command`. ``leantrain --version`` lists the installed packages. A
:class:`~leantrain.core.errors.LeanTrainError` becomes one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points

from leantrain.core.errors import LeanTrainError

COMMAND_GROUP = "leantrain.commands"


@dataclass(frozen=True)
class Command:
    """A ``leantrain NAME …`` subcommand: ``run`` gets the remaining argv, returns an exit code."""

    name: str
    help: str
    run: Callable[[list[str]], int | None]
    package: str = ""


def discover_commands() -> dict[str, Command]:
    """Every subcommand published by the installed packages, by name."""
    commands: dict[str, Command] = {}
    for ep in entry_points(group=COMMAND_GROUP):
        try:
            provided = ep.load()()
        except LeanTrainError:
            raise
        except Exception as e:  # a broken plug-in must not take the whole CLI down
            print(
                f"warning: cannot load leantrain commands '{ep.name}' ({ep.value}): {e}",
                file=sys.stderr,
            )
            continue
        dist = ep.dist.metadata["Name"] if ep.dist is not None else ""
        for cmd in provided if isinstance(provided, (list, tuple)) else [provided]:
            commands[cmd.name] = Command(cmd.name, cmd.help, cmd.run, cmd.package or dist)
    return dict(sorted(commands.items()))


def installed_packages() -> dict[str, str]:
    """Installed leantrain distributions and their versions."""
    from importlib.metadata import distributions

    return dict(
        sorted(
            (d.metadata["Name"], d.version)
            for d in distributions()
            if (d.metadata["Name"] or "").startswith("leantrain")
        )
    )


def _usage(commands: dict[str, Command]) -> str:
    lines = [
        "usage: leantrain [--version] COMMAND [ARGS…]",
        "",
        "Train the models of a Lean 4 prover, lifelong.",
        "",
        "commands:",
    ]
    width = max((len(n) for n in commands), default=8)
    lines += [f"  {c.name:<{width}}  {c.help}" for c in commands.values()]
    if not commands:
        lines.append("  (none: install a leantrain package such as leantrain-export)")
    lines += ["", "Run 'leantrain COMMAND --help' for a command's options."]
    return "\n".join(lines)


def run_guarded(func: Callable[[], int | None]) -> int:
    """Run ``func``; a LeanTrainError becomes one line on stderr and its exit code."""
    try:
        code = func()
    except LeanTrainError as e:
        print(f"error: {e.one_line()}", file=sys.stderr)
        if os.environ.get("LEANTRAIN_TRACEBACK"):
            raise
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return int(code or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``leantrain`` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        commands = discover_commands()
    except LeanTrainError as e:
        print(f"error: {e.one_line()}", file=sys.stderr)
        return e.exit_code
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage(commands))
        return 0
    if args[0] in ("-V", "--version"):
        for name, ver in installed_packages().items():
            print(f"{name} {ver}")
        return 0
    name, rest = args[0], args[1:]
    if name not in commands:
        import difflib

        close = difflib.get_close_matches(name, list(commands), n=1)
        hint = (
            f" — did you mean '{close[0]}'?" if close else " — run 'leantrain --help' for the list"
        )
        print(f"error: unknown command '{name}'{hint}", file=sys.stderr)
        return 2
    return run_guarded(lambda: commands[name].run(rest))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
