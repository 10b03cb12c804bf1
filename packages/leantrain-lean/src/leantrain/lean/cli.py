"""``leantrain verify PROOFS --backend repl|kimina|pantograph``, declared for core's registry:
re-check a ``proofs.json`` (:func:`leantrain.lean.verify.verify_command`)."""

from __future__ import annotations

from dataclasses import dataclass

from leantrain.core.command import Command
from leantrain.core.config import setting
from leantrain.core.groups import Group


@dataclass
class VerifyArgs(Group):
    """What ``leantrain verify`` re-checks (the backend and how Lean is reached: ``LeanArgs``)."""

    proofs: str = setting(
        help="The proofs to re-check: a prover's proofs.json, or a JSONL of {name, "
        "formal_statement, header, proof}.",
        positional=True,
    )
    header: str = setting(
        "", "Header (imports, open …) for records that carry none, e.g. 'import Mathlib'."
    )


def register() -> list[Command]:
    """The ``verify`` command of the ``leantrain`` CLI."""
    return [
        Command(
            "verify",
            "re-check found proofs (proofs.json) in Lean: proved or rejected, with the reason",
            "leantrain.lean.verify:verify_command",
            groups=("leantrain.lean.cli:VerifyArgs", "leantrain.lean.args:LeanArgs"),
        )
    ]
