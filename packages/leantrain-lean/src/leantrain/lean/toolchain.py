"""Which Lean versions each backend supports, and the check of a project's ``lean-toolchain``.

| backend | Lean versions | source |
|---|---|---|
| ``repl`` | v4.3.0 and later: the REPL has a tag per Lean release (``v4.3.0`` … ``v4.33.0-rc2`` at commit ``8948401``); build the tag matching the project | leanprover-community/repl tags |
| ``kimina`` | the one version the server was built with (``LEAN_SERVER_LEAN_VERSION``, default v4.26.0 in v2.0.0); its ``setup.sh`` builds the REPL and Mathlib at that tag (patching the REPL for v4.9.0 and older), so the REPL's range | kimina-lean-server README, ``setup.sh`` |
| ``pantograph`` | exactly the version in the ``lean-toolchain`` of the Pantograph commit the PyPantograph release pins (its ``src`` submodule) | Pantograph README: "install lake and lean fixed to the version of the lean-toolchain file" |
| ``leandojo`` (lean-dojo 4.20) | v4.3.0-rc2 and later per its README (users report Dojo broken on v4.19 and later: not enforced) | LeanDojo README |
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from leantrain.core.errors import ConfigError

Version = tuple[int, int, int, int]  # major, minor, patch, rc (a release sorts after its rcs)


@dataclass(frozen=True)
class Support:
    """The Lean versions a backend supports: ``[minimum, maximum]`` (``None``: open)."""

    minimum: str | None
    maximum: str | None
    note: str


SUPPORT: dict[str, Support] = {
    "repl": Support("v4.3.0", None, "the REPL has a tag per Lean release from v4.3.0"),
    "kimina": Support(
        "v4.3.0",
        None,
        "the server builds the REPL at its LEAN_SERVER_LEAN_VERSION, which must match",
    ),
    "pantograph": Support(
        "v4.3.0", None, "exactly the Lean version of the installed Pantograph's lean-toolchain"
    ),
    "leandojo": Support("v4.3.0-rc2", None, "lean-dojo's README: v4.3.0-rc2 or later"),
}

_VERSION_RE = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:-rc(\d+))?")


def parse_version(text: str) -> Version:
    """``(major, minor, patch, rc)`` of ``v4.9.0`` / ``leanprover/lean4:v4.9.0-rc1``."""
    m = _VERSION_RE.search(text)
    if m is None:
        raise ValueError(f"no Lean version in {text!r}")
    rc = int(m.group(4)) if m.group(4) is not None else 10**6
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), rc


def check_toolchain(project_dir: str | Path, backend: str, *, expected: str | None = None) -> str:
    """The Lean version of ``project_dir``'s ``lean-toolchain``, after checking that
    ``backend`` supports it; ``expected`` (e.g. the version a Pantograph build pins, a
    Kimina server's ``LEAN_SERVER_LEAN_VERSION``) must then match exactly.

    One :class:`ConfigError` line on a missing file, an unreadable version (``nightly``…) or
    a version outside the range."""
    if backend not in SUPPORT:
        raise ConfigError(
            f"unknown Lean backend '{backend}'", hint=f"choose one of {', '.join(SUPPORT)}"
        )
    file = Path(project_dir) / "lean-toolchain"
    try:
        text = file.read_text(encoding="utf-8").strip()
    except OSError:
        raise ConfigError(
            f"{file}: missing", hint="--lean-project must be a Lean 4 project (lake init makes one)"
        ) from None
    try:
        version = parse_version(text)
    except ValueError:
        raise ConfigError(
            f"{file}: '{text}' names no Lean release the {backend} backend can check",
            hint="pin a release such as leanprover/lean4:v4.26.0",
        ) from None
    m = _VERSION_RE.search(text)
    assert m is not None
    shown = m.group(0) if m.group(0).startswith("v") else "v" + m.group(0)
    support = SUPPORT[backend]
    low = parse_version(support.minimum) if support.minimum else None
    high = parse_version(support.maximum) if support.maximum else None
    if (low and version < low) or (high and version[:3] > high[:3]):
        span = f"{support.minimum or '…'} to {support.maximum or 'the newest'}"
        raise ConfigError(
            f"{file}: Lean {shown} is outside what the {backend} backend supports ({span}; "
            f"{support.note})",
            hint="see the version table in leantrain-lean's README, or choose another --backend",
        )
    if expected is not None and parse_version(expected) != version:
        raise ConfigError(
            f"{file}: Lean {shown}, but the {backend} backend is built for {expected}",
            hint=f"use a project on {expected}, or rebuild the {backend} backend for {shown}",
        )
    return shown
