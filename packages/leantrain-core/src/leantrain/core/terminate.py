"""SIGTERM as an exception: :func:`sigterm_raises` turns the signal into :class:`Terminated` in
the main thread, deferred (up to ``LEANTRAIN_TERM_GRACE_S`` seconds) while a checkpoint or an
atomic write is in progress, so the rerun resumes from a whole checkpoint. Used by the
``leantrain`` console script (:func:`leantrain.core.cli.run_guarded`)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


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


def terminated(guard: _SigtermGuard | None) -> int:
    """Mark ``guard`` done and say so in one line; the exit code of a SIGTERM'ed command."""
    if guard is not None:
        guard.done = True
    print(TERMINATED_MESSAGE, file=sys.stderr)
    return Terminated.exit_code
