"""Whole-proof examples (statement → proof), the data of DeepSeek-Prover / Kimina / Goedel-style
provers, from the same theorem records as the step-wise data.

A theorem record gives its whole proof in one of two ways:

- ``formal_proof`` set (from the Lean source, an imported dataset, or a proof ``prove`` found):
  used as is; the example's ``origin`` is the record's ``proof_origin``;
- otherwise its traced top-level tactics, verbatim, joined as a ``by`` block (``origin ==
  "tactics"``). LeanDojo traces nested tactics too; :func:`~leantrain.core.lean_text.top_level_tactics`
  keeps the chain of states from the first one to ``no goals`` and drops the tactics written
  inside a kept one. A record whose tactics do not chain that way (about 1 in 5 of the LB4 head's
  proofs: ``<;>``, a ``by`` inside the statement) gives no example rather than a wrong proof.

The theorem is stated in one of two forms (the example's ``form``, :func:`theorem_statement_form`):

``source``
    its ``theorem_statement`` (``theorem foo (n : Nat) : n + 0 = n :=``), from the Lean source,
    an imported dataset or a benchmark;
``state``
    without one, its **initial proof state** — the first traced tactic's ``state_before``,
    hypotheses then ``⊢`` the goal, exactly what Lean shows a prover at the start. LeanDojo
    Benchmark 4 ships no statement text, so its theorems are stated this way. The prompt shows
    ``theorem <full_name>``, the marker line :data:`STATE_MARKER` and the state as Lean printed
    it; no binder syntax is made up (Lean prints the state after elaborating the binders, and
    turning it back into a signature would be a guess).

A record with neither (no statement, no traced tactic) yields no example.

Statements are compared, for the contamination guard, by :func:`statement_hash` of
:func:`normalize_statement` (both in :mod:`leantrain.core.lean_text`, which exports use too):
comments and leading header lines dropped, whitespace collapsed, the declaration keyword and
name dropped (a renamed copy of a benchmark theorem is still the same statement), and the
trailing ``:=`` / ``by`` dropped. A state form is compared by
:func:`~leantrain.core.lean_text.state_hash` (whitespace collapsed), in a hash domain of its own:
a state never matches a statement (see :mod:`leantrain.tactics.contamination`).

**The prompt and the target** (one implementation for SFT, GRPO, ``prove`` and ``llm eval``):
:func:`whole_proof_prompt` gives the chat prompt — the system message, then the header and the
statement (ending ``:=``) as the user turn, optionally followed by a failed attempt and Lean's
messages (one round of error feedback); :func:`whole_proof_completion` the assistant turn, the
proof (what follows ``:=``). A generated reply is read back with :func:`extract_proof` (a
wrapping code fence, or a repeated header and statement, are dropped) and handed to Lean's
whole-theorem check as a tactic script by :func:`proof_script` (``by`` dropped; a term proof
becomes ``exact``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from leantrain.core.errors import DataError
from leantrain.core.lean_text import (
    _DECL,
    contains_sorry,
    normalize_statement,
    state_hash,
    statement_end,
    statement_hash,
    tactics_proof,
    top_level_tactics,
)
from leantrain.core.schemas import Theorem

__all__ = [
    "STATE_MARKER",
    "WHOLE_PROOF_SYSTEM_PROMPT",
    "Origin",
    "StatementForm",
    "WholeProofExample",
    "create_whole_proof_sft_dataset",
    "default_system_prompt",
    "extract_proof",
    "normalize_statement",
    "prompt_statement",
    "proof_script",
    "state_hash",
    "statement_hash",
    "tactics_proof",
    "theorem_statement_form",
    "top_level_tactics",
    "whole_proof_completion",
    "whole_proof_example",
    "whole_proof_examples",
    "whole_proof_prompt",
    "whole_proof_rl_rows",
    "whole_proof_sft_rows",
]

Origin = Literal["source", "tactics", "imported", "found"]
StatementForm = Literal["source", "state"]
"""How an example states its theorem: the ``source`` statement, or the initial proof ``state``."""

STATE_MARKER = "Initial proof state, as Lean prints it (hypotheses, then ⊢ the goal):"
"""The line between ``theorem <full_name>`` and the initial state in a state-form prompt."""

WHOLE_PROOF_SYSTEM_PROMPT = (
    "You are a Lean 4 theorem prover. Given a Lean 4 theorem statement ending in `:=`, with the "
    "imports and `open` lines it needs, reply with its complete proof: the text that follows "
    "`:=`, usually a `by` block. Never use `sorry` or `admit`. Reply with the proof only: no "
    "explanation, no code fences. A theorem without its statement text is given by its name and "
    "its initial proof state; prove it the same way."
)
"""Default system message of whole-proof prompts (``--mode whole``)."""

FEEDBACK_HEADER = "A previous attempt:"
LEAN_HEADER = "Lean's answer:"
RETRY_LINE = "Write a corrected proof."


@dataclass(frozen=True)
class WholeProofExample:
    """One statement → proof pair with where its proof came from."""

    full_name: str
    statement: str
    """``form`` source: the declaration up to and including ``:=`` (``theorem foo : 1 + 1 = 2
    :=``); ``form`` state: the initial proof state as Lean printed it (``n : ℕ\n⊢ n + 0 = n``)."""
    proof: str
    """What follows ``:=``: ``by`` and its tactics, or a term."""
    header: str
    """``import`` / ``open`` lines the statement needs ("" when the record has none)."""
    origin: Origin
    difficulty: float | None = None
    form: StatementForm = "source"

    @property
    def theorem_text(self) -> str:
        """The whole declaration as Lean reads it: ``statement proof`` (source form only: a
        state is not Lean syntax, so a state-form example is a :class:`ValueError`)."""
        if self.form != "source":
            raise ValueError(f"{self.full_name}: stated by its initial state, not as Lean text")
        return f"{self.statement} {self.proof}"

    @property
    def statement_hash(self) -> str:
        """The contamination guard's key of the statement (its form's hash)."""
        return form_hash(self.form, self.statement)


def whole_proof_sft_rows(
    examples: Iterable[WholeProofExample],
    system_prompt: str | None = WHOLE_PROOF_SYSTEM_PROMPT,
    max_samples: int | None = None,
) -> list[dict[str, Any]]:
    """TRL prompt/completion rows (loss only on the completion: the proof)."""
    rows: list[dict[str, Any]] = []
    for example in examples:
        if max_samples is not None and len(rows) >= max_samples:
            break
        rows.append(
            {
                "prompt": whole_proof_prompt(example, system_prompt),
                "completion": whole_proof_completion(example),
            }
        )
    return rows


def create_whole_proof_sft_dataset(
    source: Any,
    split: str = "train",
    max_samples: int | None = None,
    *,
    system_prompt: str | None = WHOLE_PROOF_SYSTEM_PROMPT,
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
            "no whole-proof example: no theorem has a statement (theorem_statement, or a traced "
            "initial state) and a proof",
            hint="export traced theorems or import statements with proofs (leantrain export "
            "import FILE.jsonl|.parquet), or train in tactic mode",
        )
    features = datasets.Features({"prompt": message_feature(), "completion": message_feature()})
    return datasets.Dataset.from_list(rows, features=features)


def theorem_statement_form(theorem: Theorem) -> tuple[StatementForm, str] | None:
    """``("source", theorem_statement)``, else ``("state", the first traced tactic's
    state_before)``, else ``None`` (nothing to state the theorem by); texts stripped."""
    statement = (theorem.theorem_statement or "").strip()
    if statement:
        return "source", statement
    if theorem.traced_tactics and theorem.traced_tactics[0].state_before.strip():
        return "state", theorem.traced_tactics[0].state_before.strip()
    return None


def form_hash(form: StatementForm, text: str) -> str:
    """:func:`statement_hash` of a source statement, :func:`state_hash` of a state."""
    return statement_hash(text) if form == "source" else state_hash(text)


def whole_proof_example(theorem: Theorem) -> WholeProofExample | None:
    """The record's whole-proof example, or ``None`` without a statement (source or initial
    state) or any proof, or with a proof that uses ``sorry`` / ``admit``."""
    stated = theorem_statement_form(theorem)
    if stated is None:
        return None
    form, statement = stated
    origin: Origin
    if theorem.formal_proof and theorem.formal_proof.strip():
        proof, origin = theorem.formal_proof.strip(), theorem.proof_origin or "imported"
    elif (top := top_level_tactics(theorem.traced_tactics)) is not None:
        proof, origin = tactics_proof(top), "tactics"
    else:  # no proof, or traced tactics whose top level cannot be told apart
        return None
    if contains_sorry(proof):
        return None  # not a proof to learn from
    return WholeProofExample(
        full_name=theorem.full_name,
        statement=prompt_statement(statement) if form == "source" else statement,
        proof=proof,
        header=(theorem.header or "").strip(),
        origin=origin,
        difficulty=theorem.difficulty,
        form=form,
    )


def whole_proof_examples(theorems: Iterable[Theorem]) -> Iterator[WholeProofExample]:
    """The whole-proof examples of ``theorems`` (records without a statement or proof skipped)."""
    for theorem in theorems:
        example = whole_proof_example(theorem)
        if example is not None:
            yield example


def default_system_prompt(mode: str) -> str:
    """The default system message of ``mode`` (``tactic`` or ``whole``)."""
    if mode == "whole":
        return WHOLE_PROOF_SYSTEM_PROMPT
    from leantrain.tactics.prompts import DEFAULT_SYSTEM_PROMPT

    return DEFAULT_SYSTEM_PROMPT


def prompt_statement(statement: str) -> str:
    """``statement`` as prompts show it: stripped, a trailing ``by`` / ``sorry`` after ``:=``
    dropped, ending in ``:=``."""
    # (also ``… := by sorry :=``, what whole_proof_example makes of a benchmark's statement)
    text = re.sub(r":=\s*(?:by\s*)?(?:sorry\s*)?(?::=\s*)?$", ":=", statement.strip())
    return text if text.endswith(":=") else text + " :="


def whole_proof_prompt(
    example: WholeProofExample | Theorem,
    system_prompt: str | None = WHOLE_PROOF_SYSTEM_PROMPT,
    *,
    feedback: tuple[str, str] | None = None,
) -> list[dict[str, str]]:
    """``[system, user]`` — the prompt of a whole proof: the user turn is the header (when there
    is one), a blank line, and the statement ending ``:=`` — or, in the state form,
    ``theorem <full_name>``, :data:`STATE_MARKER` and the initial state. ``feedback`` ``(proof,
    lean messages)`` of a failed attempt follows it (one round of error feedback). A
    :class:`~leantrain.core.schemas.Theorem` (a benchmark row, a record without a proof) is
    asked by :func:`theorem_statement_form` and its ``header``. An empty or ``None``
    ``system_prompt`` leaves the system message out."""
    if isinstance(example, Theorem):
        form, statement = theorem_statement_form(example) or ("source", "")
        header = example.header or ""
    else:
        form, statement, header = example.form, example.statement, example.header
    if form == "state":
        user = f"theorem {example.full_name}\n{STATE_MARKER}\n{statement.strip()}"
    else:
        user = prompt_statement(statement)
    if header.strip():
        user = f"{header.strip()}\n\n{user}"
    if feedback is not None:
        proof, messages = feedback
        user += (
            f"\n\n{FEEDBACK_HEADER}\n{proof.strip()}\n\n{LEAN_HEADER}\n{messages.strip()}"
            f"\n\n{RETRY_LINE}"
        )
    messages_out: list[dict[str, str]] = []
    if system_prompt:
        messages_out.append({"role": "system", "content": system_prompt})
    messages_out.append({"role": "user", "content": user})
    return messages_out


def whole_proof_completion(example: WholeProofExample) -> list[dict[str, str]]:
    """``[assistant]`` — the target of ``example``: its proof (what follows ``:=``)."""
    return [{"role": "assistant", "content": example.proof}]


_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|$)", re.DOTALL)
_HEADER_LINE = re.compile(r"^\s*(?:import|open|set_option|namespace|section|universe)\b")


def extract_proof(text: str) -> str:
    """The proof in a generated reply: the body of its first code fence when it has one; a
    repeated header and statement (``theorem foo … :=``) dropped; ends stripped. ``""`` when
    nothing is left (or the declaration has no ``:=``)."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    lines = body.strip("\n").splitlines()
    while lines and (not lines[0].strip() or _HEADER_LINE.match(lines[0])):
        lines.pop(0)
    body = "\n".join(lines)
    if _DECL.match(body.lstrip()):
        end = statement_end(body)
        body = "" if end < 0 else body[end + 2 :]
    return body.strip()


def proof_script(proof: str) -> str:
    """``proof`` (what follows ``:=``) as the tactic script Lean's whole-theorem check takes
    (:meth:`leantrain.lean.LeanTheorem.code` adds ``:= by``): ``by`` dropped and the block
    dedented; a term proof becomes ``exact`` of it."""
    import textwrap

    text = proof.strip()
    m = re.match(r"by(?![\w'])", text)
    if m is None:
        return "exact " + text if "\n" not in text else "exact\n" + textwrap.indent(text, "  ")
    rest = text[m.end() :]
    first, _, others = rest.partition("\n")
    if not others:
        return first.strip()
    body = textwrap.dedent(others)
    return f"{first.strip()}\n{body}".strip("\n") if first.strip() else body.strip("\n")


def whole_proof_rl_rows(
    theorems: Iterable[Theorem], system_prompt: str | None = WHOLE_PROOF_SYSTEM_PROMPT
) -> list[dict[str, object]]:
    """GRPO rows of ``--mode whole``, one per theorem with a statement (either form) and a
    proof: ``prompt`` (:func:`whole_proof_prompt`), ``reference`` (the proof), ``origin``,
    ``form``, and what the ``lean`` reward needs to ask Lean — ``formal_statement`` and
    ``header`` when the record has a header and a source statement (an imported or benchmark
    row; else ``None``: the statement is read from the Lean project at ``file_path`` /
    ``start``), ``url``, ``commit``, ``file_path``, ``full_name``, ``start``."""
    rows: list[dict[str, object]] = []
    for theorem in theorems:
        example = whole_proof_example(theorem)
        if example is None:
            continue
        own = theorem.header is not None
        rows.append(
            {
                "prompt": whole_proof_prompt(example, system_prompt),
                "reference": example.proof,
                "origin": example.origin,
                "form": example.form,
                "formal_statement": (
                    prompt_statement(example.statement)
                    if own and example.form == "source"
                    else None
                ),
                "header": example.header if own else None,
                "url": theorem.url,
                "commit": theorem.commit,
                "file_path": theorem.file_path,
                "full_name": theorem.full_name,
                "start": list(theorem.start),
            }
        )
    return rows
