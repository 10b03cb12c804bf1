"""The ``leantrain`` console script.

Subcommands come from the entry-point group ``leantrain.commands`` of whatever leantrain
packages are installed: each entry point names a callable returning a list of
:class:`Command`. ``leantrain --version`` lists the installed packages. A
:class:`~leantrain.core.errors.LeanTrainError` becomes one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from importlib.metadata import entry_points
from types import FrameType

from leantrain.core.command import Command, dispatch, usage
from leantrain.core.errors import LeanTrainError

COMMAND_GROUP = "leantrain.commands"


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
            commands[cmd.name] = replace(cmd, package=cmd.package or dist)
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
    text = usage(
        "leantrain", list(commands.values()), "Train the models of a Lean 4 prover, lifelong."
    )
    if commands:
        return text
    return text.replace(
        "commands:", "commands:\n  (none: install a leantrain package such as leantrain-export)"
    )


class Terminated(BaseException):
    """Raised in the main thread when the process receives SIGTERM under :func:`run_guarded`.

    A ``BaseException`` (like ``KeyboardInterrupt``) so that ``except Exception`` blocks in
    training code do not swallow it, but not a ``KeyboardInterrupt``: Lightning turns that into
    ``sys.exit(1)``. Lightning's own SIGTERM handler runs first and then calls this one.
    """

    exit_code = 128 + signal.SIGTERM  # 143, what a shell reports for a SIGTERM'ed process


TERMINATED_MESSAGE = "terminated; rerun the same command to resume"

#: Functions during which SIGTERM waits (up to :data:`TERM_GRACE_S`): a checkpoint written
#: by them is whole, so the next run resumes from it rather than from a half-written one.
_SAVING = frozenset(
    {
        "_save_checkpoint",  # transformers Trainer (checkpoint-N: model, optimizer, state)
        "_save_optimizer_and_scheduler",
        "_save_rng_state",
        "save_checkpoint",  # Lightning Trainer / strategy / checkpoint IO
        "save_pretrained",
        "save_model",
        "save_file",  # safetensors
        "save",  # torch.save
    }
)
_SAVING_MODULES = ("leantrain.core.atomic", "leantrain.core.manifest")
#: Longest a save may delay the exit after SIGTERM, in seconds (``LEANTRAIN_TERM_GRACE_S``).
TERM_GRACE_S = 20.0
_POLL_S = 0.1


def _saving(frame: FrameType | None) -> bool:
    """Whether the interrupted main thread is inside a checkpoint or atomic write."""
    depth = 0
    while frame is not None and depth < 500:
        module = str(frame.f_globals.get("__name__", ""))
        if frame.f_code.co_name in _SAVING or module.startswith(_SAVING_MODULES):
            return True
        frame = frame.f_back
        depth += 1
    return False


class _SigtermGuard:
    """SIGTERM → :class:`Terminated` in the main thread, deferred while a save is running."""

    def __init__(self) -> None:
        self.received_at: float | None = None
        self.done = False  # Terminated was caught: later signals change nothing
        try:
            self.grace = float(os.environ.get("LEANTRAIN_TERM_GRACE_S", TERM_GRACE_S))
        except ValueError:
            self.grace = TERM_GRACE_S

    def _raise_unless_saving(self, frame: FrameType | None) -> None:
        if self.done or self.received_at is None:
            return
        waited = time.monotonic() - self.received_at
        if waited < self.grace and _saving(frame):
            signal.setitimer(signal.ITIMER_REAL, _POLL_S)  # look again in a moment
            return
        signal.setitimer(signal.ITIMER_REAL, 0)
        raise Terminated()

    def on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        if self.received_at is None:
            self.received_at = time.monotonic()
        self._raise_unless_saving(frame)

    def on_alarm(self, signum: int, frame: FrameType | None) -> None:
        self._raise_unless_saving(frame)


@contextmanager
def sigterm_raises() -> Iterator[_SigtermGuard | None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread (after a save in
    progress finishes); the previous handlers come back afterwards. A no-op off the main thread
    or where SIGTERM is ignored (``nohup``-style launchers that mean it)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or not hasattr(signal, "SIGALRM")
        or signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    ):
        yield None
        return
    guard = _SigtermGuard()
    old_term = signal.signal(signal.SIGTERM, guard.on_sigterm)
    old_alarm = signal.signal(signal.SIGALRM, guard.on_alarm)
    try:
        yield guard
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_alarm)
        signal.signal(signal.SIGTERM, old_term)


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
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _terminated(guard: _SigtermGuard | None) -> int:
    if guard is not None:
        guard.done = True
    print(TERMINATED_MESSAGE, file=sys.stderr)
    return Terminated.exit_code


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
            return _terminated(guard)
        except SystemExit:
            # Lightning's own SIGTERM handling raises SIGTERMException (a SystemExit)
            if guard is not None and guard.received_at is not None:
                return _terminated(guard)
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
    try:
        code = _main(argv)
    except BrokenPipeError:  # `leantrain --help | head -1`
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    return EXIT_BROKEN_PIPE if _stdout_closed() else code


#: which distribution brings each command, for a clear message when it is not installed
COMMAND_PACKAGES = {
    "export": "leantrain-export",
    "sft": "leantrain-llm",
    "grpo": "leantrain-llm",
    "llm": "leantrain-llm",
    "retrieval": "leantrain-retrieval",
    "progress": "leantrain-progress",
    "prove": "leantrain-prover",
    "pipeline": "leantrain",
    "demo": "leantrain",
    "compare": "leantrain",
    "report": "leantrain",
    "verl": "leantrain-verl",
}
_VERL_HINT = (
    "; in the leantrain repository it has its own environment: "
    "`uv run --package leantrain-verl leantrain verl …`"
)


def _main(argv: Sequence[str] | None) -> int:
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
    if name not in commands and name in COMMAND_PACKAGES:
        package = COMMAND_PACKAGES[name]
        print(
            f"error: the '{name}' command comes with {package}, which is not installed in this "
            f"environment — install it (`uv add {package}` / `pip install {package}`)"
            + (_VERL_HINT if package == "leantrain-verl" else ""),
            file=sys.stderr,
        )
        return 2
    if name not in commands:
        import difflib

        close = difflib.get_close_matches(name, list(commands), n=1)
        hint = (
            f" — did you mean '{close[0]}'?" if close else " — run 'leantrain --help' for the list"
        )
        print(f"error: unknown command '{name}'{hint}", file=sys.stderr)
        return 2
    return run_guarded(lambda: dispatch(commands[name], rest))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
