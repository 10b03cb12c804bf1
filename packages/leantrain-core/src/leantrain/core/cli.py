"""The ``leantrain`` console script: the commands of the installed packages (each entry point of
the group ``leantrain.commands`` names a callable returning a list of :class:`Command`), run by
:func:`run_guarded` (a ``LeanTrainError`` is one line on stderr and a non-zero exit)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points

from leantrain.core.command import Command, dispatch, unknown_command, usage
from leantrain.core.errors import ConfigError, LeanTrainError
from leantrain.core.terminate import Terminated, sigterm_raises, terminated

COMMAND_GROUP = "leantrain.commands"


def discover_commands() -> dict[str, Command]:
    """Every subcommand published by the installed packages, by name."""
    commands: dict[str, Command] = {}
    for ep in entry_points(group=COMMAND_GROUP):
        try:
            provided = {cmd.name: cmd for cmd in ep.load()()}
        except LeanTrainError:
            raise
        except Exception as e:  # a broken plug-in must not take the whole CLI down
            print(
                f"warning: cannot load leantrain commands '{ep.name}' ({ep.value}): {e}",
                file=sys.stderr,
            )
            continue
        commands.update(provided)
    return dict(sorted(commands.items()))


#: Exit code when the reader of stdout went away: 128 + SIGPIPE, as a shell reports `yes | head -1`.
EXIT_BROKEN_PIPE = 128 + 13


def _stdout_closed() -> bool:
    """Flush stdout; on a closed pipe, silence it and say so."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        return True
    except (OSError, ValueError, AttributeError):
        pass
    return False


def _quiet_stdout() -> None:
    """After a closed pipe: point stdout at /dev/null so the interpreter's final flush is quiet."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def run_guarded(func: Callable[[], int | None]) -> int:
    """Run ``func``; a LeanTrainError becomes one line on stderr and its exit code.

    SIGTERM becomes one line ("terminated; rerun the same command to resume") and exit 143;
    a reader closing stdout (``| head -1``) ends the command quietly with exit 141.
    """
    with sigterm_raises() as guard:
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
        except Terminated:
            return terminated(guard)
        except SystemExit:
            # Lightning's own SIGTERM handling raises SIGTERMException (a SystemExit)
            if guard is not None and guard.received_at is not None:
                return terminated(guard)
            if _stdout_closed():  # e.g. argparse's --help, then `| head -1`
                return EXIT_BROKEN_PIPE
            raise
        except BrokenPipeError:
            _quiet_stdout()
            return EXIT_BROKEN_PIPE
        if _stdout_closed():  # a pipe closed after the last write fails here, not at exit
            return EXIT_BROKEN_PIPE
    return int(code or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``leantrain`` console script."""
    return run_guarded(lambda: _main(argv))


#: which distribution brings each command, for a clear message when it is not installed
COMMAND_PACKAGES = {
    command: package
    for package, commands in {
        "leantrain-export": "export",
        "leantrain-llm": "sft grpo llm",
        "leantrain-retrieval": "retrieval",
        "leantrain-progress": "progress",
        "leantrain-prover": "prove prove-merge",
        "leantrain": "pipeline demo compare report",
        "leantrain-verl": "verl",
    }.items()
    for command in commands.split()
}
_VERL_HINT = (
    "; in the leantrain repository it has its own environment: "
    "`uv run --package leantrain-verl leantrain verl …`"
)


def _main(argv: Sequence[str] | None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    commands = discover_commands()
    if not args or args[0] in ("-h", "--help", "help"):
        about = "Train the models of a Lean 4 prover, lifelong."
        text = usage("leantrain", list(commands.values()), about)
        none = "commands:\n  (none: install a leantrain package such as leantrain-export)"
        print(text if commands else text.replace("commands:", none))
        return 0
    if args[0] in ("-V", "--version"):
        from leantrain.core.manifest import package_versions

        for name, ver in package_versions().items():
            if name.startswith("leantrain"):
                print(f"{name} {ver}")
        return 0
    name, rest = args[0], args[1:]
    if name not in commands and name in COMMAND_PACKAGES:
        package = COMMAND_PACKAGES[name]
        raise ConfigError(
            f"the '{name}' command comes with {package}, which is not installed in this "
            "environment",
            hint=f"install it (`uv add {package}` / `pip install {package}`)"
            + (_VERL_HINT if package == "leantrain-verl" else ""),
        )
    if name not in commands:
        raise unknown_command("leantrain", name, list(commands))
    return dispatch(commands[name], rest)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
