"""The ``lean`` reward: Lean judges the completion, through leantrain-lean's one contract.

Any backend of :mod:`leantrain.lean` answers (``backend``: ``repl`` — the default —,
``pantograph``, ``leandojo``, ``kimina``), built from :class:`leantrain.lean.LeanArgs`
(``repl_command``, ``lean_project``, ``url``, timeouts, ``memory_limit_mb``,
``allowed_axioms``). Two levels:

``tactic`` (default)
    The completion is one tactic for the row's state. The theorem (``url``, ``commit``,
    ``file_path``, ``full_name`` columns; its statement read from ``lean_project``, or the
    row's ``formal_statement`` and ``header``) is started, the ``proof_prefix`` replayed, and
    the tactic run: **+reward** when it runs and changes the state, or finishes the proof — and
    then the whole proof (prefix + tactic) passes the re-check of
    :func:`leantrain.lean.check_proof` (same soundness rules as the prover); **0** for a Lean
    error, an unchanged state, a timeout, a tactic the soundness screen refuses (``sorry``,
    ``axiom``, ``exact?``…; never sent to Lean) or an empty completion; ``None``
    (unscorable, TRL ignores it) when the prefix does not replay or the theorem cannot be
    started. Needs a backend that runs tactics (not ``kimina``).
``proof``
    The completion is a whole proof of the row's theorem: **+reward** when
    :func:`~leantrain.lean.check_proof` says ``proved`` (no error, no sorry, only allowed
    axioms), **0** when it is rejected or times out, ``None`` when the backend failed.
    Batched on ``kimina``.
``whole``
    As ``proof``, for the replies of ``--mode whole`` prompts (:mod:`leantrain.tactics.
    whole_proof`): the proof is read out of the reply (:func:`~leantrain.tactics.whole_proof.
    extract_proof`: a code fence or a repeated statement dropped) and checked as the tactic
    script Lean's check takes (``by`` dropped, a term as ``exact``); no proof is **0**. With
    ``backend`` ``replay`` (offline, no Lean) only the row's ``reference`` proof counts
    (whitespace normalised): a lower bound, every other proof scores 0.

Results are cached by (theorem, prefix, completion). The backend is built with the reward (a
missing REPL, package or toolchain is one line then, before any model loads; a REPL process
starts on the first call); ``lean_backend=`` gives one. ``stats`` counts the outcomes.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from leantrain.core.errors import ConfigError
from leantrain.core.lean_text import normalize_whitespace
from leantrain.core.registry import REWARDS
from leantrain.lean.args import LEAN_BACKENDS, SEARCH_BACKENDS, LeanArgs, build_backend
from leantrain.lean.contract import BackendError, LeanTheorem, SessionCrashed
from leantrain.lean.soundness import DEFAULT_ALLOWED_AXIOMS, check_proof, judge, screen_proof
from leantrain.llm.rewards.columns import column
from leantrain.llm.rewards.validation import completion_text

LEVELS = ("tactic", "proof", "whole")
_IDENTITY = ("url", "commit", "file_path", "full_name")


def _declaration_start(source: str, short_name: str) -> list[int] | None:
    """``[line, 1]`` of ``theorem|lemma NAME`` in a Lean file's text (RL rows carry the
    theorem's name, not its position)."""
    pattern = re.compile(
        rf"^(?P<indent>\s*)(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*"
        rf"(?:theorem|lemma)\s+{re.escape(short_name)}(?![\w'.])",
        re.MULTILINE,
    )
    m = pattern.search(source)
    if m is None:
        return None
    line = source.count("\n", 0, m.start()) + 1
    return [line, len(m.group("indent").split("\n")[-1]) + 1]


class LeanReward:
    """Reward completions that Lean accepts (see the module docstring).

    ``backend``/``level`` choose the backend and the level; ``repl_command``, ``lean_project``,
    ``url``, ``tactic_timeout``, ``start_timeout``, ``memory_limit_mb`` and ``allowed_axioms``
    are :class:`leantrain.lean.LeanArgs`; ``lean_backend`` is a ready backend (tests, a
    shared server); ``reward`` the score of an accepted completion; ``cache_size`` bounds the
    cache. ``timeout`` is the old ``lean_verified`` name of ``tactic_timeout``."""

    def __init__(
        self,
        *,
        backend: str = "repl",
        level: str = "tactic",
        repl_command: str | None = None,
        lean_project: str | None = None,
        url: str | None = None,
        tactic_timeout: float | None = None,
        start_timeout: float | None = None,
        memory_limit_mb: int | None = None,
        allowed_axioms: Sequence[str] = DEFAULT_ALLOWED_AXIOMS,
        reward: float = 1.0,
        cache_size: int = 100_000,
        lean_backend: Any = None,
        timeout: float | None = None,
        lean_dojo: Any = None,
    ) -> None:
        offline = backend == "replay" and level == "whole"  # the traced proof only, no Lean
        if backend not in LEAN_BACKENDS and not offline:
            raise ConfigError(
                f"lean reward: --lean-backend '{backend}' is not a Lean backend",
                hint=f"choose one of: {', '.join(LEAN_BACKENDS)}",
            )
        if level not in LEVELS:
            raise ConfigError(
                f"lean reward: --lean-level '{level}' is unknown",
                hint="choose tactic or proof (or whole: the proof in a --mode whole reply)",
            )
        if level == "tactic" and backend not in SEARCH_BACKENDS and lean_backend is None:
            raise ConfigError(
                f"lean reward: the {backend} backend checks whole proofs only, not tactics",
                hint="use --lean-level proof with it, or --lean-backend repl for tactics",
            )
        if cache_size < 0:
            raise ConfigError(f"lean reward: cache_size must be >= 0, got {cache_size}")
        defaults = LeanArgs()
        self.args = LeanArgs(
            repl_command=repl_command or defaults.repl_command,
            lean_project=lean_project,
            url=url or defaults.url,
            tactic_timeout=tactic_timeout or timeout or defaults.tactic_timeout,
            start_timeout=start_timeout or defaults.start_timeout,
            memory_limit_mb=memory_limit_mb,
            allowed_axioms=list(allowed_axioms),
        )
        self.backend_name, self.level = backend, level
        self.reward = float(reward)
        self.cache_size = cache_size
        self._sources: Any = None
        # built now: a missing REPL, package or Lean is one line before any model loads
        self._backend = (
            lean_backend
            if lean_backend is not None or offline
            else build_backend(backend, self.args, flag="--lean-backend", lean_dojo=lean_dojo)
        )
        self.cache: OrderedDict[tuple[Any, ...], float | None] = OrderedDict()
        self.stats: dict[str, int] = {}
        self.__name__ = "lean"

    # -- bookkeeping ------------------------------------------------------------------------
    def _count(self, key: str) -> None:
        self.stats[key] = self.stats.get(key, 0) + 1

    def _remember(self, key: tuple[Any, ...], value: float | None) -> None:
        if self.cache_size == 0 or value is None:
            return
        self.cache[key] = value
        self.cache.move_to_end(key)
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)

    @property
    def backend(self) -> Any:
        """The Lean backend."""
        return self._backend

    def close(self) -> None:
        """Close the backend (a REPL process, a server connection; none offline)."""
        if self._backend is not None:
            self._backend.close()

    # -- the theorem of a row ---------------------------------------------------------------
    def _theorem(self, row: dict[str, Any]) -> Any:
        """What the backend starts for ``row``: LeanDojo's record, or a :class:`LeanTheorem`
        (from ``formal_statement``/``header``, else read from ``lean_project``)."""
        if self.backend_name == "leandojo" and row.get("full_name"):
            return SimpleNamespace(**{k: row.get(k) for k in _IDENTITY})
        statement = row.get("formal_statement")
        if statement:
            return LeanTheorem.parse(
                str(statement), str(row.get("header") or ""), name=row.get("full_name") or None
            )
        if not self.args.lean_project:
            raise BackendError(
                "the lean reward reads a theorem's statement from the Lean project, and none "
                "is given",
                hint="pass --lean-project DIR (the traced repository), or rows with "
                "formal_statement",
            )
        from leantrain.lean import ProjectSources

        if self._sources is None:
            self._sources = ProjectSources(self.args.lean_project)
        name = str(row.get("full_name") or "")
        record = SimpleNamespace(file_path=row.get("file_path"), full_name=name, start=None)
        start = row.get("start")
        if not start:
            try:
                text = (self._sources.root / str(record.file_path)).read_text(encoding="utf-8")
            except OSError as e:
                raise BackendError(f"{record.file_path}: cannot read it ({e.strerror})") from None
            start = _declaration_start(text, name.rsplit(".", 1)[-1])
            if start is None:
                raise BackendError(f"{record.file_path}: no theorem named {name}")
        record.start = start
        try:
            return self._sources.theorem(record)
        except ValueError as e:
            raise BackendError(str(e)) from None

    # -- scoring ----------------------------------------------------------------------------
    def _verdict_score(self, theorem: Any, proof: str) -> float | None:
        verdict = check_proof(self.backend, theorem, proof, self.args.allowed_axioms)
        if verdict.proved:
            self._count("proved")
            return self.reward
        if verdict.status == "error":
            self._count("check_failed")
            return None
        self._count("rejected" if verdict.status == "rejected" else "timeout")
        return 0.0

    def _score_group(
        self, row: dict[str, Any], prefix: tuple[str, ...], tactics: list[str]
    ) -> dict[str, float | None]:
        """Score distinct ``tactics`` of one theorem after ``prefix`` in one session."""
        try:
            theorem = self._theorem(row)
            session = self.backend.start(theorem)
        except (BackendError, ValueError) as e:
            self._count("start_failed")
            self.last_error = str(e)
            return dict.fromkeys(tactics)
        scores: dict[str, float | None] = {}
        try:
            state = session.initial_state
            for tactic in prefix:
                out = session.run(state, tactic)
                if out.kind != "state" or out.state is None:
                    self._count("prefix_failed")
                    return dict.fromkeys(tactics)
                state = out.state
            for tactic in tactics:
                out = session.run(state, tactic)
                if out.kind == "proved":
                    scores[tactic] = self._verdict_score(theorem, "\n".join((*prefix, tactic)))
                elif out.kind == "state" and out.state is not None and out.state.pp != state.pp:
                    self._count("accepted")
                    scores[tactic] = self.reward
                else:
                    self._count("no_progress" if out.kind == "state" else out.kind)
                    scores[tactic] = 0.0
        except SessionCrashed:
            self._count("crash")  # the rest wait for a later call rather than score 0
        finally:
            session.close()
        return {t: scores.get(t) for t in tactics}

    def _score_proofs(self, items: list[tuple[dict[str, Any], str]]) -> list[float | None]:
        out: list[float | None] = []
        theorems: list[Any] = []
        for row, _ in items:
            try:
                theorems.append(self._theorem(row))
            except (BackendError, ValueError) as e:
                self._count("start_failed")
                self.last_error = str(e)
                theorems.append(None)
        todo = [i for i, t in enumerate(theorems) if t is not None]
        check_many = getattr(self.backend, "check_many", None)
        if callable(check_many) and todo:  # Kimina: one batch
            results = check_many([(theorems[i], items[i][1]) for i in todo])
            by_index = dict(zip(todo, results))
        else:
            by_index = {}
        for i, (_row, proof) in enumerate(items):
            theorem = theorems[i]
            if theorem is None:
                out.append(None)
            elif i in by_index:
                name = getattr(theorem, "name", "")
                verdict = judge(by_index[i], name, self.args.allowed_axioms)
                self._count(verdict.status)
                out.append(
                    self.reward if verdict.proved else None if verdict.status == "error" else 0.0
                )
            else:
                out.append(self._verdict_score(theorem, proof))
        return out

    def __call__(
        self, prompts: Any = None, completions: Sequence[Any] = (), **kwargs: Any
    ) -> list[float | None]:
        n = len(completions)

        def col(name: str, required: bool = False) -> list[Any]:
            if required or name in kwargs:
                return list(column(kwargs, name, n, self.__name__))
            return [None] * n

        statement_rows = "formal_statement" in kwargs
        cols = {
            "full_name": col("full_name", required=not statement_rows),
            **{k: col(k) for k in ("url", "commit", "file_path", "start", "header")},
            "formal_statement": col("formal_statement"),
        }
        rows = [{k: v[i] for k, v in cols.items()} for i in range(n)]
        prefixes = col("proof_prefix") if self.level == "tactic" else [None] * n
        offline = self._backend is None  # replay at level whole: the reference proof only
        refs = col("reference", required=True) if offline else [None] * n
        out: list[float | None] = [None] * n
        pending: dict[tuple[Any, ...], dict[str, list[int]]] = {}
        proofs: list[tuple[int, tuple[Any, ...]]] = []
        for i, completion in enumerate(completions):
            text = completion_text(completion).strip()
            if self.level == "whole":
                text = whole_script(text)
            if not text:
                self._count("empty")
                out[i] = 0.0
                continue
            if screen_proof(text) is not None:
                self._count("refused")
                out[i] = 0.0
                continue
            if offline:
                same = normalize_whitespace(text) == normalize_whitespace(whole_script(refs[i]))
                self._count("proved" if same else "rejected")
                out[i] = self.reward if same else 0.0
                continue
            theorem_key = tuple(str(rows[i][k]) for k in (*_IDENTITY, "formal_statement"))
            prefix = tuple(prefixes[i] or ())
            key = (*theorem_key, prefix, text)
            if key in self.cache:
                self._count("cache_hits")
                self.cache.move_to_end(key)
                out[i] = self.cache[key]
                continue
            if self.level != "tactic":
                proofs.append((i, key))
            else:
                pending.setdefault((*theorem_key, prefix), {}).setdefault(text, []).append(i)
        if proofs:
            scores = self._score_proofs([(rows[i], str(key[-1])) for i, key in proofs])
            for (i, key), score in zip(proofs, scores):
                out[i] = score
                self._remember(key, score)
        for group_key, by_text in pending.items():
            first = by_text[next(iter(by_text))][0]
            group_scores = self._score_group(rows[first], group_key[-1], list(by_text))
            for text, indices in by_text.items():
                for i in indices:
                    out[i] = group_scores[text]
                self._remember((*group_key, text), group_scores[text])
        return out


def whole_script(reply: Any) -> str:
    """The tactic script of the proof in a whole-proof reply (``""`` when it holds none)."""
    from leantrain.tactics.whole_proof import extract_proof, proof_script

    proof = extract_proof(str(reply or ""))
    return proof_script(proof) if proof else ""


REWARDS.add("lean", LeanReward)
REWARDS.add("lean_verified", LeanReward)  # the old name (LeanDojo's Dojo): see PORTING.md
