"""The chat prompt a tactic generator sees: one system message and the proof state, led by the
retrieved premises when the generator is retrieval-augmented.

Training (:mod:`leantrain.tactics.sft_dataset`, :mod:`leantrain.tactics.rl_dataset`), evaluation,
suggestion and the prover (``leantrain.prover``) all build their prompts with
:func:`build_messages`, so the model is asked the same way at inference as in training.

Without premises the user message is the proof state alone, exactly as before retrieval existed
(models trained then are asked as they were taught). With premises (ReProver's
retrieval-augmented generation) the user message is a fixed block::

    Premises:
    <premise 1>

    <premise 2>

    State:
    <proof state>

Premises are given best first, each as the retriever serialises it (its code, led by its name
when the code lacks it), separated by blank lines. They share a budget of
``max_premise_chars`` characters (headers and separators not counted): a premise that does not
fit is skipped and the next one tried, as ReProver's ``format_augmented_state`` does, so one
long premise does not push out the short ones after it. When none fits (or none is given) the
prompt is the premise-free one.
"""

from __future__ import annotations

from collections.abc import Sequence

from leantrain.core.lean_text import strip_marks

DEFAULT_SYSTEM_PROMPT = (
    "You are a Lean 4 theorem prover. Given the current proof state, reply with exactly one "
    "Lean 4 tactic, on a single line, that makes progress on the goal. Never use `sorry` or "
    "`admit`. Reply with the tactic only: no explanation, no code fences."
)
"""Default system message: one Lean 4 tactic, single line, no ``sorry`` / ``admit``."""

DEFAULT_MAX_PREMISE_CHARS = 2000
"""Default character budget of the premises in one prompt (about 500 tokens of a BPE model)."""

PREMISES_HEADER = "Premises:\n"
STATE_HEADER = "State:\n"
PREMISE_SEPARATOR = "\n\n"


def format_user_prompt(state: str) -> str:
    """The proof state as prompts show it: LeanDojo ``<a>…</a>`` marks removed, ends stripped."""
    return strip_marks(state).strip()


def select_premises(
    premises: Sequence[str], max_premise_chars: int = DEFAULT_MAX_PREMISE_CHARS
) -> list[str]:
    """The premises that go into a prompt: in the given order, ends stripped, empty ones and
    those that no longer fit in ``max_premise_chars`` skipped (the next ones are still tried)."""
    chosen: list[str] = []
    used = 0
    for premise in premises:
        text = premise.strip()
        if not text or used + len(text) > max_premise_chars:
            continue
        chosen.append(text)
        used += len(text)
    return chosen


def format_premise_prompt(
    state: str,
    premises: Sequence[str] | None,
    max_premise_chars: int = DEFAULT_MAX_PREMISE_CHARS,
) -> str:
    """The user message: the state alone (:func:`format_user_prompt`) without premises, else
    the ``Premises:`` / ``State:`` block of the module docstring."""
    chosen = select_premises(premises or (), max_premise_chars)
    if not chosen:
        return format_user_prompt(state)
    return (
        PREMISES_HEADER
        + PREMISE_SEPARATOR.join(chosen)
        + PREMISE_SEPARATOR
        + STATE_HEADER
        + format_user_prompt(state)
    )


def build_messages(
    state: str,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
    premises: Sequence[str] | None = None,
    *,
    max_premise_chars: int = DEFAULT_MAX_PREMISE_CHARS,
) -> list[dict[str, str]]:
    """``[{"role": "system", …}, {"role": "user", …}]`` — the prompt of one example.

    An empty or ``None`` ``system_prompt`` leaves the system message out (for chat templates
    that do not accept one). ``premises`` (serialised premises, best first, e.g. a retriever's
    top k) lead the user message within ``max_premise_chars``; ``None`` or an empty list gives
    the prompt without premises, unchanged from before retrieval-augmented prompts existed.
    """
    messages: list[dict[str, str]] = []
    if system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    messages.append(
        {"role": "user", "content": format_premise_prompt(state, premises, max_premise_chars)}
    )
    return messages
