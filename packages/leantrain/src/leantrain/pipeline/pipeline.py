"""The end-to-end lifelong pipeline.

For each repository in curriculum order: import → export merged data → each configured trainer
(SFT → GRPO → retrieval → progress), each evaluated after training. Progress is recorded in the
run's manifest per (repository, trainer); a killed run re-run with the same config resumes
where it stopped and never redoes finished work (the trainers resume mid-repository from their
own checkpoints).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from leantrain.core.config import config_from_dict, config_from_yaml, config_to_dict
from leantrain.core.errors import ConfigError
from leantrain.core.manifest import RunManifest
from leantrain.core.events import EventLog
from leantrain.pipeline.pipeline_config import PipelineConfig
from leantrain.pipeline.report import render_report, summary_rows
from leantrain.pipeline.stages import STAGES, StageContext


class Pipeline:
    """Run a :class:`PipelineConfig`: ``Pipeline(config).run()`` returns a result dict.

    ``config`` may be a :class:`PipelineConfig`, a plain dict, or a YAML path.
    ``progress`` is called with ``(message, done, total)`` as stages finish (for progress bars).
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
        self.events = EventLog(self.run_dir, echo=echo_events)
        self.progress = progress or (lambda msg, done, total: None)

    # -- stages ---------------------------------------------------------------------------------
    def _import_sources(self, manifest: RunManifest) -> list[str]:
        from leantrain.export import Database

        state = manifest.data.setdefault("pipeline", {})
        if state.get("imported") is not None:
            return list(state["imported"])
        db = Database(self.config.resolved_database)
        imported: list[str] = []
        for source in self.config.sources:
            t0 = time.time()
            if source == "sample":
                ids = db.import_sample()
            elif "@" in source and not Path(source).exists():
                from leantrain.export import trace_repository

                url, _, commit = source.rpartition("@")
                ids = db.import_path(trace_repository(url, commit))
            else:
                ids = db.import_path(source)
            imported += [i for i in ids if i not in imported]
            self.events.write("stage", stage="import", source=source, repos=ids, seconds=round(time.time() - t0, 2))
        state["imported"] = imported
        manifest.save()
        return imported

    def _order(self, imported: list[str]) -> list[str]:
        from leantrain.export import Database

        db = Database(self.config.resolved_database)
        order = [r for r in db.curriculum() if r in imported] if self.config.curriculum else list(imported)
        if self.config.repos:
            wanted = []
            for sel in self.config.repos:
                match = [r for r in order if r == sel or r.split("@")[0].rstrip("/").endswith("/" + sel) or r.startswith(sel + "@")]
                if not match:
                    raise ConfigError(f"repository '{sel}' in 'repos' was not imported", hint=f"imported: {', '.join(order)}")
                wanted += [m for m in match if m not in wanted]
            order = [r for r in order if r in wanted]
        if not order:
            raise ConfigError("no repositories to train on", hint="check 'sources' and 'repos'")
        return order

    def run(self) -> dict[str, Any]:
        """Run (or resume) the pipeline; returns ``{run_dir, repos, results, report}``."""
        cfg = self.config
        self.run_dir.mkdir(parents=True, exist_ok=True)
        manifest = RunManifest.load_or_create(self.run_dir, kind="pipeline", config=config_to_dict(cfg))
        manifest.data["status"] = "running"
        manifest.save()
        imported = self._import_sources(manifest)
        order = self._order(imported)
        state = manifest.data.setdefault("pipeline", {})
        state["order"] = order
        # every trainer exports the repositories so far; pin the novel-premises rate over all of
        # them so that a theorem's novel-premises split never changes from one step to the next
        from leantrain.export import pin_novel_premise_rate

        pin_novel_premise_rate(cfg.resolved_database, order, self.run_dir / "data")
        done: dict[str, Any] = state.setdefault("done", {})
        manifest.save()
        total = len(order) * len(cfg.trainers)
        finished = sum(1 for r in order for t in cfg.trainers if f"{r}::{t}" in done)
        results: dict[str, dict[str, Any]] = {}
        for index, repo in enumerate(order):
            for trainer in cfg.trainers:
                key = f"{repo}::{trainer}"
                if key in done:
                    results.setdefault(repo, {})[trainer] = done[key]
                    continue
                self.progress(f"{trainer} on {repo.split('@')[0].rsplit('/', 1)[-1]}", finished, total)
                manifest.set_position(repo=repo, repo_index=index, trainer=trainer)
                t0 = time.time()
                ctx = StageContext(
                    run_dir=self.run_dir,
                    database=cfg.resolved_database,
                    data_path=self.run_dir / "data",
                    repos=order[: index + 1],
                    repo=repo,
                    repo_index=index,
                    trainer_config=dict(getattr(cfg, trainer)),
                    seed=cfg.seed,
                    previous=results.get(repo, {}) | {k.split("::")[1]: v for k, v in done.items() if k.startswith(repo + "::")},
                )
                out = STAGES[trainer](ctx)
                seconds = round(time.time() - t0, 2)
                if out.history:
                    self.events.write("history", trainer=trainer, repo=repo, repo_index=index, points=out.history)
                self.events.write("metrics", trainer=trainer, repo=repo, repo_index=index, metrics=out.metrics, seconds=seconds)
                record = {"metrics": out.metrics, "checkpoint": str(out.checkpoint) if out.checkpoint else None, "seconds": seconds}
                done[key] = record
                results.setdefault(repo, {})[trainer] = record
                manifest.data["metrics"].setdefault("per_repo", {}).setdefault(repo, {})[trainer] = out.metrics
                manifest.save()
                finished += 1
                self.progress(f"{trainer} on {repo.split('@')[0].rsplit('/', 1)[-1]} done", finished, total)
            if repo not in manifest.completed_repos:
                manifest.complete_repo(repo)
        manifest.data["status"] = "finished"
        manifest.data["position"] = {}
        manifest.save()
        report = render_report(self.run_dir)
        return {"run_dir": str(self.run_dir), "repos": order, "results": results, "report": str(report), "summary": summary_rows(self.run_dir)}
