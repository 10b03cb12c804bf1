"""``leantrain verify PROOFS --backend repl|kimina|pantograph``: re-check a ``proofs.json``.

Prints one JSON object on stdout: ``proofs`` (per proof: ``name``, ``status``, ``reason``,
``axioms``) and ``summary`` (counts by status, ``proved_rate``); the headline on stderr.
Exit status: 0 when every proof is ``proved``; 1 when any proof is ``rejected`` (Lean or the
soundness rules refuse it); 3 when none is rejected but some could not be checked
(``timeout`` / ``error``: Lean did not answer); 2 for bad input, as every ``leantrain`` command.

Imported by every ``leantrain`` invocation, so nothing heavy loads at module level.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from leantrain.core.command import Command
from leantrain.core.config import setting
from leantrain.core.groups import Group
from leantrain.lean.args import CHECK_BACKENDS, LeanArgs


@dataclass
class VerifyArgs(Group):
    """What ``leantrain verify`` re-checks.

    The backend (``--backend repl|kimina|pantograph``, default repl) and how Lean is reached
    are :class:`LeanArgs`."""

    proofs: str = setting(
        help="The proofs to re-check: a prover's proofs.json, or a JSONL of {name, "
        "formal_statement, header, proof}.",
        positional=True,
    )
    header: str = setting(
        "", "Header (imports, open …) for records that carry none, e.g. 'import Mathlib'."
    )


EXIT_REJECTED = 1
EXIT_UNCHECKED = 3


def verify_command(args: VerifyArgs, lean: LeanArgs) -> int:
    """Run ``leantrain verify …`` (see the module docstring for the exit status)."""
    from leantrain.lean.args import build_backend, check_choice
    from leantrain.lean.theorems import ProjectSources
    from leantrain.lean.verify import load_proofs, proof_item, summarize, verify

    name = lean.backend_or("repl")
    check_choice(name, CHECK_BACKENDS)
    # an export's theorem (no header in its record) is read from --lean-project, as prove did
    sources = ProjectSources(lean.lean_project) if lean.lean_project else None
    records = load_proofs(args.proofs)
    for i, r in enumerate(records):  # every record read before Lean is asked anything
        proof_item(r, header=args.header, path=args.proofs, index=i, sources=sources)
    backend = build_backend(name, lean, choices=CHECK_BACKENDS)
    try:
        rows = verify(
            records,
            backend,
            header=args.header,
            allowed_axioms=lean.allowed_axioms,
            sources=sources,
        )
    finally:
        backend.close()
    summary = summarize(rows)
    print(json.dumps({"proofs": rows, "summary": summary}, ensure_ascii=False, indent=2))
    print(
        f"verified with {name}: {summary['proved']}/{summary['total']} proved, "
        f"{summary['rejected']} rejected, {summary['timeout'] + summary['error']} not checked",
        file=sys.stderr,
    )
    if summary["rejected"]:
        return EXIT_REJECTED
    if summary["timeout"] or summary["error"]:
        return EXIT_UNCHECKED
    return 0


def run(argv: list[str]) -> int:
    """``leantrain verify`` on ``argv`` (the registered command, for tests and scripts)."""
    from leantrain.core.command import dispatch

    return dispatch(register()[0], argv)


def register() -> list[Command]:
    """The ``verify`` command of the ``leantrain`` CLI."""
    return [
        Command(
            "verify",
            "re-check found proofs (proofs.json) in Lean",
            run=verify_command,
            groups=("leantrain.lean.cli:VerifyArgs", "leantrain.lean.args:LeanArgs"),
            description="Re-check found proofs (a proofs.json) in Lean: proved or rejected, "
            "with the reason.",
        )
    ]
