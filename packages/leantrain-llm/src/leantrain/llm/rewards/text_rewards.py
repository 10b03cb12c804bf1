"""Rewards computed from the completion text alone (and the row's reference / premises).

Each returns one float per completion, or ``None`` where it does not apply (TRL then ignores
it for that completion).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from leantrain.core.errors import ConfigError
from leantrain.core.lean_text import contains_sorry, normalize_whitespace
from leantrain.core.registry import REWARDS
from leantrain.llm.rewards.columns import column
from leantrain.llm.rewards.validation import completion_text

_TOKEN_RE = re.compile(r"[\w.'!?]+|[^\w\s]")
# Lean identifiers: letters (incl. Unicode), digits, _, ', !, ?, and dots between components.
_IDENT_RE = re.compile(r"[^\W\d][\w.'!?]*")


@REWARDS.register("format")
def format_reward(
    prompts: Any = None, completions: Sequence[Any] = (), **kwargs: Any
) -> list[float]:
    """1.0 for a well-formed tactic: non-empty, a single line, no Markdown code fence; else 0.0."""
    out = []
    for completion in completions:
        text = completion_text(completion).strip()
        ok = bool(text) and "\n" not in text and "```" not in text
        out.append(1.0 if ok else 0.0)
    return out


@REWARDS.register("no_sorry")
def no_sorry_reward(
    prompts: Any = None, completions: Sequence[Any] = (), **kwargs: Any
) -> list[float]:
    """1.0 when the completion does not use ``sorry`` / ``admit``, 0.0 when it does."""
    return [0.0 if contains_sorry(completion_text(c)) else 1.0 for c in completions]


def _tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(text)


def token_f1(candidate: str, reference: str) -> float:
    """F1 of the multisets of Lean tokens (identifiers, numbers, single symbols) of two tactics."""
    cand, ref = Counter(_tokens(candidate)), Counter(_tokens(reference))
    overlap = sum((cand & ref).values())
    if overlap == 0:
        return 0.0
    precision = overlap / sum(cand.values())
    recall = overlap / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


class ReferenceMatchReward:
    """Agreement with the reference tactic (column ``reference``).

    * 1.0 — identical after stripping the ends;
    * ``normalized_credit`` (default 1.0) — identical after collapsing runs of whitespace
      (``simp  [foo]`` vs ``simp [foo]``);
    * otherwise partial credit ``partial_credit × F1`` of the multisets of Lean tokens
      (identifiers, numbers, symbols), so ``simp [foo]`` against ``simp [foo, bar]`` earns some
      credit, an unrelated tactic none. ``partial_credit=0`` makes the reward all-or-nothing.
    """

    def __init__(self, *, normalized_credit: float = 1.0, partial_credit: float = 0.5) -> None:
        for key, value in (
            ("normalized_credit", normalized_credit),
            ("partial_credit", partial_credit),
        ):
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"reference_match: {key} must be in [0, 1], got {value}")
        self.normalized_credit = normalized_credit
        self.partial_credit = partial_credit
        self.__name__ = "reference_match"

    def score(self, candidate: str, reference: str) -> float:
        """The reward of one candidate tactic against its reference."""
        candidate, reference = candidate.strip(), reference.strip()
        if candidate == reference:
            return 1.0
        if normalize_whitespace(candidate) == normalize_whitespace(reference):
            return self.normalized_credit
        if not candidate or self.partial_credit == 0.0:
            return 0.0
        return self.partial_credit * token_f1(candidate, reference)

    def __call__(
        self, prompts: Any = None, completions: Sequence[Any] = (), **kwargs: Any
    ) -> list[float]:
        references = column(kwargs, "reference", len(completions), self.__name__)
        return [self.score(completion_text(c), str(r)) for c, r in zip(completions, references)]


REWARDS.add("reference_match", ReferenceMatchReward)
reference_match_reward = ReferenceMatchReward()
""":class:`ReferenceMatchReward` with its default credits."""


class LengthPenaltyReward:
    """0.0 up to ``max_chars`` characters, then falling linearly to ``-penalty`` at twice that.

    Discourages rambling completions without rewarding empty ones (combine with ``format``).
    """

    def __init__(self, *, max_chars: int = 100, penalty: float = 1.0) -> None:
        if max_chars < 1:
            raise ConfigError(f"length_penalty: max_chars must be positive, got {max_chars}")
        if penalty < 0:
            raise ConfigError(f"length_penalty: penalty must be >= 0, got {penalty}")
        self.max_chars = max_chars
        self.penalty = penalty
        self.__name__ = "length_penalty"

    def score(self, text: str) -> float:
        excess = len(text.strip()) - self.max_chars
        if excess <= 0:
            return 0.0
        return -self.penalty * min(1.0, excess / self.max_chars)

    def __call__(
        self, prompts: Any = None, completions: Sequence[Any] = (), **kwargs: Any
    ) -> list[float]:
        return [self.score(completion_text(c)) for c in completions]


REWARDS.add("length_penalty", LengthPenaltyReward)


def mentions_premise(text: str, full_name: str) -> bool:
    """True when ``text`` names the premise ``full_name``, in full or by a namespace suffix
    (``mul_comm`` or ``Nat.mul_comm`` for ``Nat.mul_comm``, as ``open Nat`` allows)."""
    for ident in _IDENT_RE.findall(text):
        ident = ident.rstrip(".")
        if ident == full_name or full_name.endswith("." + ident):
            return True
    return False


@REWARDS.register("premise_mention")
def premise_mention_reward(
    prompts: Any = None, completions: Sequence[Any] = (), **kwargs: Any
) -> list[float | None]:
    """Fraction of the reference tactic's annotated premises (column ``premises``) that the
    completion names; ``None`` (not applicable) for a row without annotated premises."""
    premises = column(kwargs, "premises", len(completions), "premise_mention")
    out: list[float | None] = []
    for completion, names in zip(completions, premises):
        names = list(dict.fromkeys(names or []))
        if not names:
            out.append(None)
            continue
        text = completion_text(completion)
        out.append(sum(mentions_premise(text, n) for n in names) / len(names))
    return out


@REWARDS.register("whole_format")
def whole_format_reward(
    prompts: Any = None, completions: Sequence[Any] = (), **kwargs: Any
) -> list[float]:
    """1.0 for a reply that is one whole proof as ``--mode whole`` prompts ask (a ``by`` block
    or a term, bare or in one code block, without ``sorry`` / ``admit``; a repeated statement
    is allowed: :func:`leantrain.tactics.whole_proof.extract_proof` reads it); else 0.0."""
    from leantrain.tactics.whole_proof import extract_proof

    out = []
    for completion in completions:
        text = completion_text(completion)
        proof = extract_proof(text)
        fences = text.count("```")
        ok = bool(proof) and fences in (0, 2) and not contains_sorry(proof)
        out.append(1.0 if ok else 0.0)
    return out


class ProofLengthReward(LengthPenaltyReward):
    """:class:`LengthPenaltyReward` for whole proofs (default ``max_chars`` 2000): the length
    shaping of whole-proof RL recipes, against replies that ramble to the token limit."""

    def __init__(self, *, max_chars: int = 2000, penalty: float = 1.0) -> None:
        super().__init__(max_chars=max_chars, penalty=penalty)
        self.__name__ = "proof_length"


REWARDS.add("proof_length", ProofLengthReward)
