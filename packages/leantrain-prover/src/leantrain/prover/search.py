"""Best-first proof search (ReProver's algorithm) over the states of one :class:`Session`.

The open node with the highest priority is expanded: the generator proposes up to ``k``
tactics for its state, each is run, and every new state becomes an open node (a state reached
before is not added again: states are deduplicated by their text). The search stops at the
first proof, when no open node is left (``failed``), at the expansion budget (``budget``), at
the wall-clock timeout of the theorem (``timeout``) or when the backend crashes
(``crashed``). At the node budget a new state is not kept, but the tactics and open nodes left
are still tried (one may finish the proof); a search that then runs out of open nodes ends in
``budget``.

Priority of a node: the cumulative score of the tactics on the path that first reached it
(each tactic's score is the generator's: the sum of its token log-probabilities, or their
per-token mean with ``tactic_score: mean``), divided by ``depth ** depth_exponent`` (0: the raw
sum, ReProver's; 1: length-normalised; 2: BFS-Prover-V2's); with a progress model,
``that − progress_weight × predicted steps remaining`` (LeanProgress), predicted for the parent
goal and the tactic (``progress_input: parent``) or for the state Lean returned (``child``).
Both terms of every expanded node are kept in :attr:`SearchResult.trace`. Ties are broken by
creation order, so the search is deterministic. With ``expansion_batch > 1`` that many open
nodes are expanded together, in one batched call of the generator.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from leantrain.prover.backend import NO_GOALS, Session, SessionCrashed, State

Status = Literal[
    "proved", "failed", "budget", "timeout", "crashed", "init_failed", "error", "rejected"
]
"""How a search ended (``best_first_search``: the first five); the prover adds
``init_failed`` (the theorem could not be started), ``error`` (an exception; ``crashed``
becomes ``error`` in its rows) and ``rejected`` (the re-check refused the proof)."""


class TacticGenerator(Protocol):
    """Proposes tactics: for each state, up to ``k`` ``(tactic, log-probability)`` pairs."""

    def propose(self, states: Sequence[str], k: int) -> list[list[tuple[str, float]]]:
        """One list per state, best first."""
        ...


class StepsPredictor(Protocol):
    """Predicts proof steps remaining (``leantrain.progress.ProgressPredictor`` is one)."""

    def predict_many(
        self, goals: Sequence[str], prefixes: Sequence[str], tactics: Sequence[str]
    ) -> list[float]:
        """Steps remaining after each ``tactic`` applied to ``goal`` after ``prefix``."""
        ...


@dataclass(frozen=True)
class SearchSettings:
    """Budgets and priority of one search (``None`` budgets are unlimited)."""

    num_sampled_tactics: int = 8
    max_expansions: int | None = 100
    max_nodes: int | None = None
    timeout: float | None = 60.0
    expansion_batch: int = 1
    depth_exponent: float = 0.0
    progress_weight: float = 1.0
    progress_input: Literal["parent", "child"] = "parent"


@dataclass(frozen=True)
class ProofStep:
    """One tactic of a found proof with the states around it (LeanDojo's traced-tactic fields)."""

    tactic: str
    state_before: str
    state_after: str


@dataclass(frozen=True)
class Negative:
    """A tactic that failed on an expanded state: what Lean said, and the generator's score of
    it (a rejected example for preference training, as BFS-Prover's DPO pairs)."""

    state: str
    tactic: str
    error: str
    logprob: float


@dataclass
class SearchResult:
    """What one search did: status, the proof if found, and its costs."""

    status: Status
    proof: list[ProofStep] = field(default_factory=list)
    expansions: int = 0
    tactics_tried: int = 0
    nodes: int = 1
    time_s: float = 0.0
    generator_time_s: float = 0.0
    backend_time_s: float = 0.0
    error: str | None = None
    negatives: list[Negative] = field(default_factory=list)
    """The tactics Lean refused (or that timed out) on each expanded state, with their scores."""
    trace: list[dict[str, float]] = field(default_factory=list)
    """Each expanded node's depth and priority terms, in expansion order: ``score`` (the
    generator's term), ``steps`` (predicted steps remaining; 0 without a progress model) and
    ``priority`` (``score − progress_weight × steps``)."""

    @property
    def proved(self) -> bool:
        return self.status == "proved"


@dataclass(eq=False)
class _Node:
    state: State
    logprob: float
    depth: int
    parent: _Node | None = None
    tactic: str = ""
    priority: float = 0.0
    score: float = 0.0
    steps: float = 0.0

    def path(self) -> list[_Node]:
        """The nodes from the root to this one."""
        nodes: list[_Node] = []
        node: _Node | None = self
        while node is not None:
            nodes.append(node)
            node = node.parent
        return nodes[::-1]

    def prefix(self) -> list[str]:
        """The tactics from the root to this node."""
        return [n.tactic for n in self.path()[1:]]


def _proof(node: _Node, last_tactic: str) -> list[ProofStep]:
    path = node.path()
    steps = [
        ProofStep(child.tactic, parent.state.pp, child.state.pp)
        for parent, child in itertools.pairwise(path)
    ]
    return [*steps, ProofStep(last_tactic, node.state.pp, NO_GOALS)]


class _Search:
    def __init__(
        self,
        session: Session,
        generator: TacticGenerator,
        settings: SearchSettings,
        progress: StepsPredictor | None,
        clock: Callable[[], float],
    ) -> None:
        self.session, self.generator, self.s = session, generator, settings
        self.progress, self.clock = progress, clock
        self.start = clock()
        self.result = SearchResult(status="failed")
        self.order = itertools.count()
        self.heap: list[tuple[float, int, _Node]] = []
        self.dropped = False  # a new state was not kept: the node budget was full
        root = _Node(session.initial_state, 0.0, 0)
        self.seen: dict[str, _Node] = {root.state.pp: root}
        self._push([root])

    def _timed_out(self) -> bool:
        return self.s.timeout is not None and self.clock() - self.start >= self.s.timeout

    def _push(self, nodes: list[_Node]) -> None:
        steps = [0.0] * len(nodes)
        if self.progress is not None and nodes and nodes[0].parent is not None:
            if self.s.progress_input == "child":  # the state Lean returned, after the path
                steps = self.progress.predict_many(
                    [n.state.pp for n in nodes],
                    ["\n".join(n.prefix()) for n in nodes],
                    [""] * len(nodes),
                )
            else:
                steps = self.progress.predict_many(
                    [n.parent.state.pp for n in nodes if n.parent is not None],
                    ["\n".join(n.parent.prefix()) for n in nodes if n.parent is not None],
                    [n.tactic for n in nodes],
                )
        for node, remaining in zip(nodes, steps):
            node.score = node.logprob / node.depth**self.s.depth_exponent if node.depth else 0.0
            node.steps = float(remaining)
            node.priority = node.score - self.s.progress_weight * node.steps
            heapq.heappush(self.heap, (-node.priority, next(self.order), node))

    def _pop_batch(self) -> list[_Node]:
        size = self.s.expansion_batch
        if self.s.max_expansions is not None:
            size = min(size, self.s.max_expansions - self.result.expansions)
        return [heapq.heappop(self.heap)[2] for _ in range(min(size, len(self.heap)))]

    def _budget_hit(self) -> bool:
        return self.s.max_expansions is not None and self.result.expansions >= self.s.max_expansions

    def run(self) -> SearchResult:
        r = self.result
        try:
            self._loop()
        except SessionCrashed as e:
            r.status, r.error = "crashed", e.one_line()
        r.nodes = len(self.seen)
        r.time_s = self.clock() - self.start
        return r

    def _loop(self) -> None:
        r = self.result
        while self.heap:
            if self._timed_out():
                r.status = "timeout"
                return
            if self._budget_hit():
                r.status = "budget"
                return
            batch = self._pop_batch()
            t0 = self.clock()
            proposals = self.generator.propose(
                [n.state.pp for n in batch], self.s.num_sampled_tactics
            )
            r.generator_time_s += self.clock() - t0
            if len(proposals) != len(batch):
                raise ValueError(
                    f"the generator answered {len(proposals)} lists for {len(batch)} states"
                )
            r.trace += [
                {"depth": n.depth, "score": n.score, "steps": n.steps, "priority": n.priority}
                for n in batch
            ]
            children: list[_Node] = []
            for node, tactics in zip(batch, proposals):
                over = self._expand(node, tactics, children)
                if r.status != "timeout":  # an expansion counts once its tactics have run
                    r.expansions += 1
                if over:
                    return  # over: the new states need no priority
            self._push(children)
        # no open node left: "budget" when the node budget dropped states that were still open
        r.status = "budget" if self.dropped else "failed"

    def _expand(self, node: _Node, tactics: list[tuple[str, float]], children: list[_Node]) -> bool:
        """Run ``tactics`` on ``node``; True when the search is over (proof, timeout)."""
        r = self.result
        for tactic, logprob in tactics[: self.s.num_sampled_tactics]:
            if self._timed_out():
                r.status = "timeout"
                return True
            r.tactics_tried += 1
            t0 = self.clock()
            outcome = self.session.run(node.state, tactic)
            r.backend_time_s += self.clock() - t0
            if outcome.kind == "proved":
                r.status, r.proof = "proved", _proof(node, tactic)
                return True
            if outcome.kind != "state" or outcome.state is None:
                # an error or a timed-out tactic is a dead end
                r.negatives.append(
                    Negative(node.state.pp, tactic, outcome.message or outcome.kind, logprob)
                )
                continue
            if outcome.state.pp in self.seen:
                continue  # a state reached before: the earlier path stands
            if self.s.max_nodes is not None and len(self.seen) >= self.s.max_nodes:
                # the node budget is full: the state is not kept, but this node's other tactics
                # (one may finish the proof) and the open nodes are still tried
                self.dropped = True
                continue
            child = _Node(outcome.state, node.logprob + logprob, node.depth + 1, node, tactic)
            self.seen[child.state.pp] = child
            children.append(child)
        return False


def best_first_search(
    session: Session,
    generator: TacticGenerator,
    settings: SearchSettings | None = None,
    *,
    progress: StepsPredictor | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> SearchResult:
    """Search a proof from ``session.initial_state`` (see the module docstring).

    ``progress`` adds predicted steps remaining to the priority; ``clock`` is the time source of
    the timeout (tests pass a fake). The session is not closed here.
    """
    return _Search(session, generator, settings or SearchSettings(), progress, clock).run()
