"""The contamination guard: training refuses when a statement of a declared evaluation set
occurs in its training data.

Benchmarks are published as statements, and training sets are scraped from the same places: a
renamed, re-spaced copy of a miniF2F theorem in the training data inflates every later
measurement. Statements are compared by :func:`~leantrain.tactics.whole_proof.statement_hash`
(comments, whitespace, header lines, the keyword and the name dropped). The held-out statements
are those of each ``--eval-set`` file and of the run's own test split; the training statements
are those of the training records.

A theorem is compared in the form its whole-proof prompt states it
(:func:`~leantrain.tactics.whole_proof.theorem_statement_form`): its source
``theorem_statement``, else its traced **initial proof state** (the first traced tactic's
``state_before``; all that LeanDojo Benchmark 4 has). The two forms hash in separate domains (:func:`~leantrain.core.lean_text.state_hash`) and never
match each other: a state is Lean's rendering of the statement after elaboration (binders
become hypotheses, implicit arguments and coercions show differently), so equal texts across
the forms would be a coincidence, and a statement cannot be turned into its state without Lean.
Hence a training theorem stated only by its state is checked against the held-out states (an
LB4 test split, an ``--eval-set`` of LeanDojo records), not against statement texts such as
miniF2F's; one info line counts those, and records with neither form are counted too.

An evaluation-set file is JSONL (one object a line) or JSON (an array of objects): a row's
statement is its ``formal_statement`` (DeepSeek-Prover, NuminaMath-LEAN, Lean Workbook,
miniF2F-style rows, header lines included or not) or ``theorem_statement`` (LeanDojo records,
``proofs.json``), else the ``state_before`` of its first ``traced_tactics`` entry (LeanDojo
Benchmark 4 records); its name is ``full_name``, ``name``, ``uuid`` or ``id`` (else its row
number).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError
from leantrain.tactics.whole_proof import StatementForm, form_hash, theorem_statement_form

log = logging.getLogger("leantrain.tactics")

SHOWN = 3
"""How many contaminated statements the refusal names."""

_STATEMENT_KEYS = ("formal_statement", "theorem_statement")
_NAME_KEYS = ("full_name", "name", "uuid", "id")


@dataclass(frozen=True)
class Statement:
    """A named statement and where it was read."""

    name: str
    text: str
    where: str
    form: StatementForm = "source"
    """``source`` (a statement's text) or ``state`` (an initial proof state)."""

    @property
    def hash(self) -> str:
        """The guard's key: the hash of :attr:`text` in its form's domain."""
        return form_hash(self.form, self.text)


def _rows(path: Path) -> Iterable[tuple[int, Any]]:
    from leantrain.core.json_reader import iter_json_array, iter_jsonl

    if path.suffix == ".jsonl":
        return iter_jsonl(path, what="statements", allow_empty=False)
    return iter_json_array(path, what="statements", allow_empty=False)


def read_statements(path: str | Path) -> list[Statement]:
    """The statements of an evaluation-set file (see the module docstring); a row without a
    statement is one :class:`DataError` naming the file, the row and the field."""
    path = Path(path)
    if not path.is_file():
        raise DataError(
            path, "no such evaluation-set file", hint="--eval-set takes a .jsonl or .json file"
        )
    out = []
    for i, row in _rows(path):
        if not isinstance(row, dict):
            raise DataError(path, "expected a JSON object", index=i, hint="one object per row")
        text = next((row[k] for k in _STATEMENT_KEYS if row.get(k) is not None), None)
        form: StatementForm = "source"
        if text is None:
            text, form = _first_state(row), "state"
        if not isinstance(text, str) or not text.strip():
            raise DataError(
                path,
                "no statement",
                index=i,
                field="formal_statement",
                hint="each row needs 'formal_statement' (or 'theorem_statement') as a string, "
                "or traced_tactics whose first entry has a 'state_before'",
            )
        name = next((row[k] for k in _NAME_KEYS if row.get(k) is not None), f"row {i}")
        out.append(Statement(str(name), text, str(path), form))
    return out


def _first_state(row: dict[str, Any]) -> Any:
    """The ``state_before`` of a LeanDojo row's first traced tactic (``None`` when absent)."""
    tactics = row.get("traced_tactics")
    if isinstance(tactics, list) and tactics and isinstance(tactics[0], dict):
        return tactics[0].get("state_before")
    return None


def contaminated(
    training: Iterable[Statement], held_out: Iterable[Statement]
) -> list[tuple[Statement, Statement]]:
    """``(training statement, held-out statement)`` pairs of the same :attr:`Statement.hash`
    (same form, same normalised text), in training order."""
    held: dict[str, Statement] = {}
    for s in held_out:
        held.setdefault(s.hash, s)
    return [(s, held[h]) for s in training if (h := s.hash) in held]


def check_contamination(
    training: Iterable[Statement],
    held_out: Iterable[Statement],
    *,
    allow: bool = False,
    unchecked: int = 0,
) -> list[tuple[Statement, Statement]]:
    """Refuse (one :class:`DataError` line naming the first :data:`SHOWN` pairs and
    ``--allow-contamination``) when a held-out statement occurs in ``training``; with ``allow``
    one warning line instead. ``unchecked``: training records with neither a statement nor a
    traced state (said in one info line, as are the training theorems stated only by their
    state when some held-out statements are texts they cannot be compared with). Returns the
    pairs found."""
    training, held_out = list(training), list(held_out)
    pairs = contaminated(training, held_out)
    if unchecked:
        log.info("contamination guard: %d training theorems have no statement to check", unchecked)
    texts = sum(s.form == "source" for s in held_out)
    state_only = sum(s.form == "state" for s in training)
    if texts and state_only:
        log.info(
            "contamination guard: %d training theorems are stated only by their initial proof "
            "state, compared with the held-out states but not with the %d held-out statement "
            "texts (that needs Lean)",
            state_only,
            texts,
        )
    if not pairs:
        return pairs
    shown = "; ".join(f"{t.name} ({t.where}) = {h.name} ({h.where})" for t, h in pairs[:SHOWN])
    more = f" and {len(pairs) - SHOWN} more" if len(pairs) > SHOWN else ""
    message = f"{len(pairs)} training statement(s) occur in an evaluation set: {shown}{more}"
    if not allow:
        raise DataError(
            None,
            message,
            hint="remove them from the training data, or pass --allow-contamination to train "
            "anyway (the evaluation is then not held out)",
        )
    log.warning("warning: %s (--allow-contamination)", message)
    return pairs


def split_statements(
    source: Any, split: str, split_strategy: str = "random"
) -> tuple[list[Statement], int]:
    """The statements of a split of ``source`` (an export dir, a split file or theorems), each
    in the form its prompt shows (the source statement, else the traced initial state), and
    the number of its records with neither."""
    from leantrain.tactics.theorem_source import describe_source, iter_theorems

    where = describe_source(source, split, split_strategy)
    out, missing = [], 0
    for t in iter_theorems(source, split, split_strategy=split_strategy):
        stated = theorem_statement_form(t)
        if stated is None:
            missing += 1
        else:
            out.append(Statement(t.full_name, stated[1], where, stated[0]))
    return out, missing


def guard_training_data(
    data: Any,
    *,
    eval_sets: Iterable[str | Path] = (),
    allow: bool = False,
    train_split: str = "train",
    split_strategy: str = "random",
    test_split: str | None = "test",
) -> list[tuple[Statement, Statement]]:
    """The guard a trainer runs before training on ``data`` (an export dir or split file):
    the statements of each ``eval_sets`` file and of ``data``'s ``test_split`` (where it has
    one) against those of its ``train_split``; see :func:`check_contamination`."""
    held: list[Statement] = []
    for path in eval_sets:
        held += read_statements(path)
    if test_split is not None and Path(data).is_dir():
        from leantrain.tactics.theorem_source import resolve_split_file

        try:
            resolve_split_file(data, test_split, split_strategy)
        except DataError:
            pass  # no test split: nothing of it to hold out
        else:
            held += split_statements(data, test_split, split_strategy)[0]
    if not held:
        return []
    training, missing = split_statements(data, train_split, split_strategy)
    return check_contamination(training, held, allow=allow, unchecked=missing)
