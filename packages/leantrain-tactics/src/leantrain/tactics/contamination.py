"""The contamination guard: training refuses when a statement of a declared evaluation set
occurs in its training data.

Benchmarks are published as statements, and training sets are scraped from the same places: a
renamed, re-spaced copy of a miniF2F theorem in the training data inflates every later
measurement. Statements are compared by :func:`~leantrain.tactics.whole_proof.statement_hash`
(comments, whitespace, header lines, the keyword and the name dropped). The held-out statements
are those of each ``--eval-set`` file and of the run's own test split; the training statements
are the ``theorem_statement`` of the training records (records without one — LeanDojo
Benchmark 4 ships none — cannot be checked, and are counted).

An evaluation-set file is JSONL (one object a line) or JSON (an array of objects): a row's
statement is its ``formal_statement`` (DeepSeek-Prover, NuminaMath-LEAN, Lean Workbook,
miniF2F-style rows, header lines included or not) or ``theorem_statement`` (LeanDojo records,
``proofs.json``); its name is ``full_name``, ``name``, ``uuid`` or ``id`` (else its row number).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError
from leantrain.tactics.whole_proof import statement_hash

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
        if not isinstance(text, str) or not text.strip():
            raise DataError(
                path,
                "no statement",
                index=i,
                field="formal_statement",
                hint="each row needs 'formal_statement' (or 'theorem_statement') as a string",
            )
        name = next((row[k] for k in _NAME_KEYS if row.get(k) is not None), f"row {i}")
        out.append(Statement(str(name), text, str(path)))
    return out


def contaminated(
    training: Iterable[Statement], held_out: Iterable[Statement]
) -> list[tuple[Statement, Statement]]:
    """``(training statement, held-out statement)`` pairs of the same
    :func:`~leantrain.tactics.whole_proof.statement_hash`, in training order."""
    held: dict[str, Statement] = {}
    for s in held_out:
        held.setdefault(statement_hash(s.text), s)
    return [(s, held[h]) for s in training if (h := statement_hash(s.text)) in held]


def check_contamination(
    training: Iterable[Statement],
    held_out: Iterable[Statement],
    *,
    allow: bool = False,
    unchecked: int = 0,
) -> list[tuple[Statement, Statement]]:
    """Refuse (one :class:`DataError` line naming the first :data:`SHOWN` pairs and
    ``--allow-contamination``) when a held-out statement occurs in ``training``; with ``allow``
    one warning line instead. ``unchecked``: training records without a statement (said in
    one info line). Returns the pairs found."""
    pairs = contaminated(training, held_out)
    if unchecked:
        log.info("contamination guard: %d training theorems have no statement to check", unchecked)
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
    """The statements of a split of ``source`` (an export dir, a split file or theorems) and
    the number of its records without one."""
    from leantrain.tactics.theorem_source import describe_source, iter_theorems

    where = describe_source(source, split, split_strategy)
    out, missing = [], 0
    for t in iter_theorems(source, split, split_strategy=split_strategy):
        if t.theorem_statement and t.theorem_statement.strip():
            out.append(Statement(t.full_name, t.theorem_statement, where))
        else:
            missing += 1
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
