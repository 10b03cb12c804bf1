"""The ``lean_verified`` reward: run the candidate tactic in Lean with ``lean_dojo.Dojo``.

For each row the theorem (``url, commit, file_path, full_name``) is opened in a Dojo, the
``proof_prefix`` (the theorem's earlier traced tactics) is replayed to reach the state the
reference tactic was applied to, and each candidate is run there. Scores:

* +1.0 — Lean accepts the tactic and it closes the proof (``ProofFinished``) or changes the
  proof state (a ``TacticState`` whose goals differ from the state before);
* 0.0 — a Lean error, a tactic that leaves the state unchanged, ``sorry``/``admit``
  (``ProofGivenUp``, and never sent to Lean), an empty completion, a tactic timeout or a crash;
* ``None`` (unscorable, TRL ignores it) — the proof prefix does not replay (traced tactics
  inside nested blocks are not always a linear script) or the Dojo cannot be opened.

Results are cached by (theorem, prefix, tactic), so repeated generations cost nothing.
Without a Lean toolchain the reward refuses to be built (:class:`MissingDependencyError`)
rather than score everything 0.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from leantrain.core.errors import ConfigError, MissingDependencyError
from leantrain.core.lean_text import contains_sorry
from leantrain.core.registry import REWARDS
from leantrain.llm.rewards.columns import column
from leantrain.llm.rewards.validation import completion_text

DojoFactory = Callable[[dict[str, str], float], AbstractContextManager[tuple[Any, Any]]]
"""``factory(theorem, timeout)`` → a context manager giving ``(dojo, initial_state)``, like
``lean_dojo.Dojo(lean_dojo.Theorem(...), timeout=...)``. ``theorem`` has ``url, commit,
file_path, full_name``."""

_THEOREM_COLUMNS = ("url", "commit", "file_path", "full_name")


def lean_dojo_factory(
    theorem: dict[str, str], timeout: float
) -> AbstractContextManager[tuple[Any, Any]]:
    """Open ``theorem`` in a real ``lean_dojo.Dojo`` (needs lean-dojo and a Lean toolchain)."""
    import lean_dojo

    repo = lean_dojo.LeanGitRepo(theorem["url"], theorem["commit"])
    thm = lean_dojo.Theorem(repo, theorem["file_path"], theorem["full_name"])
    return lean_dojo.Dojo(thm, timeout=int(timeout))


def check_lean_toolchain() -> None:
    """Raise :class:`MissingDependencyError` unless ``lean_dojo`` imports and ``lean``/``lake`` run."""
    if importlib.util.find_spec("lean_dojo") is None:
        raise MissingDependencyError(
            "the lean_verified reward needs the Python package 'lean_dojo', which is not installed",
            hint="install it with: pip install 'leantrain-llm[lean]', and a Lean toolchain "
            "(https://leanprover-community.github.io/get_started.html: elan, lean, lake)",
        )
    missing = [tool for tool in ("lean", "lake") if shutil.which(tool) is None]
    if missing:
        raise MissingDependencyError(
            f"the lean_verified reward needs a Lean toolchain: {' and '.join(missing)} not found on PATH",
            hint="install elan (https://github.com/leanprover/elan) and put ~/.elan/bin on PATH",
        )


def _kind(result: Any) -> str:
    # Classified by class name so that fakes (tests) and every lean_dojo version work alike.
    return type(result).__name__


def _state_text(state: Any) -> str:
    return getattr(state, "pp", None) or str(state)


class LeanVerifiedReward:
    """Reward a tactic that Lean accepts and that advances or closes the goal (see module doc).

    ``dojo_factory`` opens a theorem (default: a real ``lean_dojo.Dojo``); inject a fake to
    test without Lean. ``timeout`` (seconds) is passed to the Dojo; ``cache_size`` bounds the
    result cache. ``stats`` counts outcomes (``accepted``, ``finished``, ``error``,
    ``no_progress``, ``timeout``, ``crash``, ``prefix_failed``, ``cache_hits`` …).
    """

    def __init__(
        self,
        *,
        timeout: float = 60.0,
        cache_size: int = 100_000,
        dojo_factory: DojoFactory | None = None,
        reward: float = 1.0,
    ) -> None:
        if timeout <= 0:
            raise ConfigError(f"lean_verified: timeout must be positive, got {timeout}")
        if cache_size < 0:
            raise ConfigError(f"lean_verified: cache_size must be >= 0, got {cache_size}")
        if dojo_factory is None:
            check_lean_toolchain()
            dojo_factory = lean_dojo_factory
        self.timeout = float(timeout)
        self.cache_size = cache_size
        self.dojo_factory = dojo_factory
        self.reward = float(reward)
        self.cache: OrderedDict[tuple[Any, ...], float | None] = OrderedDict()
        self.stats: dict[str, int] = {}
        # (theorem, prefix) pairs whose prefix did not replay: not worth reopening a Dojo for.
        self.failed_prefixes: set[tuple[Any, ...]] = set()
        self.__name__ = "lean_verified"

    # -- bookkeeping ------------------------------------------------------------------------
    def _count(self, key: str) -> None:
        self.stats[key] = self.stats.get(key, 0) + 1

    def _remember(self, key: tuple[Any, ...], value: float | None) -> None:
        if self.cache_size == 0:
            return
        self.cache[key] = value
        self.cache.move_to_end(key)
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)

    # -- Lean -------------------------------------------------------------------------------
    def _score(self, dojo: Any, state: Any, tactic: str) -> tuple[float, bool]:
        """Run one tactic; returns (score, cacheable). A crash is not cached (it may pass later)."""
        try:
            result = dojo.run_tac(state, tactic)
        except Exception as e:
            if "timeout" in type(e).__name__.lower() or isinstance(e, TimeoutError):
                self._count("timeout")
                return 0.0, True
            self._count("crash")
            return 0.0, False
        kind = _kind(result)
        if kind == "ProofFinished":
            self._count("finished")
            return self.reward, True
        if kind == "TacticState":
            if _state_text(result) != _state_text(state):
                self._count("accepted")
                return self.reward, True
            self._count("no_progress")
            return 0.0, True
        self._count("given_up" if kind == "ProofGivenUp" else "error")
        return 0.0, True

    def _replay(self, dojo: Any, init_state: Any, prefix: Sequence[str]) -> Any | None:
        state = init_state
        for tactic in prefix:
            try:
                result = dojo.run_tac(state, tactic)
            except Exception:
                return None
            if _kind(result) != "TacticState":
                return None
            state = result
        return state

    def _run_group(
        self, theorem: dict[str, str], prefix: tuple[str, ...], tactics: list[str]
    ) -> tuple[dict[str, float | None], set[str]]:
        """Score distinct ``tactics`` of one theorem and prefix in one Dojo session.

        Returns the scores and the tactics whose score must not be cached (a crash).
        """
        scores: dict[str, float | None] = {}
        uncacheable: set[str] = set()
        try:
            with self.dojo_factory(theorem, self.timeout) as (dojo, init_state):
                state = self._replay(dojo, init_state, prefix)
                if state is None:
                    self._count("prefix_failed")
                    self.failed_prefixes.add((*(theorem[c] for c in _THEOREM_COLUMNS), prefix))
                    return dict.fromkeys(tactics), uncacheable
                for tactic in tactics:
                    scores[tactic], cacheable = self._score(dojo, state, tactic)
                    if not cacheable:
                        # The session is unusable after a crash; the remaining tactics wait for a
                        # later call (None now) rather than score 0 for a crash they did not cause.
                        uncacheable.add(tactic)
                        break
        except Exception:
            self._count("dojo_failed")
        return {t: scores.get(t) for t in tactics}, uncacheable

    def __call__(
        self, prompts: Any = None, completions: Sequence[Any] = (), **kwargs: Any
    ) -> list[float | None]:
        n = len(completions)
        cols = {
            name: column(kwargs, name, n, self.__name__)
            for name in (*_THEOREM_COLUMNS, "proof_prefix")
        }
        out: list[float | None] = [None] * n
        # Group the work by (theorem, prefix) so that each is opened and replayed once per call.
        pending: dict[tuple[Any, ...], dict[str, list[int]]] = {}
        for i, completion in enumerate(completions):
            tactic = completion_text(completion).strip()
            if not tactic or contains_sorry(tactic):
                self._count("empty" if not tactic else "sorry")
                out[i] = 0.0
                continue
            theorem_key = tuple(str(cols[c][i]) for c in _THEOREM_COLUMNS)
            prefix = tuple(cols["proof_prefix"][i] or ())
            if (*theorem_key, prefix) in self.failed_prefixes:
                self._count("prefix_failed")
                continue
            key = (*theorem_key, prefix, tactic)
            if key in self.cache:
                self._count("cache_hits")
                self.cache.move_to_end(key)
                out[i] = self.cache[key]
                continue
            pending.setdefault((*theorem_key, prefix), {}).setdefault(tactic, []).append(i)
        for group_key, by_tactic in pending.items():
            theorem = dict(zip(_THEOREM_COLUMNS, group_key[:4]))
            prefix = group_key[4]
            scores, uncacheable = self._run_group(theorem, prefix, list(by_tactic))
            for tactic, indices in by_tactic.items():
                score = scores[tactic]
                for i in indices:
                    out[i] = score
                if score is not None and tactic not in uncacheable:
                    self._remember((*group_key, tactic), score)
        return out


REWARDS.add("lean_verified", LeanVerifiedReward)
