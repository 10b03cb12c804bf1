"""Helpers for Lean 4 text: annotation marks, tactic normalisation, ``sorry`` detection."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_MARK_RE = re.compile(r"<a>(.*?)</a>", re.DOTALL)
_SORRY_RE = re.compile(r"(?<![\w.'])(sorry|admit)(?![\w'])")
_WS_RE = re.compile(r"\s+")


def strip_marks(text: str) -> str:
    """Remove LeanDojo's ``<a>…</a>`` premise marks, keeping the marked text."""
    return _MARK_RE.sub(r"\1", text)


def marked_names(text: str) -> list[str]:
    """The texts inside ``<a>…</a>`` marks, in order of appearance."""
    return _MARK_RE.findall(text)


def first_line(tactic: str) -> str:
    """The first non-empty line of a tactic, stripped (``""`` for an empty tactic)."""
    for line in tactic.splitlines():
        if line.strip():
            return line.strip()
    return ""


def normalize_whitespace(text: str) -> str:
    """Collapse every run of whitespace to one space and strip the ends."""
    return _WS_RE.sub(" ", text).strip()


def normalize_tactic(tactic: str, *, first_line_only: bool = False) -> str:
    """Normalise a tactic for comparison: optionally keep the first line, collapse whitespace."""
    return normalize_whitespace(first_line(tactic) if first_line_only else tactic)


def contains_sorry(text: str) -> bool:
    """True when ``text`` uses ``sorry`` or ``admit`` as a word (not ``sorryAx`` or ``admits``)."""
    return _SORRY_RE.search(text) is not None


def top_level_tactics(traced: Sequence[Any]) -> list[str] | None:
    """The top-level tactics of a traced proof, or ``None`` when they cannot be told apart.

    LeanDojo traces nested tactics too (the ``rw [h]`` inside ``have : p := by rw [h]``, whose
    text the ``have`` already holds), so joining every traced tactic repeats them. The
    top-level ones form a chain of states: from the first ``state_before``, each takes the
    state the previous one left (a nested tactic starts from a subgoal instead). The chain is
    the proof only when its last ``state_after`` is ``no goals`` and every tactic left out is
    written inside one it kept; otherwise (``<;>``, a ``by`` in the statement traced first)
    ``None``, rather than a proof that may be wrong."""
    if not traced:
        return None
    state, chain, left_out = _field(traced[0], "state_before"), [], []
    for tactic in traced:
        if _field(tactic, "state_before") == state:
            chain.append(_field(tactic, "tactic"))
            state = _field(tactic, "state_after")
        else:
            left_out.append(normalize_whitespace(strip_marks(_field(tactic, "tactic"))))
    kept = [normalize_whitespace(strip_marks(t)) for t in chain]
    inside = all(any(t in k for k in kept) for t in left_out)
    return chain if state.strip() == "no goals" and inside else None


def _field(tactic: Any, name: str) -> str:
    return str(tactic[name] if isinstance(tactic, dict) else getattr(tactic, name))


def tactics_proof(tactics: Sequence[str]) -> str:
    """Traced tactics (``<a>`` marks removed, blank ones left out) as one ``by`` block, each
    line indented two spaces: the whole proof of a tactic list."""
    lines = ["by"]
    for tactic in tactics:
        text = strip_marks(tactic).strip("\n")
        if text.strip():
            lines.extend("  " + line for line in text.splitlines())
    return "\n".join(lines)


def premise_mentions(annotated_tactic: Sequence[Any]) -> list[str]:
    """Full names of the premises annotated in a LeanDojo ``annotated_tactic`` pair.

    ``annotated_tactic`` is ``[text_with_marks, [{full_name, def_path, def_pos, def_end_pos}]]``
    (or an :class:`~leantrain.core.schemas.AnnotatedTactic`). Duplicates are kept once, in order.
    """
    provenances = getattr(annotated_tactic, "provenances", None)
    if provenances is None:
        provenances = annotated_tactic[1] if len(annotated_tactic) > 1 else []
    seen: dict[str, None] = {}
    for p in provenances:
        name = p["full_name"] if isinstance(p, dict) else p.full_name
        seen.setdefault(name, None)
    return list(seen)


_COMMENT = re.compile(r"/-.*?-/|--[^\n]*", re.DOTALL)
_HEADER = re.compile(
    r"\A(?:\s*(?:import|open|universe|variable|namespace|section|set_option)"
    r"\b[^\n]*\n)+",
    re.MULTILINE,
)
_DECL = re.compile(
    r"^(?:@\[[^\]]*\]\s*)*(?:(?:private|protected|noncomputable|nonrec)\s+)*"
    r"(?:theorem|lemma|example|def|abbrev|instance)\b\s*(?:(?!\s)[^\s:(\[{⦃]+)?"
)
_TAIL = re.compile(r"\s*(?::=\s*(?:by)?\s*(?:sorry)?\s*)?$")


def normalize_statement(text: str) -> str:
    """``theorem foo (n : ℕ) :\\n  n + 0 = n := by`` → ``(n : ℕ) : n + 0 = n``; leading
    header lines (``import``, ``open``, ``set_option``, ``namespace``, …) are dropped too."""
    text = _HEADER.sub("", _COMMENT.sub(" ", text).lstrip() + "\n", count=1)
    text = " ".join(text.split())
    text = _DECL.sub("", text, count=1).strip()
    return _TAIL.sub("", text).strip()


def statement_hash(text: str) -> str:
    """SHA-256 (hex, first 16 digits) of :func:`normalize_statement` of ``text``: what the
    contamination guard compares (``leantrain.tactics.contamination``) and exports record."""
    import hashlib

    return hashlib.sha256(normalize_statement(text).encode("utf-8")).hexdigest()[:16]


STATE_HASH_DOMAIN = "\x00initial proof state\x00"
"""What :func:`state_hash` hashes before the state, so that a state and a statement never share a
hash: the two are different texts of a theorem (Lean prints the state after elaborating the
statement's binders), and a textual match across the forms would be a coincidence, not a copy."""


def state_hash(state: str) -> str:
    """SHA-256 (hex, first 16 digits) of an initial proof state as Lean prints it (hypotheses,
    then ``⊢`` the goal), whitespace collapsed, in a domain of its own
    (:data:`STATE_HASH_DOMAIN`): the contamination guard's key for a theorem that is stated only
    by its traced initial state (LeanDojo Benchmark 4 has no statement text)."""
    import hashlib

    text = STATE_HASH_DOMAIN + normalize_whitespace(state)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def statement_end(text: str) -> int:
    """Where the top-level ``:=`` of a declaration is (outside brackets; -1 when there is
    none)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{⦃⟨":
            depth += 1
        elif ch in ")]}⦄⟩":
            depth -= 1
        elif ch == ":" and depth == 0 and text.startswith(":=", i):
            return i
    return -1
