"""Parallel provers on Ray (``--num-workers N``, needs ``leantrain-prover[ray]``).

As ReProver's evaluation does it: N prover actors, each with its own Lean backend session,
take the searches (theorem, attempt) from a Ray ``ActorPool``; the driver writes each result
row as it comes back (so the kill-safe resume of :class:`~leantrain.prover.results.ResultStore`
holds, per worker), and one **generation service** actor holds the one tactic generator: the
states that all workers ask about at about the same time go to the generator in one call (one
model in memory, not one per worker). The service waits at most :data:`GATHER_S` for the other
workers to ask before it calls the generator, and requests that arrive while it generates join
the next call. Its batch fill (states per call over the most a call can get, workers ×
``expansion_batch``) is reported.

Objects passed to :class:`~leantrain.prover.Prover` (a backend, a generator, a progress model,
a premise source) are copied to the actors; otherwise each worker builds its backend and loads
its progress model and retriever from the config, and the service loads the generator
(:func:`~leantrain.prover.prover.load_generator`). Ray runs on ``--ray-address`` or on a local
instance started here (and stopped at the end); one worker (the default) never imports Ray.

A generator call runs at most until the latest timeout of the theorems whose states it holds.
Under ``--decoding sample`` the shared generator draws for several workers' states in one call,
so the per-attempt seeds are exact with one worker only.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

GATHER_S = 0.005
"""How long the generation service waits for the other workers' states before it generates."""


def require_ray() -> None:
    """One line naming the extra when Ray is not installed."""
    from leantrain.core.errors import require_package

    require_package(
        "ray", extra="ray", dist="leantrain-prover", feature="--num-workers over 1 (provers on Ray)"
    )


class GenerationService:
    """The one generator of all workers (a Ray actor): :meth:`propose` gathers the workers'
    requests into one generator call and returns each its own proposals, with the tokens it
    generated and the candidates cut off for it."""

    def __init__(self, generator: Any, loader: Callable[[], Any] | None, workers: int) -> None:
        self.generator: Any = generator if generator is not None else loader() if loader else None
        self.workers = workers
        self.queue: list[tuple[list[str], int, Any, asyncio.Future[Any], float | None]] = []
        self.flushing = False
        self.calls = self.states = self.requests = 0

    async def propose(
        self,
        states: Sequence[str],
        k: int,
        premises: Sequence[Sequence[str]] | None = None,
        seconds_left: float | None = None,
    ) -> tuple[list[list[tuple[str, float]]], int, int]:
        """``states``' proposals (as the generator's ``propose``), tokens generated, and
        candidates cut off; ``seconds_left`` of the asking worker's theorem bound the call."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        deadline = None if seconds_left is None else time.monotonic() + seconds_left
        self.queue.append((list(states), k, premises, future, deadline))
        if not self.flushing:
            self.flushing = True
            asyncio.get_running_loop().create_task(self._flush())
        result: tuple[list[list[tuple[str, float]]], int, int] = await future
        return result

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.queue:
                waited = loop.time() + GATHER_S
                while len(self.queue) < self.workers and loop.time() < waited:
                    await asyncio.sleep(0.0005)
                batch, self.queue = self.queue, []
                for k in sorted({item[1] for item in batch}):
                    group = [item for item in batch if item[1] == k]
                    try:
                        answers = await loop.run_in_executor(None, self._generate, group, k)
                    except Exception as e:  # each waiting worker gets the error
                        for item in group:
                            item[3].set_exception(e)
                        continue
                    for item, answer in zip(group, answers):
                        item[3].set_result(answer)
        finally:
            self.flushing = False

    def _generate(self, group: list[Any], k: int) -> list[tuple[Any, int, int]]:
        """One generator call for every state of ``group``; each request's share."""
        states = [s for item in group for s in item[0]]
        kw: dict[str, Any] = {}
        if any(item[2] is not None for item in group):
            kw["premises"] = [
                p for states_i, _, prem, *_ in group for p in (prem or [[]] * len(states_i))
            ]
        gen = self.generator
        if hasattr(gen, "deadline"):  # the call stops at the latest of the askers' timeouts
            deadlines = [item[4] for item in group]
            gen.deadline = None if None in deadlines else max(deadlines)
        if callable(getattr(gen, "candidates", None)):  # finish reasons: cut-offs per state
            rows = gen.candidates(states, k, **kw)
            proposals = [[(t, lp) for t, lp, why in row if why == "stop"] for row in rows]
            cut = [len(row) - len(kept) for row, kept in zip(rows, proposals)]
        else:
            proposals = gen.propose(states, k, **kw)
            cut = [0] * len(states)
        tokens = list(getattr(gen, "last_tokens", []) or [])
        tokens = tokens if len(tokens) == len(states) else [0] * len(states)
        self.calls += 1
        self.states += len(states)
        self.requests += len(group)
        out, at = [], 0
        for item in group:
            n = len(item[0])
            out.append((proposals[at : at + n], sum(tokens[at : at + n]), sum(cut[at : at + n])))
            at += n
        return out

    def stats(self) -> dict[str, float]:
        """Generator calls, states and worker requests served, and states per call."""
        return {
            "generator_calls": self.calls,
            "states": self.states,
            "requests": self.requests,
            "states_per_call": self.states / self.calls if self.calls else 0.0,
        }


class RemoteGenerator:
    """A worker's generator: asks the generation service, and counts what it was charged."""

    def __init__(self, service: Any) -> None:
        self.service = service
        self.tokens_generated = 0
        self.unfinished = 0
        self.deadline: float | None = None
        """Set by the prover per theorem (as on ``HFGenerator``); sent as seconds left."""

    def propose(
        self, states: Sequence[str], k: int, premises: Sequence[Sequence[str]] | None = None
    ) -> list[list[tuple[str, float]]]:
        """The service's proposals for ``states``."""
        import ray

        left = None if self.deadline is None else max(self.deadline - time.monotonic(), 0.0)
        proposals, tokens, cut = ray.get(self.service.propose.remote(states, k, premises, left))
        self.tokens_generated += tokens
        self.unfinished += cut
        return list(proposals)


class ProverWorker:
    """A prover actor: its own :class:`~leantrain.prover.Prover` (its own backend session)
    over the shared generation service."""

    def __init__(self, config: dict[str, Any], given: dict[str, Any], service: Any) -> None:
        from leantrain.prover.prover import Prover

        # the preset is applied already: the values stand as given
        config = {**config, "num_workers": 1, "output_dir": "", "progress_bar": False}
        config["preset"] = None
        given = {k: v for k, v in given.items() if k != "tactic_generator"}
        self.prover = Prover(config, tactic_generator=RemoteGenerator(service), **given)

    def ready(self) -> bool:
        """True once the worker is built (its backend, and the service it asks)."""
        return True

    def prove(self, theorem: dict[str, Any], split: str, attempt: int) -> dict[str, Any]:
        """One search's result row."""
        return self.prover.prove(theorem, split, attempt)


def prove_parallel(
    prover: Any,
    pending: list[tuple[Any, int]],
    split: str,
    record: Callable[[dict[str, Any]], None],
) -> dict[str, Any]:
    """Run ``pending`` (theorem, attempt) searches on ``prover.config.num_workers`` Ray actors;
    ``record`` each row as it comes back. The generation service's statistics, with its
    ``batch_fill``, the run's ``startup_s`` (Ray, the service with its generator, the workers
    with their backends) and ``proving_s`` (from then to the last row)."""
    require_ray()
    import ray
    from leantrain.core.config import config_to_dict
    from leantrain.prover.prover import load_generator
    from ray.util import ActorPool

    cfg = prover.config
    workers = cfg.num_workers
    began = time.monotonic()
    started = not ray.is_initialized()
    if started:
        local = {} if cfg.ray_address else {"num_cpus": max(workers, os.cpu_count() or 1)}
        ray.init(
            address=cfg.ray_address,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            **local,
        )
    try:
        loader = None
        if prover.given["tactic_generator"] is None:
            system_prompt = prover.prompt.system_prompt
            chars = prover.premise_settings.max_premise_chars

            def loader() -> Any:
                return load_generator(cfg, system_prompt, chars)

        service: Any = (
            ray.remote(GenerationService)
            .options(num_cpus=0, max_concurrency=1000)
            .remote(prover.given["tactic_generator"], loader, workers)
        )
        settings = config_to_dict(cfg)
        actors: list[Any] = [
            ray.remote(ProverWorker).options(num_cpus=1).remote(settings, prover.given, service)
            for _ in range(min(workers, len(pending)))
        ]
        ray.get([service.stats.remote(), *(a.ready.remote() for a in actors)])
        proving = time.monotonic()
        pool = ActorPool(actors)
        work = [(t.to_json(), split, attempt) for t, attempt in pending]
        for row in pool.map_unordered(lambda a, w: a.prove.remote(*w), work):
            record(row)
        stats: dict[str, Any] = dict(ray.get(service.stats.remote()))
        most = workers * cfg.expansion_batch
        stats["batch_fill"] = stats["states_per_call"] / most if most else 0.0
        stats["workers"] = workers
        stats["startup_s"] = round(proving - began, 4)
        stats["proving_s"] = round(time.monotonic() - proving, 4)
        return stats
    finally:
        if started:
            ray.shutdown()
