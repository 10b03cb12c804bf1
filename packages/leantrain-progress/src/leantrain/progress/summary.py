"""A summary line at the start of the model input: the counts a small model cannot read off.

How many steps remain depends on things that are easy to count and hard for a small
transformer trained from scratch to count over hundreds of tokens: how many tactics were
applied so far (rows late in a proof belong to long proofs), how many goals are open, how
many hypotheses and how much text the goal holds, and which tactic is tried (``rfl``,
``simp``, ``linarith``, ``exact`` usually close a goal). On the LB4 head + mathlib-sample
random split, a linear model on exactly these counts has a test MAE of 4.1 against 5.3 for
the median predictor, so the signal is there; the summary puts it at a fixed position of the
input, in a few tokens that truncation never removes::

    Tactic: simp · Steps so far: 4-7 · Goals: 1 · Hypotheses: 2-3 · Goal size: 64-127

Counts are bucketed by powers of two (0, 1, 2-3, 4-7, …) so that rare large counts share a
token with their neighbours. A model records whether it was trained with the summary
(``progress_input`` in its ``config.json``); one without the key (the seed's) reads the
seed's text.
"""

from __future__ import annotations

from typing import Any, Literal

InputFormat = Literal["summary", "plain"]
CONFIG_KEY = "progress_input"
"""The key of the input format in the model's ``config.json``."""


def bucket(n: int) -> str:
    """``n`` as its power-of-two bucket: ``0``, ``1``, ``2-3``, ``4-7``, ``8-15``, …"""
    if n <= 1:
        return str(max(n, 0))
    low = 1 << (n.bit_length() - 1)
    return f"{low}-{2 * low - 1}"


def _prefix_steps(prefix: str | None) -> int:
    return sum(1 for line in (prefix or "").splitlines() if line.strip() and line[0] != " ")


def _first_goal_hypotheses(goal: str) -> int:
    at = goal.find("⊢")
    head = goal[:at] if at >= 0 else ""
    start = head.rfind("\n\n") + 1  # hypotheses of the first goal: after its 'case' line
    return sum(1 for line in head[start:].splitlines() if " : " in line)


def summarize(goal: str, prefix: str | None, tactic: str) -> str:
    """The summary line of one row (see the module docstring); no trailing newline."""
    first = (tactic.split() or [""])[0]
    goals = goal.count("⊢") if "⊢" in goal else (0 if goal.strip() == "no goals" else 1)
    return (
        f"Tactic: {first} · Steps so far: {bucket(_prefix_steps(prefix))} · "
        f"Goals: {bucket(goals)} · Hypotheses: {bucket(_first_goal_hypotheses(goal))} · "
        f"Goal size: {bucket(len(goal))}"
    )


def input_format_of(model: Any, default: InputFormat) -> InputFormat:
    """The input format a model was trained with: its ``progress_input``; a trained progress
    model without it (the seed's, or one from before the summary) reads ``"plain"``; a base
    model (no progress target yet) takes ``default``."""
    config = getattr(model, "config", None)
    stored = getattr(config, CONFIG_KEY, None)
    if stored in ("summary", "plain"):
        return stored
    return "plain" if getattr(config, "progress_target", None) is not None else default
