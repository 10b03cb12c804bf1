"""The end-to-end lifelong pipeline: import the sources, order the repositories, then run the
one lifelong engine (:class:`leantrain.core.lifelong.LifelongEngine`) with every configured
trainer — SFT → GRPO (from that repository's SFT model) → retrieval → progress, then optionally
the ``prove`` stage (:mod:`leantrain.pipeline.prove_stage`: the replay proof rate of that
repository's models on every repository so far) — then measure the baselines
(:mod:`leantrain.pipeline.baselines`: the untrained models, BM25, the median predictor) and
render the report. A killed run re-run with the same config resumes where it stopped and never redoes
finished work; the run directory holds one manifest for all of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_json
from leantrain.core.config import config_from_dict, config_from_yaml, config_to_dict
from leantrain.core.errors import ConfigError
from leantrain.core.events import EventLog
from leantrain.core.forgetting import forgetting_report
from leantrain.core.lifelong import LifelongEngine, repo_slug
from leantrain.core.manifest import RunManifest
from leantrain.core.output_dir import check_output_dir, claim_output_dir
from leantrain.core.schemas import read_json
from leantrain.pipeline.baselines import record_baselines
from leantrain.pipeline.pipeline_config import (
    IMPORTS_NAME,
    PROVE,
    PipelineConfig,
    _is_trace_source,
    trainer_class,
    trainer_names,
)
from leantrain.pipeline.report import render_report, summary_notes, summary_rows


def _short(repo: str) -> str:
    return repo.split("@")[0].rstrip("/").rsplit("/", 1)[-1]


def build_trainer(name: str, config: Any, pipeline: PipelineConfig | None = None) -> Any:
    """The trainer of ``name`` for its (already built) config: the class its command registers
    (``Command.trainer``); the ``prove`` stage needs the ``pipeline`` config too (its run
    directory and which trainers' models it proves with)."""
    if name != PROVE:
        return trainer_class(name)(config=config)
    from leantrain.pipeline.prove_stage import ProveStage

    if pipeline is None or pipeline.prove_generator is None:
        raise ConfigError("'prove' needs the pipeline config", hint="pass pipeline=…")
    return ProveStage(
        config,
        pipeline.resolved_run_dir,
        generator_from=pipeline.prove_generator,
        progress_from="progress" if "progress" in pipeline.trainers else None,
    )


class Pipeline:
    """Run a :class:`PipelineConfig`: ``Pipeline(config).run()`` returns a result dict.

    ``config`` may be a :class:`PipelineConfig`, a plain dict, or a YAML path.
    ``progress`` is called with ``(message, done, total)`` as trainers start and finish steps
    (for progress bars); ``echo_events`` prints every event of ``metrics.jsonl`` as it happens.
    """

    def __init__(
        self,
        config: PipelineConfig | Mapping[str, Any] | str | Path,
        *,
        echo_events: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> None:
        if isinstance(config, PipelineConfig):
            self.config = config
        elif isinstance(config, Mapping):
            self.config = config_from_dict(PipelineConfig, config, source="pipeline config")
        else:
            self.config = config_from_yaml(PipelineConfig, config)
        self.run_dir = self.config.resolved_run_dir
        if not self.config.overwrite:  # refuse a run dir of other files before anything runs
            check_output_dir(self.run_dir, kind="run", flag="--run-dir")
        self.echo_events = echo_events
        self.progress = progress or (lambda msg, done, total: None)

    # -- data -----------------------------------------------------------------------------------
    def _import_sources(self) -> list[str]:
        """Import every source once (recorded in ``imports.json``); returns the repository ids."""
        from leantrain.export import Database

        record = self.run_dir / IMPORTS_NAME
        if record.is_file():
            return list(read_json(record)["repos"])
        traced = [s for s in self.config.sources if _is_trace_source(s)]
        if traced:  # needs lean-dojo and Lean: say so before importing anything
            from leantrain.export import check_trace_requirements

            check_trace_requirements(f"tracing {traced[0]}")
        events = EventLog(self.run_dir)
        imported: list[str] = []
        with Database(self.config.resolved_database) as db:
            for source in self.config.sources:
                t0 = time.time()
                if source == "sample":
                    ids = db.import_sample()
                elif _is_trace_source(source):
                    from leantrain.export import trace_repository

                    url, _, commit = source.rpartition("@")
                    out_dir = self.run_dir / "traced" / f"{repo_slug(source)}-{commit[:12]}"
                    ids = db.import_path(trace_repository(url, commit, out_dir))
                else:
                    ids = db.import_path(source)
                imported += [i for i in ids if i not in imported]
                events.write("import", source=source, repos=ids, seconds=round(time.time() - t0, 2))
        atomic_write_json(record, {"sources": self.config.sources, "repos": imported})
        return imported

    def _order(self, db: Any, imported: list[str]) -> list[str]:
        order = (
            [r for r in db.curriculum() if r in imported]
            if self.config.curriculum
            else list(imported)
        )
        if self.config.repos:
            wanted: list[str] = []
            for sel in self.config.repos:
                match = [
                    r
                    for r in order
                    if r == sel
                    or r.split("@")[0].rstrip("/").endswith("/" + sel)
                    or r.startswith(sel + "@")
                ]
                if not match:
                    raise ConfigError(
                        f"repository '{sel}' in 'repos' was not imported",
                        hint=f"imported: {', '.join(order)}",
                    )
                wanted += [m for m in match if m not in wanted]
            order = [r for r in order if r in wanted]
        if not order:
            raise ConfigError("no repositories to train on", hint="check 'sources' and 'repos'")
        return order

    # -- run ------------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Run (or resume) the pipeline; returns ``{run_dir, repos, results, report, summary,
        notes}`` (``notes``: the lines under the summary table)."""
        from leantrain.export.database import open_checked

        cfg = self.config  # its sources were checked when it was built
        if cfg.resolved_database.exists():  # a damaged file is one line before anything runs
            open_checked(cfg.resolved_database).close()
        claim_output_dir(
            self.run_dir,
            kind="run",
            flag="--run-dir",
            overwrite=cfg.overwrite,
        )
        imported = self._import_sources()
        with open_checked(cfg.resolved_database) as db:
            order = self._order(db, imported)
            trainers = [build_trainer(t, getattr(cfg, t), cfg) for t in cfg.trainers]
            run_config = {
                k: v
                for k, v in config_to_dict(cfg).items()
                if k not in (*trainer_names(), "name", "run_dir", "overwrite")
            }
            configs = {"pipeline": run_config}
            configs.update({t: config_to_dict(getattr(cfg, t)) for t in cfg.trainers})
            total = len(order) * len(trainers)
            counter = {"done": 0}

            def on_event(event: dict[str, Any]) -> None:
                if self.echo_events:
                    import json

                    print(json.dumps(event, ensure_ascii=False, default=str), flush=True)
                kind = event.get("kind")
                if kind == "start":
                    where = f"{event['trainer']} on {_short(event['repo'])}"
                    self.progress(where, counter["done"], total)
                elif kind == "step":
                    counter["done"] += 1
                    where = f"{event['trainer']} on {_short(event['repo'])}"
                    self.progress(f"{where} done", counter["done"], total)

            engine = LifelongEngine(
                self.run_dir,
                trainers,
                database=db,
                repos=order,
                chain={"grpo": "sft"} if {"sft", "grpo"} <= set(cfg.trainers) else None,
                export_dir=cfg.export_dir,
                evaluate_each_repo=cfg.evaluate_each_repo,
                configs=configs,
                on_event=on_event,
                output_flag="--run-dir",
                kind="pipeline",
            )
            if (self.run_dir / "manifest.json").is_file():
                steps = RunManifest.load(self.run_dir).steps
                counter["done"] = sum(1 for s in steps if s.status == "done")
            results = engine.run()
        record_baselines(
            cfg, self.run_dir, on_start=lambda: self.progress("baselines", total, total)
        )
        self._record_forgetting()
        per_repo: dict[str, dict[str, Any]] = {}
        for name, result in results.items():
            for (repo, metrics), ckpt in zip(
                result["per_repo"].items(), result["checkpoints"], strict=True
            ):
                per_repo.setdefault(repo, {})[name] = {"metrics": metrics, "checkpoint": ckpt}
        report = render_report(self.run_dir)
        return {
            "run_dir": str(self.run_dir),
            "repos": order,
            "results": per_repo,
            "trainers": results,
            "report": str(report),
            "summary": summary_rows(self.run_dir),
            "notes": summary_notes(self.run_dir),
        }

    def _record_forgetting(self) -> None:
        """One ``forgetting`` event per trainer (ACC, BWT, forgetting per repository)."""
        manifest = RunManifest.load(self.run_dir)
        report = forgetting_report(manifest.eval_rows())
        manifest.set_metrics(
            "forgetting",
            {t: {k: v for k, v in r.items() if k != "matrix"} for t, r in report.items()},
        )
        events = EventLog(self.run_dir)
        for trainer, summary in report.items():
            events.write("forgetting", trainer=trainer, **summary)
