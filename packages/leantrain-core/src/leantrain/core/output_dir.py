"""Output directories leantrain may write: its own, or new ones — never the user's other files.

Every command that writes a directory (a run, an export, an index) first calls
:func:`claim_output_dir`. It refuses ``""``, ``.``, ``/``, the home directory, the current
directory or any directory above it, a file, a system directory, and an existing directory that
holds files leantrain did not write. A directory leantrain wrote carries a marker file
(``.leantrain``, saying which kind of output it is), so replacing or resuming its own earlier
output stays possible and atomic.

Commands that write one file (``progress make-data --out rows.jsonl``) call
:func:`check_output_file`: a new path, or a file that the same command wrote before.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from leantrain.core.atomic import atomic_write_json
from leantrain.core.errors import ConfigError

MARKER_NAME = ".leantrain"
_SYSTEM_ROOTS = ("/proc", "/sys", "/dev", "/etc", "/bin", "/sbin", "/usr", "/boot")


def output_kind(path: str | Path) -> str | None:
    """The kind of leantrain output ``path`` holds (``"run"``, ``"export"`` …), or ``None``."""
    marker = Path(path) / MARKER_NAME
    if not marker.is_file():
        return None
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return str(data.get("kind")) if isinstance(data, dict) else None


def write_marker(directory: str | Path, kind: str) -> None:
    """Mark ``directory`` as leantrain's output of ``kind`` (e.g. inside an atomic build)."""
    atomic_write_json(Path(directory) / MARKER_NAME, {"kind": kind, "written_by": "leantrain"})


def check_output_dir(
    path: str | Path | None,
    *,
    kind: str,
    flag: str = "--output-dir",
) -> Path:
    """Raise :class:`ConfigError` unless leantrain may write its ``kind`` of output at ``path``.

    Allowed: a path that does not exist yet, an empty directory, or a directory marked as this
    ``kind`` of leantrain output (its ``.leantrain`` marker). Returns the path.
    """
    if path is None or not str(path).strip():
        raise ConfigError(f"{flag} is empty", hint=f"give a new directory, e.g. {flag} runs/new")
    raw = Path(path)
    resolved = raw.expanduser().resolve()
    cwd = Path.cwd().resolve()
    dangerous = {Path("/"), Path.home().resolve()}
    if resolved in dangerous or resolved == cwd or resolved in cwd.parents:
        raise ConfigError(
            f"{flag} {str(path)!r} is the current directory, one above it, / or the home directory",
            hint=f"leantrain replaces its output directories as a whole: give a new one, e.g. {flag} runs/new",
        )
    if any(resolved == Path(r) or Path(r) in resolved.parents for r in _SYSTEM_ROOTS):
        raise ConfigError(
            f"{flag} {str(path)!r} is a system directory", hint="give a directory of your own"
        )
    blocker = next((p for p in resolved.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise ConfigError(
            f"{flag} {str(path)!r} is under {str(blocker)!r}, which is a file",
            hint="give the path of a new directory",
        )
    if resolved.is_file() or (resolved.exists() and not resolved.is_dir()):
        raise ConfigError(
            f"{flag} {str(path)!r} is a file, not a directory",
            hint="give the path of a new directory",
        )
    if resolved.is_dir() and any(resolved.iterdir()):
        found = output_kind(resolved)
        if found != kind:
            what = "files leantrain did not write" if found is None else f"a leantrain {found}"
            raise ConfigError(
                f"{flag} {str(path)!r} already exists and holds {what}",
                hint="give a new directory (leantrain never writes over other files)",
            )
    return raw


def claim_output_dir(
    path: str | Path | None,
    *,
    kind: str,
    flag: str = "--output-dir",
    overwrite: bool = False,
) -> Path:
    """:func:`check_output_dir`, then create and mark the directory. With ``overwrite``, an
    earlier output of the same kind is emptied first (never anything else). Returns the path."""
    path = check_output_dir(path, kind=kind, flag=flag)
    if overwrite and path.is_dir():
        for child in path.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                os.unlink(child)
    path.mkdir(parents=True, exist_ok=True)
    if output_kind(path) != kind:
        write_marker(path, kind)
    return path


def check_output_file(
    path: str | Path | None,
    *,
    is_own: Callable[[Path], bool],
    flag: str = "--out",
    example: str = "out.jsonl",
    own: str = "a file this command wrote",
) -> Path:
    """Raise :class:`ConfigError` unless leantrain may write a file at ``path``: a new path
    (its missing parent directories are created when written), or an existing file for which
    ``is_own`` says the same command wrote it (replaced atomically). Refused: ``""``, a
    directory (``.``, ``..``, ``/`` …), anything under a system directory or under a file, and
    every other existing file. Returns the path."""
    hint = f"give a new file name, e.g. {flag} {example}"
    if path is None or not str(path).strip():
        raise ConfigError(f"{flag} is empty", hint=hint)
    raw = Path(path)
    resolved = raw.expanduser().resolve()
    if any(resolved == Path(r) or Path(r) in resolved.parents for r in _SYSTEM_ROOTS):
        raise ConfigError(f"{flag} {str(path)!r} is in a system directory", hint=hint)
    blocker = next((p for p in resolved.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise ConfigError(
            f"{flag} {str(path)!r} is under {str(blocker)!r}, which is a file", hint=hint
        )
    if resolved.is_dir():
        raise ConfigError(f"{flag} {str(path)!r} is a directory, not a file", hint=hint)
    if resolved.exists() and not resolved.is_file():
        raise ConfigError(f"{flag} {str(path)!r} is not a regular file", hint=hint)
    if resolved.is_file() and not is_own(resolved):
        raise ConfigError(
            f"{flag} {str(path)!r} already exists and is not {own}",
            hint=f"leantrain never replaces other files: {hint}, or remove the file first",
        )
    return raw
