"""Sound by construction: a proof counts only after a whole-theorem re-check.

A proof found by a search (or handed in by a model) is judged in three steps:

1. **Screening the proof text** (:func:`screen_proof`) before Lean sees it. The proof is only
   ever the body of one theorem whose statement comes from the benchmark; the screen refuses
   what could make Lean accept a false statement without the kernel checking a proof term:
   ``sorry``/``admit``; a new ``axiom``; compiler overrides (``@[implemented_by]``,
   ``@[extern]``) that ``native_decide`` would trust; options that switch kernel checks off
   (``set_option debug.…``); ``unsafe`` code; new syntax or elaborators (``elab``, ``macro``,
   ``syntax``, ``notation``…) and meta code run at elaboration (``run_tac``, ``#eval``…), which
   can redefine what a tactic means; a new top-level declaration or ``#exit`` in the proof
   (the proof would stop being the body of the theorem); and the search tactics ``exact?``,
   ``apply?``, ``rw?``, whose answer depends on the library and which leave a ``sorry`` behind
   when they fail (PyPantograph #106 accepted such proofs) — the tactic they suggest is the
   proof. Each entry of :data:`DENY_LIST` has a test.
2. **Checking the whole theorem** in an environment holding only its header
   (:meth:`Backend.check`), with ``#print axioms NAME`` after it.
3. **Judging Lean's answer** (:func:`judge`): no error, no ``sorry``, an axiom report for
   the theorem, and every axiom in the allow-list (default :data:`DEFAULT_ALLOWED_AXIOMS`:
   ``propext``, ``Classical.choice``, ``Quot.sound``). ``Lean.ofReduceBool`` and
   ``Lean.trustCompiler`` (``native_decide``: the compiler is trusted) are named in the
   reason; allow them explicitly to accept such proofs.

The statement and header are trusted input (they come from the benchmark, not the model).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from leantrain.core.lean_text import contains_sorry
from leantrain.lean.contract import Backend, CheckResult, LeanTheorem

DEFAULT_ALLOWED_AXIOMS: tuple[str, ...] = ("propext", "Classical.choice", "Quot.sound")
"""Lean's three standard axioms: what Mathlib's theorems use."""

COMPILER_AXIOMS = {
    "Lean.ofReduceBool": "native_decide: the proof trusts the compiled code",
    "Lean.trustCompiler": "the proof trusts the compiler",
}
"""Axioms that make the kernel trust compiled code, with what introduces them."""

SORRY_AXIOM = "sorryAx"


@dataclass(frozen=True)
class DenyRule:
    """One refused construct: its name, the pattern found in the proof text, and why."""

    name: str
    pattern: re.Pattern[str]
    reason: str


def _rule(name: str, pattern: str, reason: str) -> DenyRule:
    return DenyRule(name, re.compile(pattern, re.MULTILINE), reason)


DENY_LIST: tuple[DenyRule, ...] = (
    _rule("axiom", r"(?<![\w.'])axiom(?![\w'])", "declares a new axiom"),
    _rule(
        "implemented_by",
        r"@\[[^\]]*\b(?:implemented_by|extern)\b",
        "overrides compiled code (@[implemented_by]/@[extern]), which native_decide trusts",
    ),
    _rule(
        "debug option",
        r"\bset_option\s+debug\.",
        "sets a debug option (debug.skipKernelTC switches the kernel check off)",
    ),
    _rule("unsafe", r"(?<![\w.'])unsafe(?![\w'])", "uses unsafe code"),
    _rule(
        "new syntax",
        r"(?<![\w.'#])(?:elab|elab_rules|macro|macro_rules|syntax|notation|infix|infixl|infixr"
        r"|prefix|postfix)(?![\w'])",
        "defines syntax, a macro or an elaborator, which can redefine what a tactic means",
    ),
    _rule(
        "meta code",
        r"(?<![\w.'])(?:run_tac|run_cmd|run_elab|run_meta|by_elab)(?![\w'])|#eval\b",
        "runs meta code at elaboration, which can add unchecked declarations",
    ),
    _rule(
        "new command",
        r"^\s*(?:theorem|lemma|def|abbrev|instance|opaque|structure|inductive|class|namespace"
        r"|section|end|attribute|export)(?![\w'])|#exit\b",
        "starts a new declaration or command: a proof is the body of its theorem only",
    ),
    _rule(
        "search tactic",
        r"(?<![\w.'])(?:exact\?|apply\?|rw\?)",
        "uses a search tactic (exact?/apply?/rw?): it leaves a sorry when it fails "
        "(PyPantograph #106); the tactic it suggests is the proof",
    ),
)
"""The constructs :func:`screen_proof` refuses (see the module docstring for why)."""


def screen_proof(proof: str) -> str | None:
    """Why ``proof`` is refused before Lean sees it, or ``None`` when it passes."""
    if contains_sorry(proof):
        return "the proof contains sorry/admit"
    for rule in DENY_LIST:
        m = rule.pattern.search(proof)
        if m is not None:
            return f"the proof {rule.reason} ({m.group(0).strip()!r})"
    return None


_AXIOMS_RE = re.compile(r"^'(?P<name>[^']+)' depends on axioms: \[(?P<list>.*)\]\s*$", re.DOTALL)
_NO_AXIOMS_RE = re.compile(r"^'(?P<name>[^']+)' does not depend on any axioms\s*$")


def _same_name(printed: str, name: str) -> bool:
    # ``#print axioms foo`` inside ``namespace N`` prints 'N.foo'
    return printed == name or printed.endswith("." + name)


def parse_axioms(messages: Iterable[dict[str, Any]], name: str) -> tuple[str, ...] | None:
    """The axioms ``#print axioms name`` listed in ``messages`` (REPL-shaped: ``severity``,
    ``data``), sorted; ``()`` for none, ``None`` when no report for ``name`` is there.

    The report's form is Lean's: ``'foo' depends on axioms: [propext, Quot.sound]`` (the list
    may be broken over lines) or ``'foo' does not depend on any axioms``."""
    for m in messages:
        if m.get("severity") != "info":
            continue
        data = str(m.get("data", "")).strip()
        hit = _AXIOMS_RE.match(data)
        if hit and _same_name(hit.group("name"), name):
            return tuple(sorted(a.strip() for a in hit.group("list").split(",") if a.strip()))
        hit = _NO_AXIOMS_RE.match(data)
        if hit and _same_name(hit.group("name"), name):
            return ()
    return None


_SORRY_WARNING_RE = re.compile(r"declaration uses ['`]sorry['`]")


def result_from_messages(
    messages: Sequence[dict[str, Any]], sorries: int, name: str
) -> CheckResult:
    """A :class:`CheckResult` from the REPL-shaped messages of a whole-theorem check.

    ``sorries`` is the length of the REPL's ``sorries`` list; a ``declaration uses 'sorry'``
    warning counts too (a sorry the REPL did not list, e.g. one a failed ``exact?`` left)."""
    errors = tuple(str(m.get("data", "")) for m in messages if m.get("severity") == "error")
    warned = sum(
        1
        for m in messages
        if m.get("severity") == "warning" and _SORRY_WARNING_RE.search(str(m.get("data", "")))
    )
    return CheckResult(
        status="ok",
        errors=errors,
        sorries=max(sorries, warned),
        axioms=parse_axioms(messages, name),
        messages=tuple(dict(m) for m in messages),
    )


VerdictStatus = Literal["proved", "rejected", "timeout", "error"]


@dataclass(frozen=True)
class Verdict:
    """The judgement of one proof: ``proved``, ``rejected`` (``reason`` says why), or
    ``timeout``/``error`` when Lean could not be asked (``reason`` says what happened)."""

    status: VerdictStatus
    reason: str = ""
    axioms: tuple[str, ...] | None = None

    @property
    def proved(self) -> bool:
        return self.status == "proved"


def judge(
    check: CheckResult, name: str, allowed_axioms: Sequence[str] = DEFAULT_ALLOWED_AXIOMS
) -> Verdict:
    """The :class:`Verdict` on Lean's answer ``check`` for the theorem ``name``."""
    if check.status == "timeout":
        return Verdict("timeout", check.detail or "the check timed out")
    if check.status == "error":
        return Verdict("error", check.detail or "the backend failed")
    if check.errors:
        first = check.errors[0].strip().replace("\n", " ")
        return Verdict("rejected", f"Lean error: {first}", check.axioms)
    if check.sorries:
        return Verdict("rejected", "Lean reports a sorry in the proof", check.axioms)
    if check.axioms is None:
        return Verdict(
            "rejected",
            f"Lean printed no axiom report for '{name}' (it did not elaborate as stated)",
        )
    if SORRY_AXIOM in check.axioms:
        return Verdict("rejected", "the proof depends on sorryAx", check.axioms)
    allowed = set(allowed_axioms)
    compiler = [a for a in check.axioms if a in COMPILER_AXIOMS and a not in allowed]
    if compiler:
        why = "; ".join(f"{a} ({COMPILER_AXIOMS[a]})" for a in compiler)
        return Verdict("rejected", f"the proof uses {why}; not in the allowed axioms", check.axioms)
    other = [a for a in check.axioms if a not in allowed]
    if other:
        return Verdict(
            "rejected",
            f"the proof depends on axioms outside the allow-list: {', '.join(other)}",
            check.axioms,
        )
    return Verdict("proved", "", check.axioms)


def check_proof(
    backend: Backend,
    theorem: LeanTheorem,
    proof: str,
    allowed_axioms: Sequence[str] = DEFAULT_ALLOWED_AXIOMS,
) -> Verdict:
    """Screen ``proof``, check ``theorem`` with it through ``backend``, judge the answer."""
    refused = screen_proof(proof)
    if refused is not None:
        return Verdict("rejected", refused)
    name = getattr(theorem, "name", None) or getattr(theorem, "full_name", "")  # LeanDojo's
    return judge(backend.check(theorem, proof), str(name), allowed_axioms)
