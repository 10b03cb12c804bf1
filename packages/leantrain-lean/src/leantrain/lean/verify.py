"""Re-check a list of found proofs — the prover's ``proofs.json`` — through a backend.

A proof record is what ``leantrain prove`` writes in ``proofs.json`` (LeanDojo's theorem
record: ``full_name``, ``theorem_statement``, ``traced_tactics`` with ``tactic``), or a
benchmark-style record (``name``, ``formal_statement``, ``header``, ``proof`` text). The
statement is ``formal_statement`` or ``theorem_statement``; the proof is ``proof`` or the
``traced_tactics``' tactics, one per line; the header is the record's ``header`` or the one
given (the imports and ``open``\\ s the statement needs).

Each proof is judged by :func:`leantrain.lean.soundness.check_proof`: ``proved``,
``rejected`` (with the reason), or ``timeout``/``error`` when Lean could not answer.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from leantrain.core.errors import DataError
from leantrain.lean.contract import Backend, LeanTheorem
from leantrain.lean.soundness import DEFAULT_ALLOWED_AXIOMS, Verdict, judge, screen_proof
from leantrain.lean.theorems import split_statement

if TYPE_CHECKING:
    from leantrain.lean.args import LeanArgs
    from leantrain.lean.cli import VerifyArgs

EXIT_REJECTED = 1
EXIT_UNCHECKED = 3


def proof_item(
    record: Mapping[str, Any],
    *,
    header: str = "",
    path: str | Path | None = None,
    index: int = 0,
    sources: Any = None,
) -> tuple[LeanTheorem, str]:
    """``(theorem, proof text)`` of one proof record (:class:`DataError` naming the field).

    With ``sources`` (a :class:`~leantrain.lean.theorems.ProjectSources` of the Lean project),
    a record of an export's theorem without a ``header`` (``file_path``, ``start``,
    ``full_name``) is read from the project's file, as the prover read it."""

    def bad(field: str, message: str) -> DataError:
        return DataError(path, message, index=index, field=field)

    if not isinstance(record, Mapping):
        raise DataError(path, "not a JSON object", index=index)
    if sources is not None and "header" not in record and "start" in record:
        try:
            from types import SimpleNamespace

            theorem = sources.theorem(SimpleNamespace(**record))
        except (TypeError, ValueError) as e:
            raise bad("file_path", str(e)) from None
        return theorem, _proof_text(record, bad)
    statement = record.get("formal_statement", record.get("theorem_statement"))
    if not isinstance(statement, str) or not statement.strip():
        raise bad("theorem_statement", "missing: a proof record needs its statement")
    own_header = record.get("header")
    if own_header is not None and not isinstance(own_header, str):
        raise bad("header", "expected a string")
    if own_header is None:
        own_header, statement = split_statement(statement)
        own_header = "\n".join(h for h in (header.strip(), own_header) if h)
    proof = _proof_text(record, bad)
    name = record.get("name") or record.get("full_name")
    try:
        theorem = LeanTheorem.parse(
            statement, own_header, name=None if name is None else str(name).rsplit(".", 1)[-1]
        )
    except ValueError as e:
        raise bad("theorem_statement", str(e)) from None
    return theorem, proof


def _proof_text(record: Mapping[str, Any], bad: Any) -> str:
    """The record's ``proof``, or its ``traced_tactics``' tactics one per line."""
    proof = record.get("proof")
    if proof is None:
        tactics = record.get("traced_tactics")
        if not isinstance(tactics, list) or not tactics:
            raise bad("traced_tactics", "missing or empty: a proof record needs its tactics")
        lines = []
        for t in tactics:
            if not isinstance(t, Mapping) or not isinstance(t.get("tactic"), str):
                raise bad("traced_tactics", "each tactic must be an object with a 'tactic' string")
            lines.append(t["tactic"])
        proof = "\n".join(lines)
    if not isinstance(proof, str) or not proof.strip():
        raise bad("proof", "expected a non-empty string")
    return proof


def load_proofs(path: str | Path) -> list[dict[str, Any]]:
    """The records of a ``proofs.json`` (a JSON list) or a JSONL file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise DataError(path, f"cannot read it ({e.strerror})") from None
    try:
        if text.lstrip().startswith("["):
            records = json.loads(text)
        else:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as e:
        raise DataError(
            path, f"not JSON/JSONL ({e})", hint="give the prover's proofs.json"
        ) from None
    if not isinstance(records, list):
        raise DataError(path, "expected a JSON list of proof records")
    return records


def verify(
    proofs: str | Path | Sequence[Mapping[str, Any]],
    backend: Backend,
    *,
    header: str = "",
    allowed_axioms: Sequence[str] = DEFAULT_ALLOWED_AXIOMS,
    sources: Any = None,
) -> list[dict[str, Any]]:
    """Re-check every proof; one row per record: ``name``, ``status``, ``reason``, ``axioms``.
    ``sources`` reads an export theorem's statement from its Lean project (:func:`proof_item`).

    Every record is read (and a bad one reported) before Lean is asked anything. A backend
    with ``check_many`` (Kimina) gets the proofs in batches."""
    path = proofs if isinstance(proofs, (str, Path)) else None
    records = load_proofs(proofs) if isinstance(proofs, (str, Path)) else list(proofs)
    items = [
        proof_item(r, header=header, path=path, index=i, sources=sources)
        for i, r in enumerate(records)
    ]
    verdicts: list[Verdict | None] = [None] * len(items)
    to_check: list[int] = []
    for i, (_, proof) in enumerate(items):
        refused = screen_proof(proof)
        if refused is not None:
            verdicts[i] = Verdict("rejected", refused)
        else:
            to_check.append(i)
    check_many = getattr(backend, "check_many", None)
    if callable(check_many):
        results = check_many([items[i] for i in to_check])
    else:
        results = [backend.check(*items[i]) for i in to_check]
    for i, result in zip(to_check, results):
        verdicts[i] = judge(result, items[i][0].name, allowed_axioms)
    rows = []
    for record, (theorem, _), verdict in zip(records, items, verdicts):
        assert verdict is not None
        rows.append(
            {
                "name": record.get("full_name") or record.get("name") or theorem.name,
                "status": verdict.status,
                "reason": verdict.reason,
                "axioms": None if verdict.axioms is None else list(verdict.axioms),
            }
        )
    return rows


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts by status and the share proved."""
    counts = Counter(str(r["status"]) for r in rows)
    return {
        "total": len(rows),
        **{s: counts.get(s, 0) for s in ("proved", "rejected", "timeout", "error")},
        "proved_rate": counts.get("proved", 0) / len(rows) if rows else 0.0,
    }


def verify_command(args: VerifyArgs, lean: LeanArgs) -> int:
    """Run ``leantrain verify …``: one JSON object on stdout, ``proofs`` (per proof: ``name``,
    ``status``, ``reason``, ``axioms``) and ``summary`` (counts by status, ``proved_rate``); the
    headline on stderr. Exit status: 0 when every proof is ``proved``; 1 when any proof is
    ``rejected`` (Lean or the soundness rules refuse it); 3 when none is rejected but some could
    not be checked (``timeout`` / ``error``: Lean did not answer); 2 for bad input, as every
    ``leantrain`` command."""
    from leantrain.lean.args import CHECK_BACKENDS, build_backend, check_choice
    from leantrain.lean.theorems import ProjectSources

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
