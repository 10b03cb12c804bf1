"""How a proof state becomes the retriever's query text (``context_format``).

A Lean proof state lists the hypotheses first and the goal (``⊢ …``) last; a state often has
more tokens than an encoder reads (on the LB4 head half the states exceed 128 MiniLM tokens),
and cutting from the right then drops the goal — the part that names what the next tactic
proves. ``goal_first`` moves the first goal's ``⊢ …`` to the front of its block, before its
hypotheses, so truncation removes hypotheses instead; the other goals follow unchanged.
``raw`` is the state as traced (ReProver's input; what retrievers saved before this option
existed use). Training, validation, evaluation and ``retrieve`` all format through
:func:`format_context`, so a retriever is always queried the way it was trained.
"""

from __future__ import annotations

CONTEXT_FORMATS = ("goal_first", "raw")
#: what a retriever saved without a ``context_format`` in its ``retriever.json`` used
LEGACY_CONTEXT_FORMAT = "raw"
GOAL = "⊢"


def goal_first(state: str) -> str:
    """The state with its first goal's ``⊢ …`` moved before that goal's hypotheses.

    Goals are separated by blank lines; a state without ``⊢`` is returned unchanged.
    """
    first, sep, rest = state.partition("\n\n")
    i = first.find(GOAL)
    if i <= 0:
        return state
    hyps = first[:i].rstrip("\n")
    return f"{first[i:]}\n{hyps}{sep}{rest}"


def format_context(state: str, fmt: str = "goal_first") -> str:
    """The text the encoder reads for ``state`` under ``fmt`` (see :data:`CONTEXT_FORMATS`)."""
    return goal_first(state) if fmt == "goal_first" else state
