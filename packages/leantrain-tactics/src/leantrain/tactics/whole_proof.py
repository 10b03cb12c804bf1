"""Whole-proof examples (statement → proof), the data of DeepSeek-Prover / Kimina / Goedel-style
provers, from the same theorem records as the step-wise data.

A theorem record gives its whole proof in one of two ways:

- ``formal_proof`` set (from the Lean source, an imported dataset, or a proof ``prove`` found):
  used as is; the example's ``origin`` is the record's ``proof_origin``;
- otherwise its traced top-level tactics, verbatim, joined as a ``by`` block (``origin ==
  "tactics"``). LeanDojo traces every tactic of a proof, nested ones included, so a join of all of
  them can repeat a nested tactic; the join keeps the order and is meant as training text (under
  the ``replay`` check it is the traced proof itself).

The statement is ``theorem_statement`` (``theorem foo (n : Nat) : n + 0 = n :=``). A record
without one yields no example (LeanDojo Benchmark 4 ships none: its statements are only in the
Lean source).

Statements are compared, for the contamination guard, by :func:`statement_hash` of
:func:`normalize_statement` (both in :mod:`leantrain.core.lean_text`, which exports use too):
comments and leading header lines dropped, whitespace collapsed, the declaration keyword and
name dropped (a renamed copy of a benchmark theorem is still the same statement), and the
trailing ``:=`` / ``by`` dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from leantrain.core.errors import DataError
from leantrain.core.lean_text import (
    contains_sorry,
    normalize_statement,
    statement_hash,
    tactics_proof,
)
from leantrain.core.schemas import Theorem

__all__ = [
    "DEFAULT_WHOLE_SYSTEM_PROMPT",
    "Origin",
    "WholeProofExample",
    "create_whole_proof_sft_dataset",
    "normalize_statement",
    "statement_hash",
    "tactics_proof",
    "whole_proof_example",
    "whole_proof_examples",
    "whole_proof_messages",
    "whole_proof_sft_rows",
    "whole_proof_user_prompt",
]

Origin = Literal["source", "tactics", "imported", "found"]

DEFAULT_WHOLE_SYSTEM_PROMPT = (
    "You are a Lean 4 theorem prover. Given a Lean 4 theorem statement (after its imports), "
    "reply with its complete proof: the text that follows `:=`. Never use `sorry` or `admit`. "
    "Reply with the proof only: no explanation, no code fences."
)
"""Default system message of a whole-proof model (``mode: whole``): the proof after ``:=``."""


@dataclass(frozen=True)
class WholeProofExample:
    """One statement → proof pair with where its proof came from."""

    full_name: str
    statement: str
    """The declaration up to and including ``:=`` (``theorem foo : 1 + 1 = 2 :=``)."""
    proof: str
    """What follows ``:=``: ``by`` and its tactics, or a term."""
    header: str
    """``import`` / ``open`` lines the statement needs ("" when the record has none)."""
    origin: Origin
    difficulty: float | None = None

    @property
    def theorem_text(self) -> str:
        """The whole declaration as Lean reads it: ``statement proof``."""
        return f"{self.statement} {self.proof}"


def whole_proof_user_prompt(header: str, statement: str) -> str:
    """The user message of a whole-proof prompt: the header, a blank line, the statement
    (ending ``:=``); the statement alone without a header."""
    header, statement = header.strip(), statement.strip()
    return f"{header}\n\n{statement}" if header else statement


def whole_proof_messages(
    header: str, statement: str, system_prompt: str | None = DEFAULT_WHOLE_SYSTEM_PROMPT
) -> list[dict[str, str]]:
    """``[system, user]`` of a whole-proof prompt (no system message when ``system_prompt`` is
    empty or ``None``): what ``sft --mode whole`` trains on and what whole-proof sampling asks."""
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return [*messages, {"role": "user", "content": whole_proof_user_prompt(header, statement)}]


def whole_proof_sft_rows(
    examples: Iterable[WholeProofExample],
    system_prompt: str | None = DEFAULT_WHOLE_SYSTEM_PROMPT,
    max_samples: int | None = None,
) -> list[dict[str, Any]]:
    """TRL prompt/completion rows (loss only on the completion: the proof)."""
    rows = []
    for example in examples:
        if max_samples is not None and len(rows) >= max_samples:
            break
        rows.append(
            {
                "prompt": whole_proof_messages(example.header, example.statement, system_prompt),
                "completion": [{"role": "assistant", "content": example.proof}],
            }
        )
    return rows


def create_whole_proof_sft_dataset(
    source: Any,
    split: str = "train",
    max_samples: int | None = None,
    *,
    system_prompt: str | None = DEFAULT_WHOLE_SYSTEM_PROMPT,
    split_strategy: str = "random",
) -> Any:
    """A ``datasets.Dataset`` of whole-proof SFT rows (``prompt`` = system + header and
    statement, ``completion`` = the proof) from an export dir, a split file or theorems. A
    split without any theorem that has a statement and a proof is one :class:`DataError`."""
    import datasets
    from leantrain.tactics.tactic_dataset import message_feature
    from leantrain.tactics.theorem_source import describe_source, iter_theorems

    theorems = iter_theorems(source, split, split_strategy=split_strategy)
    rows = whole_proof_sft_rows(whole_proof_examples(theorems), system_prompt, max_samples)
    if not rows:
        raise DataError(
            describe_source(source, split, split_strategy),
            "no whole-proof example: no theorem has a theorem_statement and a proof",
            hint="import statements with proofs (leantrain export import FILE.jsonl|.parquet), "
            "or train in tactic mode (LeanDojo Benchmark 4 ships no statements)",
        )
    features = datasets.Features({"prompt": message_feature(), "completion": message_feature()})
    return datasets.Dataset.from_list(rows, features=features)


def whole_proof_example(theorem: Theorem) -> WholeProofExample | None:
    """The record's whole-proof example, or ``None`` without a statement or any proof, or
    with a proof that uses ``sorry`` / ``admit``."""
    statement = (theorem.theorem_statement or "").strip()
    if not statement:
        return None
    if theorem.formal_proof and theorem.formal_proof.strip():
        proof, origin = theorem.formal_proof.strip(), theorem.proof_origin or "imported"
    elif theorem.traced_tactics:
        proof, origin = tactics_proof([t.tactic for t in theorem.traced_tactics]), "tactics"
    else:
        return None
    if contains_sorry(proof):
        return None  # not a proof to learn from
    if not statement.endswith(":="):
        statement += " :="
    return WholeProofExample(
        full_name=theorem.full_name,
        statement=statement,
        proof=proof,
        header=(theorem.header or "").strip(),
        origin=origin,
        difficulty=theorem.difficulty,
    )


def whole_proof_examples(theorems: Iterable[Theorem]) -> Iterator[WholeProofExample]:
    """The whole-proof examples of ``theorems`` (records without a statement or proof skipped)."""
    for theorem in theorems:
        example = whole_proof_example(theorem)
        if example is not None:
            yield example
