"""The ``pantograph`` backend against a fake with PyPantograph's own class shape.

The fake mirrors ``pantograph.server`` (PyPantograph v0.3.15): ``Server(imports,
project_path, timeout)`` with ``load_sorry``, ``goal_tactic(state, tactic, site)``,
``check_compile``; ``GoalState(state_id, goals, messages, _sentinel)``; ``CompilationUnit``
with ``messages``; ``Message(data, severity)``; ``TacticFailure`` and ``ServerError``. Lean's
answers inside are the REPL-recorded ones (the same Lean messages).
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

import pytest
from leantrain.core.errors import MissingDependencyError
from leantrain.lean import LeanTheorem, PantographBackend, check_proof, judge
from leantrain.lean.pantograph import import_pantograph


class TacticFailure(Exception):
    pass


class ServerError(Exception):
    pass


class Severity(Enum):
    INFORMATION = 1
    WARNING = 2
    ERROR = 3


@dataclass(frozen=True)
class Message:
    data: str
    pos: Any = None
    pos_end: Any = None
    severity: Severity = Severity.ERROR
    kind: str | None = None


@dataclass(frozen=True)
class Goal:
    target: str

    def __str__(self) -> str:
        return self.target


@dataclass(frozen=True)
class GoalState:
    state_id: int
    goals: list[Goal]
    messages: list[Message] = field(default_factory=list)
    _sentinel: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class SearchTarget:
    goal_state: GoalState | None


@dataclass(frozen=True)
class CompilationUnit:
    i_begin: int
    i_end: int
    messages: list[Message] = field(default_factory=list)


class FakeServer:
    """Scripted: ``tactics[(goal text, tactic)]`` is a list of goal texts or an exception."""

    instances: ClassVar[list[FakeServer]] = []
    tactics: ClassVar[dict[tuple[str, str], Any]] = {}
    compile_messages: ClassVar[dict[str, list[Message]]] = {}
    hang_once: ClassVar[set[str]] = set()

    def __init__(self, imports=None, project_path=None, timeout=60, **kw: Any) -> None:
        self.imports, self.project_path, self.timeout = imports, project_path, timeout
        self.next_id = 0
        self.loaded: list[str] = []
        self.started: list[str] = []
        self.closed = False
        FakeServer.instances.append(self)

    def _state(self, goals: list[str]) -> GoalState:
        self.next_id += 1
        return GoalState(self.next_id, [Goal(g) for g in goals])

    def goal_start(self, expr: str) -> GoalState:
        self.started.append(expr)
        return self._state([f"⊢ {expr}"])

    def load_sorry(self, src: str) -> list[SearchTarget]:
        self.loaded.append(src)
        target = src.rsplit(":", 1)[-1].replace(":= by sorry", "").strip()
        return [
            SearchTarget(None),
            SearchTarget(self._state([f"⊢ {target.removesuffix(' := by sorry')}"])),
        ]

    def goal_tactic(self, state: GoalState, tactic: str, site: Any = None) -> GoalState:
        if tactic in FakeServer.hang_once:
            FakeServer.hang_once.discard(tactic)
            raise ServerError("Server reached timeout limit")
        answer = FakeServer.tactics[(str(state.goals[0]), tactic)]
        if isinstance(answer, Exception):
            raise answer
        return self._state(answer)

    def check_compile(self, code: str, new_constants: bool = False, read_header: bool = False):
        return [CompilationUnit(0, len(code), FakeServer.compile_messages.get(code, []))]

    def _close(self) -> None:
        self.closed = True


@pytest.fixture
def pg():
    FakeServer.instances = []
    FakeServer.tactics = {}
    FakeServer.compile_messages = {}
    FakeServer.hang_once = set()
    return types.SimpleNamespace(
        Server=FakeServer, TacticFailure=TacticFailure, ServerError=ServerError
    )


AMC = LeanTheorem.parse(
    "theorem amc12a_2015_p10 (x y : ℤ) (h₀ : 0 < y) (h₁ : y < x) (h₂ : x + y + x * y = 80) : x = 26",
    "import MiniF2F.Minif2fImport\nopen BigOperators Real Nat Topology",
)


def test_sessions_run_tactics_on_goal_states(pg, tmp_path):
    b = PantographBackend(tmp_path, pantograph=pg, tactic_timeout=7, start_timeout=99)
    s = b.start(AMC)
    server = FakeServer.instances[0]
    assert server.imports == ["MiniF2F.Minif2fImport"] and server.project_path == str(tmp_path)
    assert server.loaded[0].startswith("open BigOperators Real Nat Topology\n\ntheorem amc12a")
    assert server.loaded[0].endswith(":= by sorry")
    FakeServer.tactics[(s.initial_state.pp, "nlinarith")] = ["⊢ a", "⊢ b"]
    o = s.run(s.initial_state, "nlinarith")
    assert o.kind == "state" and o.state.pp == "⊢ a\n\n⊢ b"
    assert server.timeout == 7  # the tactic timeout while a tactic runs
    FakeServer.tactics[("⊢ a", "omega")] = TacticFailure(["omega could not prove the goal"])
    bad = s.run(o.state, "omega")
    assert bad.kind == "error" and "omega could not prove" in bad.message


def test_pypantograph_106_exact_search_is_rejected_by_the_recheck(pg):
    # PyPantograph #106: with collected sorries, 'exact?' leaves no goals for any theorem
    b = PantographBackend(pantograph=pg)
    s = b.start(AMC)
    FakeServer.tactics[(s.initial_state.pp, "exact?")] = []
    assert s.run(s.initial_state, "exact?").kind == "proved"  # what Pantograph reports
    v = check_proof(b, AMC, "exact?")
    assert v.status == "rejected" and "search tactic" in v.reason and "#106" in v.reason


def test_a_failed_search_tactic_is_a_lean_error_in_the_whole_check(pg):
    # past the screen, the whole check says what Lean says (the REPL's recorded message for
    # a failing 'exact?', Mathlib/test/exact.expected.out)
    b = PantographBackend(pantograph=pg)
    preamble = "open BigOperators Real Nat Topology"
    code = f"{preamble}\n\n{AMC.code('exact?')}\n\n#print axioms amc12a_2015_p10"
    FakeServer.compile_messages[code] = [
        Message("`exact?` could not close the goal. Try `apply?` to see partial suggestions."),
        Message("declaration uses `sorry`", severity=Severity.WARNING),
    ]
    v = judge(b.check(AMC, "exact?"), AMC.name)
    assert v.status == "rejected" and "could not close the goal" in v.reason


def test_a_server_timeout_restarts_and_replays(pg):
    b = PantographBackend(pantograph=pg)
    s = b.start(AMC)
    FakeServer.tactics[(s.initial_state.pp, "intro")] = ["⊢ a"]
    FakeServer.tactics[("⊢ a", "simp")] = ["⊢ b"]
    o = s.run(s.initial_state, "intro")
    FakeServer.hang_once.add("simp")
    t = s.run(o.state, "simp")
    assert t.kind == "timeout" and "restarted" in t.message
    assert FakeServer.instances[0].closed and b.restarts == 1
    again = s.run(o.state, "simp")  # a new server; the state rebuilt by replaying 'intro'
    assert again.kind == "state" and again.state.pp == "⊢ b"
    assert len(FakeServer.instances) == 2


def test_the_old_goal_tactic_signature_is_supported(pg):
    class OldServer(FakeServer):
        def goal_tactic(self, state, goal_id, tactic):  # PyPantograph before 0.3
            assert goal_id == 0
            return super().goal_tactic(state, tactic)

    pg.Server = OldServer
    b = PantographBackend(pantograph=pg)
    s = b.start(AMC)
    FakeServer.tactics[(s.initial_state.pp, "omega")] = []
    assert s.run(s.initial_state, "omega").kind == "proved"


def test_a_header_of_imports_only_starts_with_goal_start(pg):
    t = LeanTheorem.parse(
        "theorem t {α : Type} [inst : Inhabited α] (xs : List α) (h : xs ≠ []) : xs.length > 0",
        "import Mathlib",
    )
    b = PantographBackend(pantograph=pg)
    s = b.start(t)
    server = FakeServer.instances[0]
    assert server.loaded == []
    assert server.started == [
        "∀ {α : Type} [inst : Inhabited α] (xs : List α) (h : xs ≠ []), xs.length > 0"
    ]
    assert s.initial_state.pp.startswith("⊢ ∀ {α : Type}")
    assert LeanTheorem.parse("theorem u : 1 = 1").as_forall() == "1 = 1"


def test_check_reads_the_axiom_report(pg):
    t = LeanTheorem.parse("theorem ex1 : True")
    b = PantographBackend(pantograph=pg)
    code = f"{t.code('native_decide')}\n\n#print axioms ex1"
    FakeServer.compile_messages[code] = [
        Message("'ex1' depends on axioms: [Lean.ofReduceBool]", severity=Severity.INFORMATION)
    ]
    v = check_proof(b, t, "native_decide")
    assert v.status == "rejected" and "Lean.ofReduceBool" in v.reason


def test_without_pypantograph_the_backend_is_one_line_with_the_install_command(monkeypatch):
    import importlib

    real = importlib.import_module

    def no_pantograph(name, *a, **k):
        if name.startswith("pantograph"):
            raise ImportError("No module named 'pantograph'", name="pantograph")
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", no_pantograph)
    with pytest.raises(MissingDependencyError) as e:
        import_pantograph()
    line = e.value.one_line()
    assert "git+https://github.com/stanford-centaur/PyPantograph" in line and "\n" not in line
