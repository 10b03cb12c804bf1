"""One Lean REPL process (leanprover-community/repl), spoken to over stdin/stdout.

The REPL reads JSON commands separated by blank lines and answers each with one JSON object
followed by a blank line. :class:`ReplProcess` sends one command and waits for its answer
under a deadline; anything else — no answer in time, the process gone, an answer that is not
a JSON object, or one cut off — raises :class:`ReplFailure` after the process is killed
**with its process group** (``lake env repl`` runs the REPL as a child of ``lake``; killing
``lake`` alone would leave Lean running). The caller starts a new process for the next
command.

The process runs in its own session (``start_new_session``), so a signal meant for it never
reaches leantrain, and ``os.killpg`` reaches all its children. ``memory_limit_mb`` caps each
process's address space (``RLIMIT_AS``, set in the child before ``exec``; Linux/macOS).
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from leantrain.core.errors import ConfigError, MissingDependencyError

FailureKind = Literal["timeout", "died", "garbage"]

REPL_HINT = (
    "build the Lean REPL (https://github.com/leanprover-community/repl, the tag matching your "
    "lean-toolchain) and give --repl-command, e.g. 'lake env repl' in a project that requires "
    "it or '/path/to/repl/.lake/build/bin/repl'"
)


class ReplFailure(Exception):
    """The REPL gave no usable answer; the process has been killed."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        self.kind = kind
        self.message = message
        super().__init__(message)


def parse_command(command: str | Sequence[str]) -> list[str]:
    """The argument vector of a ``--repl-command`` (a shell-quoted string or a list)."""
    argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    if not argv:
        raise ConfigError("--repl-command is empty", hint="give the command that starts the REPL")
    return argv


def check_executable(argv: Sequence[str], cwd: str | Path | None = None) -> None:
    """:class:`MissingDependencyError` naming ``argv[0]`` unless it can be run."""
    exe = argv[0]
    if os.sep in exe:
        path = Path(exe) if Path(exe).is_absolute() or cwd is None else Path(cwd) / exe
        ok = path.is_file() and os.access(path, os.X_OK)
    else:
        ok = shutil.which(exe) is not None
    if not ok:
        raise MissingDependencyError(
            f"--repl-command: '{exe}' is not an executable (not found"
            f"{' on PATH' if os.sep not in exe else ''})",
            hint=REPL_HINT,
        )


def _limit_memory(limit_bytes: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))


class ReplProcess:
    """A running REPL: :meth:`request` one command at a time, :meth:`kill` to end it."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None = None,
        memory_limit_mb: int | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.argv = list(argv)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        preexec = None
        if memory_limit_mb is not None:
            limit = int(memory_limit_mb) * 1024 * 1024

            def preexec() -> None:
                _limit_memory(limit)

        try:
            self.proc = subprocess.Popen(
                self.argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=True,
                preexec_fn=preexec,
                bufsize=0,
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as e:
            self._stderr.close()
            raise MissingDependencyError(
                f"--repl-command: cannot run '{self.argv[0]}' ({e.strerror})", hint=REPL_HINT
            ) from None
        assert self.proc.stdout is not None
        self._fd = self.proc.stdout.fileno()
        os.set_blocking(self._fd, False)
        self._buffer = b""

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def _stderr_tail(self) -> str:
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - 400))
            tail = self._stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
        return " ".join(tail.split())[-300:]

    def _fail(self, kind: FailureKind, message: str) -> ReplFailure:
        if kind != "timeout":
            tail = self._stderr_tail()
            if tail:
                message = f"{message}; stderr: {tail}"
        self.kill()
        return ReplFailure(kind, message)

    def request(self, command: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send ``command``; its answer as a dict, or :class:`ReplFailure` (process killed)."""
        assert self.proc.stdin is not None
        data = (json.dumps(command, ensure_ascii=False) + "\n\n").encode("utf-8")
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError, OSError):
            raise self._fail("died", f"the REPL process exited (code {self.proc.poll()})") from None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self._fd, selectors.EVENT_READ)
            while True:
                text = self._complete()
                if text is not None:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self._fail("timeout", f"no answer within {timeout:g} s")
                if not sel.select(left):
                    continue
                try:
                    chunk = os.read(self._fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    code = self.proc.wait()
                    what = (
                        "in the middle of an answer" if self._buffer.strip() else "before answering"
                    )
                    raise self._fail("died", f"the REPL process exited (code {code}) {what}")
                self._buffer += chunk
        try:
            answer = json.loads(text)
        except ValueError:
            raise self._fail(
                "garbage", f"the REPL answered with non-JSON: {text[:120]!r}"
            ) from None
        if not isinstance(answer, dict):
            raise self._fail("garbage", f"the REPL answered with a non-object: {text[:120]!r}")
        return answer

    def _complete(self) -> str | None:
        """One answer from the buffer when a whole one (ended by a blank line) is there."""
        start = len(self._buffer) - len(self._buffer.lstrip())
        end = self._buffer.find(b"\n\n", start)
        if end < 0 or start == len(self._buffer):
            return None
        text = self._buffer[start:end].decode("utf-8", "replace")
        self._buffer = self._buffer[end + 2 :]
        return text

    def kill(self) -> None:
        """Kill the process and its group; a second call does nothing."""
        # the group too when the leader is gone: ``lake``'s REPL child may still run
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            if self.proc.poll() is None:
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._stderr.close()
