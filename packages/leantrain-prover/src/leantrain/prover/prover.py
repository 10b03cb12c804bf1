"""``Prover``: load the models once, then prove theorems one by one with best-first search.

::

    prover = Prover(generator="runs/sft", data="export_dir", backend="replay",
                    output_dir="proofs/")
    summary = prover.evaluate()          # the split of config.data; resumes in output_dir
    result = prover.prove(theorem)       # one theorem (a Theorem or a LeanDojo record)

The backend is built first (so ``--backend repl`` without a REPL, or ``leandojo`` without Lean,
fails before any model loads); the generator, progress model and backend can also be passed in
as objects. Every proof found on a Lean backend is re-checked before it counts
(:meth:`Prover.recheck`).

With a retriever (``retriever``, or the one the generator's prompt.json records) each prompt is
led by the premises accessible from the theorem, retrieved for the state
(:mod:`leantrain.prover.premise_prompts`); the retriever and the corpus index load once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from leantrain.core.config import config_from_dict
from leantrain.core.errors import ConfigError, DataError
from leantrain.core.schemas import Theorem
from leantrain.lean.soundness import Verdict
from leantrain.prover.backend import Backend, BackendError
from leantrain.prover.premise_prompts import (
    PremiseAugmentedGenerator,
    PremiseSettings,
    accepts_premises,
    check_premise_settings,
    model_prompt,
)
from leantrain.prover.prover_config import ProverConfig, finalize
from leantrain.prover.results import ResultStore
from leantrain.prover.search import (
    SearchResult,
    SearchSettings,
    StepsPredictor,
    TacticGenerator,
    best_first_search,
)
from leantrain.prover.shards import attempt_seed, in_shard
from leantrain.prover.summary import summarize
from leantrain.prover.theorems import as_theorem, repository, selected_theorems, theorem_id
from leantrain.tactics.premises import PremiseSource

log = logging.getLogger(__name__)


def make_backend(config: ProverConfig, *, lean_dojo: Any = None, pantograph: Any = None) -> Backend:
    """The backend ``config.backend`` names, built from the config's :class:`LeanArgs` (its
    executable, package or Lean toolchain checked here: one line before any model loads).
    ``kimina`` is refused: the Kimina server checks whole proofs and cannot search."""
    if config.backend == "replay":
        from leantrain.prover.replay import ReplayBackend

        return ReplayBackend()
    if config.backend == "kimina":
        raise ConfigError(
            "--backend kimina checks whole proofs only and cannot run a proof search",
            hint="search with --backend repl or pantograph; re-check the found proofs with "
            "'leantrain verify OUTPUT_DIR/proofs.json --backend kimina --url …'",
        )
    if config.backend == "leandojo":  # LeanDojo opens the theorem records themselves
        from leantrain.lean import LeanDojoBackend

        return LeanDojoBackend(config.tactic_timeout, config.start_timeout, lean_dojo=lean_dojo)
    from leantrain.lean import SEARCH_BACKENDS, build_backend

    inner = build_backend(
        config.backend_or("replay"), config, choices=SEARCH_BACKENDS, pantograph=pantograph
    )
    from leantrain.prover.backend import LeanContractBackend

    return LeanContractBackend(inner, config.lean_project)


def load_generator(
    config: ProverConfig,
    system_prompt: str | None,
    max_premise_chars: int | None,
    **overrides: Any,
) -> TacticGenerator:
    """The tactic generator ``config.generator`` names on ``config.engine``, loaded once (the
    one place a prover, the shared generation service of Ray workers or the whole-proof prover
    builds it); ``overrides``: generator options that differ from the config's (whole proofs:
    always sampled, ``max_proof_tokens`` long)."""
    from leantrain.prover import engines

    if config.engine != "hf" and not config.engine_cache and config.output_dir:
        # the cache goes into the run directory: claimed first, so the results may follow it
        from leantrain.core.output_dir import claim_output_dir
        from leantrain.prover.results import OUTPUT_KIND

        claim_output_dir(config.output_dir, kind=OUTPUT_KIND)
    options: dict[str, Any] = {
        "cache_dir": engine_cache(config),
        "device": config.device,
        "compute_type": config.ct2_compute_type,
        "seed": config.seed,
        "system_prompt": system_prompt,
        "decoding": config.decoding,
        "temperature": config.temperature,
        "max_new_tokens": config.max_new_tokens,
        "batch_size": config.generation_batch_size,
        "max_premise_chars": max_premise_chars,
        "tactic_score": config.tactic_score,
    }
    options.update(overrides)
    return engines.load_generator(config.engine, config.generator, **options)


def check_theorems(backend: Any, theorems: list[Theorem]) -> None:
    """What the backend can say about ``theorems`` before any search (and any model load): an
    untraced repository (``leandojo``: ``check_traced``), statements it cannot read
    (``repl`` / ``pantograph`` without ``--lean-project``: ``check_theorems``). One line."""
    for hook in ("check_traced", "check_theorems"):
        fn = getattr(backend, hook, None)
        if callable(fn):
            fn(theorems)


def _exception_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}"[:500] if text else type(e).__name__


def load_progress(path: str, device: str | None) -> StepsPredictor:
    """A :class:`~leantrain.progress.ProgressPredictor` (needs leantrain-prover[progress])."""
    from leantrain.core.errors import require_package

    require_package(
        "leantrain.progress",
        extra="progress",
        dist="leantrain-prover",
        feature="--progress (progress-guided search)",
    )
    from leantrain.progress import ProgressPredictor

    predictor: StepsPredictor = ProgressPredictor.from_pretrained(path, device=device)
    return predictor


MODEL_ENV = "LEANPROGRESS_MODEL"
"""LeanDojo-v2's variable naming the progress model (leantrain-progress reads it too)."""


def progress_source(flag: str | None) -> str | None:
    """The progress model to use: ``--progress``, else ``$LEANPROGRESS_MODEL`` (LeanDojo-v2's
    variable: set alone, it turns progress scoring on); which one is logged."""
    env = os.environ.get(MODEL_ENV) or None
    if flag:
        if env:  # both: say which one is used
            log.info(
                "progress model: --progress %s (the flag wins over $%s=%s)", flag, MODEL_ENV, env
            )
        return flag
    if env:
        log.info("progress model: $%s=%s (no --progress given)", MODEL_ENV, env)
    return env


def engine_cache(config: ProverConfig) -> Path:
    """Where ``--engine ct2`` / ``vllm`` keep converted models: ``engine_cache``, else
    ``OUTPUT_DIR/engine-cache`` (beside the results), else ``~/.cache/leantrain/engines``."""
    if config.engine_cache:
        return Path(config.engine_cache).expanduser()
    if config.output_dir:
        return Path(config.output_dir) / "engine-cache"
    return Path("~/.cache/leantrain/engines").expanduser()


def traced_record(theorem: Theorem, result: SearchResult) -> dict[str, Any]:
    """The theorem with the found proof as its ``traced_tactics`` (LeanDojo's format); a
    benchmark theorem keeps its ``header``, so ``leantrain verify`` re-checks it as it is."""
    record = {
        k: v
        for k, v in theorem.to_json().items()
        if k
        in (
            "url",
            "commit",
            "file_path",
            "full_name",
            "theorem_statement",
            "header",
            "start",
            "end",
        )
    }
    record["traced_tactics"] = [
        {
            "tactic": s.tactic,
            "annotated_tactic": [s.tactic, []],
            "state_before": s.state_before,
            "state_after": s.state_after,
        }
        for s in result.proof
    ]
    return record


class Prover:
    """Best-first proof search with a tactic generator, an optional progress model and a backend.

    ``config`` is a :class:`ProverConfig`, a dict of its keys, or keys given as keyword
    arguments. ``tactic_generator`` / ``lean_backend`` / ``progress_model`` /
    ``premise_source`` objects replace what the config's ``generator`` / ``backend`` /
    ``progress`` / ``retriever`` name (callers holding a model in memory, tests); otherwise they
    load once, here. With premises, the generator's ``propose`` must take ``premises=``.
    """

    def __init__(
        self,
        config: ProverConfig | Mapping[str, Any] | None = None,
        *,
        tactic_generator: TacticGenerator | None = None,
        lean_backend: Backend | None = None,
        progress_model: StepsPredictor | None = None,
        premise_source: PremiseSource | None = None,
        **settings: Any,
    ) -> None:
        if isinstance(config, ProverConfig):
            if settings:
                raise ConfigError("give a ProverConfig or keyword settings, not both")
            self.config = config
        else:
            self.config = config_from_dict(ProverConfig, {**dict(config or {}), **settings})
        cfg = finalize(self.config)  # the preset's settings; attempts > 1 needs sampling
        if cfg.mode == "whole":
            raise ConfigError(
                "Prover searches tactic by tactic; mode 'whole' is leantrain.prover.whole",
                hint="use WholeProver (leantrain prove --mode whole), or mode 'tactic'",
            )
        parallel = cfg.num_workers > 1
        if parallel:  # no Ray: one line naming the extra, before anything loads
            from leantrain.prover.parallel import require_ray

            require_ray()
        self.given = {
            "lean_backend": lean_backend,
            "progress_model": progress_model,
            "premise_source": premise_source,
            "tactic_generator": tactic_generator,
        }
        """The objects passed in (Ray workers get copies; the others load their own)."""
        self.backend = lean_backend if lean_backend is not None else make_backend(cfg)
        # the prompt: the generator's prompt.json, or the settings given (one-line errors, no
        # model loaded yet), with the retriever checkpoint and its fingerprint
        self.prompt = model_prompt(cfg, model_required=tactic_generator is None)
        self.premise_settings = PremiseSettings.of(self.prompt)
        if premise_source is None:
            self.premise_settings = check_premise_settings(self.premise_settings, cfg)
        store = self.store()
        if store is not None:
            store.check()  # another config in output_dir is refused before any model loads
        uses_premises = premise_source is not None or self.premise_settings.retriever is not None
        if (
            tactic_generator is not None
            and uses_premises
            and not accepts_premises(tactic_generator)
        ):
            raise ConfigError(
                "the tactic generator's propose() takes no premises, but the prompts have "
                "retrieved premises",
                hint="give a generator with propose(states, k, premises=None), or no retriever",
            )
        progress_path = progress_source(cfg.progress)
        if progress_model is None and progress_path and not parallel:
            # before the generator: a missing extra or a bad path fails before the big load
            progress_model = load_progress(progress_path, cfg.device)
        if tactic_generator is None and cfg.generator:  # its files, before torch loads
            from leantrain.llm.model_loading import check_model

            check_model(cfg.generator)
        self.progress = progress_model
        if premise_source is None and self.premise_settings.retriever is not None and not parallel:
            from leantrain.tactics import RetrievedPremises

            premise_source = RetrievedPremises.load(
                self.premise_settings.checkpoint or self.premise_settings.retriever,
                cfg.data,
                self.premise_settings.num_premises,
                device=cfg.device,
                dist="leantrain-prover",
            )
        self.premise_source = premise_source
        if tactic_generator is None:
            if not cfg.generator:
                raise ConfigError("no tactic generator given", hint="pass --generator RUN_OR_MODEL")
            if not parallel:  # with Ray workers the generation service loads it, once
                tactic_generator = load_generator(
                    cfg, self.prompt.system_prompt, self.premise_settings.max_premise_chars
                )
        elif hasattr(tactic_generator, "tactic_score"):
            tactic_generator.tactic_score = cfg.tactic_score
        elif cfg.tactic_score != "sum":
            raise ConfigError(
                f"--tactic-score {cfg.tactic_score}: the tactic generator given has no "
                "tactic_score (it scores tactics by their summed log-probability)",
                hint="give a ChatGenerator (leantrain.prover.generator), or --tactic-score sum",
            )
        self.generator: Any = tactic_generator
        self.startup_s = 0.0
        """The backend's start-up seconds of the last theorem searched."""
        self.settings = SearchSettings(
            num_sampled_tactics=cfg.num_sampled_tactics,
            max_expansions=cfg.max_expansions,
            max_nodes=cfg.max_nodes,
            timeout=cfg.timeout,
            expansion_batch=cfg.expansion_batch,
            depth_exponent=cfg.depth_exponent,
            progress_weight=cfg.progress_weight,
            progress_input=cfg.progress_input,
        )

    @property
    def metric(self) -> str:
        """The name of the proof rate this prover's backend measures."""
        return str(getattr(self.backend, "metric", "proof rate"))

    def search(self, theorem: Theorem | Mapping[str, Any]) -> SearchResult:
        """Best-first search on one theorem; a theorem the backend cannot start is
        ``init_failed`` with the reason in ``error``; any exception of the backend or the
        generator ends it as ``error`` naming the exception's class (the run goes on)."""
        theorem = as_theorem(theorem)
        start = time.monotonic()
        try:
            session = self.backend.start(theorem)
        except BackendError as e:
            self.startup_s = time.monotonic() - start
            return SearchResult("init_failed", nodes=0, error=e.one_line())
        except Exception as e:  # LeanDojo's asserts, an OOM: this theorem only
            self.startup_s = time.monotonic() - start
            return SearchResult("error", nodes=0, error=_exception_line(e))
        self.startup_s = time.monotonic() - start  # the ledger's start-up seconds
        searched = time.monotonic()
        generator: TacticGenerator = self.generator
        if self.premise_source is not None:
            generator = PremiseAugmentedGenerator(self.generator, self.premise_source, theorem)
        inner: Any = self.generator
        timed = self.settings.timeout is not None and hasattr(inner, "deadline")
        if timed:  # generation itself stops at the theorem's timeout (HFGenerator)
            inner.deadline = time.monotonic() + float(self.settings.timeout or 0)
        try:
            result = best_first_search(session, generator, self.settings, progress=self.progress)
        except Exception as e:  # a CUDA OOM, a backend's bug: this theorem is an error row
            result = SearchResult(
                "error", time_s=time.monotonic() - searched, error=_exception_line(e)
            )
        finally:
            if timed:
                inner.deadline = None
            with contextlib.suppress(Exception):  # a dead process: nothing left to release
                session.close()
        if result.status == "crashed":  # the backend died and could not be restarted
            result.status = "error"
        return result

    def recheck(self, theorem: Theorem, proof: str) -> Verdict | None:
        """The whole-theorem re-check of a found proof in a fresh environment
        (:func:`leantrain.lean.check_proof`); ``None`` under ``replay``, whose proofs are the
        traced ones and are not re-checked. A backend that cannot check is a rejection."""
        from leantrain.lean import Verdict, check_proof

        backend: Any = self.backend
        if backend.name == "replay":
            return None
        if not callable(getattr(backend, "check", None)):
            return Verdict("rejected", f"the {backend.name} backend cannot re-check a proof")
        target: Any = theorem
        to_lean = getattr(backend, "lean_theorem", None)
        if callable(to_lean):  # check with the statement Lean was asked about
            target, backend = to_lean(theorem), backend.inner
        try:
            return check_proof(backend, target, proof, self.config.allowed_axioms)
        except Exception as e:
            return Verdict("error", f"the re-check failed: {_exception_line(e)}")

    def reseed(self, theorem: Theorem, attempt: int) -> None:
        """Seed sampling for one attempt from (``seed``, theorem id, ``attempt``) with a stable
        hash, so an attempt draws the same tactics in a resumed run as in an unbroken one. A
        generator with its own ``reseed(seed)`` (an engine seeding per request) is told too."""
        if self.config.decoding != "sample":
            return
        import torch

        seed = attempt_seed(self.config.seed, theorem_id(theorem), attempt)
        torch.manual_seed(seed)
        hook = getattr(self.generator, "reseed", None)
        if callable(hook):
            hook(seed)

    def prove(
        self, theorem: Theorem | Mapping[str, Any], split: str = "", attempt: int = 0
    ) -> dict[str, Any]:
        """Prove one theorem (its ``attempt``-th independent search); its result row:
        ``proved``, ``proof`` (tactics), ``status``, ``attempt``, ``expansions`` (states whose
        tactics all ran), ``tactics_tried``, ``nodes``, ``error``, ``checked`` (the proof passed
        the whole-theorem re-check), ``axioms`` (those it uses), ``tactics_cut_off`` (generated
        tactics dropped unfinished), ``traced`` (the theorem with the proof as
        ``traced_tactics``, ``None`` when not proved), ``negatives`` (the failed tactics of the
        expanded states: ``state``, ``tactic``, ``error``, ``logprob``) and its budget ledger:
        ``wall_s`` (all of it) = ``startup_s`` (the backend starting the theorem) + ``time_s``
        (the search: ``generator_time_s`` + ``backend_time_s`` + bookkeeping) + ``recheck_s``;
        ``lean_calls`` (the start, each tactic run, the re-check) and ``tokens_generated``
        (when the generator counts them).

        Sound by construction: a proof the search found counts only when the re-check in a
        fresh environment passes (:meth:`recheck`); otherwise the row is ``rejected`` with the
        reason in ``error``, and the proof does not enter ``proofs.json``. Under ``replay`` the
        traced proofs count unchecked (``checked`` is false)."""
        if self.generator is None:
            raise ConfigError(
                "this prover's generator is the Ray workers' shared one (num_workers > 1): "
                "only evaluate() runs searches",
                hint="prove one theorem with a Prover of num_workers=1",
            )
        theorem = as_theorem(theorem)
        began = time.monotonic()
        self.reseed(theorem, attempt)
        cut_before = int(getattr(self.generator, "unfinished", 0))
        tokens_before = int(getattr(self.generator, "tokens_generated", 0))
        result = self.search(theorem)
        cut_off = int(getattr(self.generator, "unfinished", 0)) - cut_before
        tokens = int(getattr(self.generator, "tokens_generated", 0)) - tokens_before
        verdict = None
        rechecked = time.monotonic()
        if result.proved:
            verdict = self.recheck(theorem, "\n".join(s.tactic for s in result.proof))
            if verdict is not None and not verdict.proved:
                result.status = "rejected"
                result.error = f"{verdict.status}: {verdict.reason}"
        recheck_s = time.monotonic() - rechecked
        return {
            "id": theorem_id(theorem),
            "full_name": theorem.full_name,
            "file_path": theorem.file_path,
            "repository": repository(theorem),
            "split": split,
            "attempt": attempt,
            "backend": self.backend.name,
            "proved": result.proved,
            "status": result.status,
            "proof": [s.tactic for s in result.proof],
            "expansions": result.expansions,
            "tactics_tried": result.tactics_tried,
            "nodes": result.nodes,
            "time_s": round(result.time_s, 4),
            "generator_time_s": round(result.generator_time_s, 4),
            "backend_time_s": round(result.backend_time_s, 4),
            "error": result.error,
            "checked": verdict is not None and verdict.proved,
            "axioms": None if verdict is None or verdict.axioms is None else list(verdict.axioms),
            "tactics_cut_off": cut_off,
            "wall_s": round(time.monotonic() - began, 4),
            "startup_s": round(self.startup_s, 4),
            "recheck_s": round(recheck_s, 4),
            "lean_calls": int(result.status != "init_failed")
            + result.tactics_tried
            + int(verdict is not None),
            "tokens_generated": tokens,
            "trace": [{k: round(v, 4) for k, v in node.items()} for node in result.trace],
            "traced": traced_record(theorem, result) if result.proved else None,
            "negatives": [dataclasses.asdict(n) for n in result.negatives],
        }

    def load_theorems(self) -> list[Theorem]:
        """The theorems the config selects (``data``, ``split``, ``theorems``, ``max_theorems``)."""
        return selected_theorems(self.config)

    def store(self) -> ResultStore | None:
        """The result store of ``config.output_dir`` (``None`` without one); not yet opened."""
        if not self.config.output_dir:
            return None
        from leantrain.prover.prover_config import tracked_defaults

        return ResultStore(
            self.config.output_dir,
            self.tracked(),
            self.metric,
            tracked_defaults(),
            attempts=self.config.attempts,
        )

    def tracked(self) -> dict[str, Any]:
        """What ``prover_config.json`` records and a resume must share: the config's tracked
        settings with the effective premise settings (also those taken from the generator's
        run: the retriever, its checkpoint and fingerprint, ``num_premises``,
        ``max_premise_chars``; see :meth:`PremiseSettings.record`)."""
        return {**self.config.tracked(), **self.premise_settings.record(self.config)}

    def evaluate(
        self,
        theorems: Iterable[Theorem | Mapping[str, Any]] | None = None,
        *,
        split: str | None = None,
        show_progress: bool | None = None,
    ) -> dict[str, Any]:
        """Prove ``theorems`` (default: :meth:`load_theorems`; those of ``config.shard``),
        ``config.attempts`` searches each, and return the summary. With ``config.num_workers``
        over 1 the searches run on Ray actors sharing one generator
        (:mod:`leantrain.prover.parallel`).

        With ``config.output_dir`` every result is appended to ``results.jsonl`` as it ends and
        searches already there are skipped, so a killed run continues where it stopped.
        """
        cfg = self.config
        split = cfg.split if split is None else split
        todo = [as_theorem(t) for t in (self.load_theorems() if theorems is None else theorems)]
        todo = [t for t in todo if in_shard(theorem_id(t), cfg.shard)]
        if not todo:
            where = f" in shard {cfg.shard}" if cfg.shard else ""
            raise DataError(
                None, f"no theorems to prove{where}", hint="check --data, --split, --theorems"
            )
        check_theorems(self.backend, todo)
        store = self.store()
        done = store.open() if store is not None else set()
        rows = list(store.rows) if store is not None else []
        pending = [
            (theorem, attempt)
            for theorem in todo
            for attempt in range(cfg.attempts)
            if (theorem_id(theorem), attempt) not in done
        ]
        show = cfg.progress_bar if show_progress is None else show_progress
        from tqdm.auto import tqdm

        bar = tqdm(total=len(pending), desc="proving", unit="search", disable=not show)

        def record(row: dict[str, Any]) -> None:
            if store is not None:
                store.add(row)  # the negatives go to negatives.jsonl, not into memory
                row = {k: v for k, v in row.items() if k != "negatives"}
            rows.append(row)
            proved = len({r["id"] for r in rows if r["proved"]})
            bar.update(1)
            bar.set_postfix_str(f"{self.metric} {proved}/{len({r['id'] for r in rows})}")

        extra: dict[str, Any] = {}
        if cfg.num_workers > 1 and pending:
            from leantrain.prover.parallel import prove_parallel

            extra = {"generation_service": prove_parallel(self, pending, split, record)}
            if store is not None:
                store.extra.update(extra)
        else:
            for theorem, attempt in pending:
                record(self.prove(theorem, split, attempt))
        bar.close()
        if store is not None:
            store.write_summary()
            store.write_proofs()
        wanted = {theorem_id(t) for t in todo}
        summary = summarize([r for r in rows if r["id"] in wanted], self.metric, cfg.attempts)
        return {**summary, **extra}
