"""A stand-in for the ``lean_dojo`` module (lean-dojo 4.20), with its API and result classes.

lean-dojo is not installed where these tests run and there is no Lean toolchain, so this
module mirrors what :mod:`leantrain.lean.leandojo` uses of lean-dojo 4.20's
``lean_dojo/interaction/dojo.py`` and ``data_extraction/lean.py``: the frozen dataclasses
``TacticState(pp, id, message)`` (compared by ``pp`` only), ``ProofFinished(tactic_state_id,
message)``, ``LeanError(error)``, ``ProofGivenUp()``; the exceptions ``DojoInitError``,
``DojoCrashError``, ``DojoTacticTimeoutError``; ``LeanGitRepo(url, commit)``,
``Theorem(repo, file_path, full_name)`` and ``Dojo(entry, timeout=600, additional_imports=[],
build_deps=True)``, a context manager whose ``__enter__`` returns ``(dojo, initial_state)``
and whose ``run_tac(state, tactic)`` refuses a non-``TacticState``.

The fake Lean behind it is a table of proof moves, like the hand-made trees of the search
tests; special tactics trigger LeanDojo's other answers (``sorry``, ``slow``, ``crash``,
``boom`` — an exception LeanDojo does not declare). ``is_available_in_cache(repo)`` (lean-dojo's
``data_extraction.trace``, exported at the top) answers from :data:`TRACED`; each
``LeanGitRepo`` built is counted in :data:`REPOS`. :data:`SLOW_TIMEOUTS` makes ``slow`` time out only
so many times (a slow tactic that a fresh Dojo then passes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class TacticState:
    pp: str
    id: int = field(compare=False)
    message: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ProofFinished:
    tactic_state_id: int
    message: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ProofGivenUp:
    pass


@dataclass(frozen=True)
class LeanError:
    error: str


class DojoCrashError(Exception):
    pass


class DojoTacticTimeoutError(Exception):
    pass


class DojoInitError(Exception):
    pass


REPOS: list[tuple[str, str]] = []
"""Every LeanGitRepo built: (url, commit)."""

TRACED: set[tuple[str, str]] = {("https://github.com/x/r", "abc")}
"""The repositories LeanDojo's cache holds."""


@dataclass(frozen=True)
class LeanGitRepo:
    url: str
    commit: str

    def __post_init__(self) -> None:
        REPOS.append((self.url, self.commit))
        if self.url == "https://github.com/x/offline":
            raise ConnectionError("GitHub API rate limit exceeded")


def is_available_in_cache(repo: LeanGitRepo) -> bool:
    return (repo.url, repo.commit) in TRACED


@dataclass(frozen=True)
class Theorem:
    repo: LeanGitRepo
    file_path: Path
    full_name: str

    def __post_init__(self) -> None:
        if isinstance(self.file_path, str):
            object.__setattr__(self, "file_path", Path(self.file_path))
        assert self.file_path.suffix == ".lean", f"File extension must be .lean: {self.file_path}"


# what the fake Lean knows: theorem name -> (initial state, {(state, tactic): state after})
THEOREMS: dict[str, tuple[str, dict[tuple[str, str], str]]] = {
    "t.or": (
        "p q : Prop\n⊢ p → p ∨ q",
        {
            ("p q : Prop\n⊢ p → p ∨ q", "intro h"): "p q : Prop\nh : p\n⊢ p ∨ q",
            ("p q : Prop\nh : p\n⊢ p ∨ q", "exact Or.inl h"): "no goals",
            ("p q : Prop\nh : p\n⊢ p ∨ q", "slow"): "no goals",
        },
    ),
}

SLOW_TIMEOUTS: dict[str, int | None] = {"left": None}
"""How many more times ``slow`` times out (``None``: always); after that it runs."""

LOG: list[tuple[Any, ...]] = []
"""What the fake was asked: ("enter", name, timeout), ("run", state id, tactic), ("exit",)."""


class Dojo:
    def __init__(
        self,
        entry: Any,
        timeout: int = 600,
        additional_imports: list[str] | None = None,
        build_deps: bool = True,
    ) -> None:
        self.entry = entry
        self.timeout = timeout
        self.is_successful: bool | None = False
        self._states: list[TacticState] = []

    def __enter__(self) -> tuple[Dojo, TacticState]:
        name = self.entry.full_name
        LOG.append(("enter", name, self.timeout))
        if name not in THEOREMS:
            raise DojoInitError(f"Failed to locate the theorem with `{name}`")
        return self, self._new_state(THEOREMS[name][0])

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        LOG.append(("exit",))

    def _new_state(self, pp: str) -> TacticState:
        state = TacticState(pp, len(self._states))
        self._states.append(state)
        return state

    def run_tac(self, state: TacticState, tactic: str) -> Any:
        if not isinstance(state, TacticState):
            raise RuntimeError(f"Attempting to run a tactic on an invalid state {state}.")
        assert self._states[state.id] == state, "a state of another Dojo"
        LOG.append(("run", state.id, tactic))
        if tactic == "slow":
            left = SLOW_TIMEOUTS["left"]
            if left is None or left > 0:
                SLOW_TIMEOUTS["left"] = None if left is None else left - 1
                raise DojoTacticTimeoutError()
        if tactic == "boom":
            raise AssertionError("len(goals) == pp.count('⊢')")
        if tactic == "crash":
            raise DojoCrashError("Unexpected EOF")
        if tactic == "sorry":
            return ProofGivenUp()
        after = THEOREMS[self.entry.full_name][1].get((state.pp, tactic))
        if after is None:
            return LeanError(f"unknown tactic '{tactic}'")
        if after == "no goals":
            self.is_successful = True
            return ProofFinished(len(self._states))
        return self._new_state(after)
