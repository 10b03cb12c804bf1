"""Baselines: what each trained model of a pipeline run is measured against.

After the lifelong run, on the merged test split of each step (the split the summary shows):

* the generator (``sft``, ``grpo``): the **untrained generator** — the configured base model
  before any step (saved once as ``<run_dir>/baselines/generator``), evaluated with each
  trainer's own evaluation settings (eval loss, top-k accuracy);
* ``retrieval``: the **untrained encoder**, initialised as step 0's (BM25 is measured beside the trained model already:
  its ``bm25_`` keys);
* ``progress``: the **median predictor** (the median steps remaining of the step's training
  rows, predicted for every row);
* ``prove``: the **untrained generator's** proof rate (no progress model), proved under
  ``<run_dir>/baselines/prove``.

Each cell is recorded in the run manifest as it is computed
(``metrics["baselines"][trainer][index]``), so a killed run resumes with the cells left and a
finished run never computes them again; the report reads them from there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_directory
from leantrain.core.errors import LeanTrainError
from leantrain.core.manifest import RunManifest

BASELINES = "baselines"
"""The key of the baselines in the run manifest's ``metrics``."""
GENERATORS = ("sft", "grpo")
LABELS = {
    "sft": "untrained",
    "grpo": "untrained",
    "retrieval": "untrained",
    "progress": "median",
    "prove": "untrained",
}
"""How each trainer's baseline is named in the summary (beside BM25 for the retriever)."""

Evaluate = Callable[[Path, str], dict[str, Any]]


def _generator_dir(cfg: Any, run_dir: Path) -> Path:
    """The untrained generator, saved once: the base model of the run's first generator."""
    from leantrain.pipeline.pipeline import build_trainer

    out = run_dir / BASELINES / "generator"
    if not out.is_dir():  # written whole or not at all
        base = next(t for t in (*GENERATORS, cfg.prove_generator) if t in cfg.trainers)
        with atomic_directory(out) as tmp:
            build_trainer(base, getattr(cfg, base), cfg).save(tmp)
    return out


def _generator(name: str, cfg: Any, run_dir: Path) -> Evaluate:
    from leantrain.pipeline.pipeline import build_trainer

    trainer = build_trainer(name, getattr(cfg, name), cfg)
    trainer.load(_generator_dir(cfg, run_dir))
    return trainer.evaluate


def _retrieval(cfg: Any, run_dir: Path) -> Evaluate:
    import lightning as L
    from leantrain.pipeline.pipeline import build_trainer

    trainer = build_trainer("retrieval", cfg.retrieval, cfg)
    L.seed_everything(cfg.retrieval.seed, verbose=False)  # as step 0 seeds it: the same start
    trainer.retriever = trainer._start_model(None)  # the configured encoder, untrained

    def evaluate(data: Path, split: str) -> dict[str, Any]:
        return {k: v for k, v in trainer.evaluate(data, split).items() if "bm25_" not in k}

    return evaluate


def _progress(cfg: Any, run_dir: Path) -> Evaluate:
    import statistics

    from leantrain.pipeline.pipeline import build_trainer
    from leantrain.progress.metrics import regression_metrics

    trainer = build_trainer("progress", cfg.progress, cfg)

    def evaluate(data: Path, split: str) -> dict[str, Any]:
        median = float(statistics.median(r["steps_remaining"] for r in trainer.load_rows(data)))
        labels = [r["steps_remaining"] for r in trainer.load_rows(data, split)]
        return {"median": median, **regression_metrics([median] * len(labels), labels)}

    return evaluate


def _prove(cfg: Any, run_dir: Path) -> Evaluate:
    from leantrain.pipeline.pipeline import build_trainer
    from leantrain.pipeline.prove_stage import build_prover, cell_metrics
    from leantrain.prover.theorems import load_split

    stage = build_trainer("prove", cfg.prove, cfg)  # proves as the stage does, with its loader
    generator = _generator_dir(cfg, run_dir)
    config = dataclasses.replace(
        cfg.prove,
        generator=str(generator),
        progress=None,
        output_dir=str(run_dir / BASELINES / "prove"),
    )
    loaded = None if stage.load_generator is None else stage.load_generator(generator)
    prover = build_prover(config, loaded)  # one output dir: each theorem once
    key = stage.score_key

    def evaluate(data: Path, split: str) -> dict[str, Any]:
        theorems = load_split(
            data, split, split_strategy=config.split_strategy, limit=config.max_theorems
        )
        summary = prover.evaluate(theorems, split=split, show_progress=False)
        return cell_metrics(summary, config.mode, key)

    return evaluate


def _evaluator(name: str, cfg: Any, run_dir: Path) -> Evaluate:
    if name in GENERATORS:
        return _generator(name, cfg, run_dir)
    return {"retrieval": _retrieval, "progress": _progress, "prove": _prove}[name](cfg, run_dir)


def record_baselines(
    cfg: Any, run_dir: str | Path, split: str = "test", on_start: Callable[[], None] | None = None
) -> dict[str, dict[str, dict[str, Any]]]:
    """Compute the baselines of ``cfg``'s trainers (a :class:`PipelineConfig`) on the merged
    ``split`` of every step of the run in ``run_dir`` that lacks them, recording each cell in
    the manifest as it is done; returns all of them (``{trainer: {index: metrics}}``, the
    index as a string). A baseline that cannot be measured (no test rows) is
    ``{"skipped": reason}``. ``on_start`` is called once before the first cell is computed."""
    run_dir = Path(run_dir)
    manifest = RunManifest.load(run_dir)
    done: dict[str, dict[str, dict[str, Any]]] = manifest.metrics.get(BASELINES, {})
    todo = [
        (name, index, Path(data))
        for name in cfg.trainers
        if name in LABELS
        for index, data in sorted(manifest.exports.items())
        if str(index) not in done.get(name, {})
    ]
    evaluators: dict[str, Evaluate] = {}
    for name, index, data in todo:
        if not evaluators and on_start is not None:
            on_start()
        if name not in evaluators:
            evaluators[name] = _evaluator(name, cfg, run_dir)
        try:
            metrics = evaluators[name](data, split)
        except LeanTrainError as e:  # e.g. an empty test split, as the engine's evaluations
            metrics = {"skipped": e.one_line()}
        done.setdefault(name, {})[str(index)] = metrics
        manifest.set_metrics(BASELINES, done)
    return done


def run_baselines(run_dir: str | Path) -> dict[str, dict[str, dict[str, Any]]]:
    """The baselines recorded in ``run_dir``'s manifest (``{}`` for a run without them)."""
    if not (Path(run_dir) / "manifest.json").is_file():
        return {}
    return dict(RunManifest.load(run_dir).metrics.get(BASELINES, {}))
