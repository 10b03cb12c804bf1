"""The chat prompt a tactic generator sees: one system message and the proof state.

Training (:mod:`leantrain.tactics.sft_dataset`, :mod:`leantrain.tactics.rl_dataset`), evaluation
and suggestion all build their prompts with :func:`build_messages`, so the model is asked the
same way at inference as in training.
"""

from __future__ import annotations

from leantrain.core.lean_text import strip_marks

DEFAULT_SYSTEM_PROMPT = (
    "You are a Lean 4 theorem prover. Given the current proof state, reply with exactly one "
    "Lean 4 tactic, on a single line, that makes progress on the goal. Never use `sorry` or "
    "`admit`. Reply with the tactic only: no explanation, no code fences."
)
"""Default system message: one Lean 4 tactic, single line, no ``sorry`` / ``admit``."""


def format_user_prompt(state: str) -> str:
    """The user message for a proof state: LeanDojo ``<a>…</a>`` marks removed, ends stripped."""
    return strip_marks(state).strip()


def build_messages(
    state: str, system_prompt: str | None = DEFAULT_SYSTEM_PROMPT
) -> list[dict[str, str]]:
    """``[{"role": "system", …}, {"role": "user", <state>}]`` — the prompt of one example.

    An empty or ``None`` ``system_prompt`` leaves the system message out (for chat templates
    that do not accept one).
    """
    messages: list[dict[str, str]] = []
    if system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    messages.append({"role": "user", "content": format_user_prompt(state)})
    return messages
