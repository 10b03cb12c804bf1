"""The one contract between leantrain and Lean.

A :class:`Backend` starts a theorem and returns a :class:`Session`; the session holds the
initial :class:`State` and runs one tactic on a state at a time, answering with an
:class:`Outcome`: a new state, the proof finished, an error, or a timeout. A backend also
checks a whole theorem (statement + proof text) and answers with a :class:`CheckResult`:
``ok`` / Lean's errors / sorries / the axioms the theorem uses. :meth:`Backend.close` ends what
the backend holds (a Lean process, an HTTP connection).

Timeouts are separate: ``start_timeout`` for what must happen before the first tactic
(elaborating the imports, setting the theorem up) and ``tactic_timeout`` per tactic; both are
arguments of each backend.

:class:`State`, :class:`Outcome`, :class:`BackendError`, :class:`SessionCrashed` and
:data:`NO_GOALS` are re-exported by ``leantrain.prover.backend``: the prover's best-first
search runs on these sessions.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from leantrain.core.errors import LeanTrainError

NO_GOALS = "no goals"
"""The state text after the last tactic of a finished proof (LeanDojo's)."""


@dataclass(frozen=True)
class State:
    """A proof state: Lean's pretty-printed goals (``pp``) and the backend's own handle.

    Several goals are joined by a blank line, as LeanDojo prints them. States compare by
    ``pp`` alone."""

    pp: str
    handle: Any = field(default=None, compare=False, repr=False)


OutcomeKind = Literal["state", "proved", "error", "timeout"]


@dataclass(frozen=True)
class Outcome:
    """What running a tactic gave: ``state`` (a new :class:`State` in ``state``), ``proved``
    (no goals left), ``error`` (Lean refused it, or the backend had to restart; ``message``
    says which) or ``timeout`` (it ran past the per-tactic timeout)."""

    kind: OutcomeKind
    state: State | None = None
    message: str = ""


class BackendError(LeanTrainError):
    """A theorem could not be started (the backend cannot set it up)."""


class SessionCrashed(LeanTrainError):
    """The backend of a running session stopped answering and could not be restarted."""


CheckStatus = Literal["ok", "timeout", "error"]


@dataclass(frozen=True)
class CheckResult:
    """Lean's answer to a whole theorem.

    ``status``: ``ok`` (Lean answered; see ``errors``/``sorries``/``axioms``), ``timeout``
    (no answer within the check timeout) or ``error`` (the backend failed: a dead process, an
    HTTP error; ``detail`` says what). ``errors`` are Lean's error messages, ``sorries`` the
    number of ``sorry``\\ s Lean reported, ``axioms`` the axioms the theorem depends on as
    ``#print axioms`` listed them (``None`` when Lean printed no such report, e.g. because the
    theorem did not elaborate under its name)."""

    status: CheckStatus
    errors: tuple[str, ...] = ()
    sorries: int = 0
    axioms: tuple[str, ...] | None = None
    detail: str = ""
    messages: tuple[dict[str, Any], ...] = ()

    @property
    def ok(self) -> bool:
        """Lean answered with no error and no sorry (the axioms are judged separately)."""
        return self.status == "ok" and not self.errors and self.sorries == 0


_DECL_RE = re.compile(
    r"^\s*(?:/--.*?-/\s*)?(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*"
    r"(?P<kw>theorem|lemma|example|def)\b\s*(?P<name>[^\s:({\[⦃]*)",
    re.DOTALL,
)
_PROOF_TAIL_RE = re.compile(r"\s*:=\s*(?:by\b\s*(?:sorry\s*)?|sorry\s*)?$")


@dataclass(frozen=True)
class LeanTheorem:
    """A theorem to prove or check: ``statement`` is the declaration without its proof
    (``theorem foo (n : Nat) : n + 0 = n``), ``header`` the text before it (imports,
    ``open``, ``set_option``), ``name`` the declared name. ``source`` says where it was read
    (``file:line``), ``split`` its benchmark split, ``informal`` an informal statement."""

    name: str
    statement: str
    header: str = ""
    source: str = ""
    split: str | None = None
    informal: str | None = None

    @classmethod
    def parse(cls, statement: str, header: str = "", **kw: Any) -> LeanTheorem:
        """A theorem from a declaration text (with or without a trailing ``:= by [sorry]`` or
        ``:= sorry``).

        The name is the declared one; an ``example`` is given ``kw['name']``. Raises
        ``ValueError`` (with what is wrong) on a text that declares no theorem."""
        text = _PROOF_TAIL_RE.sub("", statement.strip())
        if ":=" in text:
            raise ValueError("the statement holds a proof (':=' before its end); give it without")
        m = _DECL_RE.match(text)
        if m is None:
            raise ValueError("expected a declaration 'theorem NAME … : TYPE'")
        name = kw.pop("name", None)
        if m.group("kw") == "example":
            if not name:
                raise ValueError("an 'example' needs a name to check it under")
            text = text[: m.start("kw")] + f"theorem {name}" + text[m.end("kw") :]
        else:
            name = m.group("name")
            if not name:
                raise ValueError("the declaration has no name")
        return cls(name=name, statement=text, header=header, **kw)

    def as_forall(self) -> str:
        """The statement as one proposition: ``theorem t (a : ℕ) {b : ℕ} : P a b`` →
        ``∀ (a : ℕ) {b : ℕ}, P a b`` (what Pantograph's ``goal_start`` takes)."""
        m = _DECL_RE.match(self.statement)
        assert m is not None  # parse() made it
        rest = self.statement[m.end("name") :]
        depth = 0
        for i, ch in enumerate(rest):
            if ch in "([{⦃⟨":
                depth += 1
            elif ch in ")]}⦄⟩":
                depth -= 1
            elif ch == ":" and depth == 0:
                binders, prop = rest[:i].strip(), rest[i + 1 :].strip()
                return f"∀ {binders}, {prop}" if binders else prop
        raise ValueError(f"{self.name}: no ':' before the statement's type")

    def code(self, proof: str) -> str:
        """The declaration with ``proof`` (a tactic script) as its proof, without the header.

        A one-line proof stays on the declaration's line (``… := by norm_num``); a longer one
        goes below it, indented by two spaces."""
        proof = proof.strip("\n")
        if "\n" not in proof:
            return f"{self.statement} := by {proof.strip()}"
        return f"{self.statement} := by\n{textwrap.indent(textwrap.dedent(proof), '  ')}"


def split_header(header: str) -> tuple[list[str], str]:
    """The modules a header imports and the rest of it (``open``, ``set_option``…)."""
    imports: list[str] = []
    rest: list[str] = []
    for line in header.splitlines():
        stripped = line.strip()
        if stripped.startswith("import "):
            imports.extend(stripped[len("import ") :].split())
        else:
            rest.append(line)
    return imports, "\n".join(rest).strip()


@runtime_checkable
class Session(Protocol):
    """One theorem being proved: its initial state, tactics run on states, then closed."""

    initial_state: State

    def run(self, state: State, tactic: str) -> Outcome:
        """Run ``tactic`` on ``state`` (a state of this session) and say what came of it."""
        ...

    def close(self) -> None:
        """Release what the session holds."""
        ...


@runtime_checkable
class Backend(Protocol):
    """Starts sessions and checks whole theorems; ``name`` is what results record,
    ``metric`` the name of the proof rate it measures."""

    name: str
    metric: str

    def start(self, theorem: LeanTheorem) -> Session:
        """A session on ``theorem``; :class:`BackendError` when it cannot be started."""
        ...

    def check(self, theorem: LeanTheorem, proof: str) -> CheckResult:
        """Check ``theorem`` with ``proof`` in an environment holding only its header, and
        list the axioms it depends on (``#print axioms``)."""
        ...

    def close(self) -> None:
        """End what the backend holds; a second call does nothing."""
        ...
