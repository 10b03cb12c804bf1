"""``LeanArgs``: the settings of a Lean backend, one group that every command asking Lean
composes (``leantrain prove``, the GRPO ``lean`` reward, ``leantrain verify``), and
:func:`build_backend`, which makes the backend a name chooses from them. ``backend`` is declared
once; which names a command accepts (``choices``), and its default when none is given
(:meth:`LeanArgs.backend_or`), are the command's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from leantrain.core.config import AtLeast1, Positive, setting
from leantrain.core.errors import ConfigError
from leantrain.core.groups import Group
from leantrain.lean.contract import Backend
from leantrain.lean.repl import DEFAULT_REPL_COMMAND
from leantrain.lean.soundness import DEFAULT_ALLOWED_AXIOMS

BackendName = Literal["repl", "kimina", "pantograph", "leandojo", "replay"]

LEAN_BACKENDS = ("repl", "kimina", "pantograph", "leandojo")
"""The backends over Lean itself (the prover adds ``replay``)."""

CHECK_BACKENDS = ("repl", "kimina", "pantograph")
"""The backends that check a whole proof with an axiom report (``leantrain verify``)."""

SEARCH_BACKENDS = ("repl", "pantograph", "leandojo")
"""The backends that run tactics one at a time (proof search, tactic-level rewards)."""


@dataclass
class LeanArgs(Group):
    """How Lean is reached: backend, REPL command and project, Kimina URL, timeouts, axioms."""

    backend: BackendName | None = setting(
        None,
        "Lean backend: repl (the Lean REPL: --repl-command, --lean-project), kimina (a Kimina "
        "Lean Server at --url; whole proofs only), pantograph (PyPantograph), leandojo (a "
        "LeanDojo-traced repository), replay (prove only: the export's traced proofs, no "
        "Lean). Default: replay for prove, repl for the lean reward and verify.",
        aliases=("lean_backend",),
    )

    repl_command: str = setting(
        DEFAULT_REPL_COMMAND,
        "repl backend: the command that starts the Lean REPL, run in --lean-project (e.g. "
        "'lake env repl', or the path of a built repl binary).",
    )
    lean_project: str | None = setting(
        None,
        "The Lean project (its lean-toolchain, lakefile, built dependencies) the REPL or "
        "Pantograph runs in; an export's statements are read from its files.",
    )
    url: str = setting("http://localhost:8000", "kimina backend: the Kimina Lean Server's URL.")
    tactic_timeout: Positive = setting(60.0, "Seconds Lean may spend on one tactic.")
    start_timeout: Positive = setting(
        600.0,
        "Seconds to set a theorem up (imports, the file up to the theorem) and to check a whole "
        "proof.",
    )
    memory_limit_mb: AtLeast1 | None = setting(
        None, "repl backend: memory cap of each Lean process, in MiB (none: no cap)."
    )
    allowed_axioms: list[str] = setting(
        list(DEFAULT_ALLOWED_AXIOMS),
        "Axioms a proof may depend on (repeatable; add Lean.ofReduceBool to accept native_decide).",
    )

    def backend_or(self, default: BackendName) -> BackendName:
        """The chosen backend, or the command's ``default`` when none was chosen."""
        return self.backend or default

    def check_group(self) -> None:
        """An empty REPL command, or a Lean project that is no directory, is one line naming
        the flag (when the settings are read, before any model loads)."""
        if not str(self.repl_command).strip():
            raise ConfigError("--repl-command is empty", hint="e.g. --repl-command 'lake env repl'")
        if self.lean_project is not None and not Path(self.lean_project).is_dir():
            raise ConfigError(
                f"--lean-project: {self.lean_project} is not a directory",
                hint="give the Lean project (the repository, built) Lean runs in",
            )


def lean_args(obj: Any) -> LeanArgs:
    """The :class:`LeanArgs` fields of a config composing them, as a :class:`LeanArgs`."""
    return LeanArgs(**{f.name: getattr(obj, f.name) for f in fields(LeanArgs)})


def check_choice(name: str, choices: Sequence[str], flag: str = "--backend") -> None:
    """One line when a command does not take the backend ``name`` (``choices`` it takes)."""
    if name not in choices:
        raise ConfigError(
            f"{flag}: unknown or unsupported backend '{name}' here",
            hint=f"choose one of: {', '.join(choices)}",
        )


def build_backend(
    name: str,
    args: LeanArgs,
    *,
    choices: Sequence[str] = LEAN_BACKENDS,
    flag: str = "--backend",
    lean_dojo: Any = None,
    pantograph: Any = None,
) -> Backend:
    """The backend ``name`` over ``args`` (its executable, package or URL, and the Lean
    version of ``lean_project``'s ``lean-toolchain`` checked here, so this is the early check:
    one line before any model loads). ``choices`` are the names the
    caller accepts, ``flag`` the option that chose it (named in the error)."""
    check_choice(name, choices, flag)
    if args.lean_project and (Path(args.lean_project) / "lean-toolchain").is_file():
        from leantrain.lean.toolchain import check_toolchain

        check_toolchain(args.lean_project, name)
    if name == "repl":
        from leantrain.lean.repl import ReplBackend

        return ReplBackend(
            args.repl_command,
            args.lean_project,
            tactic_timeout=args.tactic_timeout,
            start_timeout=args.start_timeout,
            memory_limit_mb=args.memory_limit_mb,
        )
    if name == "kimina":
        from leantrain.lean.kimina import KiminaBackend

        return KiminaBackend(args.url, timeout=args.start_timeout)
    if name == "pantograph":
        from leantrain.lean.pantograph import PantographBackend

        return PantographBackend(
            args.lean_project,
            tactic_timeout=args.tactic_timeout,
            start_timeout=args.start_timeout,
            pantograph=pantograph,
        )
    from leantrain.lean.leandojo import LeanDojoBackend

    return LeanDojoBackend(args.tactic_timeout, args.start_timeout, lean_dojo=lean_dojo)
