"""The lifelong engine: the one loop that trains every model repository by repository (see
:mod:`leantrain.core.lifelong`)."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from leantrain.core.atomic import apply_umask_modes, atomic_directory
from leantrain.core.errors import CheckpointError, ConfigError, DataError, LeanTrainError
from leantrain.core.events import EventLog, read_events
from leantrain.core.lifelong.data import (
    data_label,
    open_database,
    repo_id,
    repo_slug,
    step_name,
    write_repo_eval_dir,
)
from leantrain.core.lifelong.protocol import LifelongTrainer, Step
from leantrain.core.lifelong.ranks import is_main_process, wait_for
from leantrain.core.manifest import (
    MANIFEST_NAME,
    CheckpointRecord,
    EvalRecord,
    RunManifest,
    StepRecord,
)
from leantrain.core.output_dir import claim_output_dir

DATA_SUBDIR = "data"
EVAL_SUBDIR = "eval"
WORK_SUBDIR = "work"
LOGS_SUBDIR = "logs"


# -- the engine --------------------------------------------------------------------------------
Event = Callable[[dict[str, Any]], None]


class LifelongEngine:
    """Train ``trainers`` repository by repository; ``run()`` returns the result per trainer.

    * ``database`` + ``repos`` (``None``: ``database.curriculum()``): lifelong.
    * ``data`` instead of a database: one step on data the user prepared (an export directory,
      a file, a dataset) — the same loop with one step, named after the data (its path, or a
      fingerprint of in-memory rows: see :func:`data_label`).

    After ``run()``, ``last_data`` is the data of the last step (an export directory, or the
    one-off data), also when a rerun had nothing left to train: what a trainer's
    ``evaluate()`` defaults to.

    ``chain`` maps a trainer to another whose checkpoint of the *same* step it starts from
    (``{"grpo": "sft"}``: GRPO refines each repository's SFT model). ``evaluate_each_repo`` turns the
    per-repository evaluations (the forgetting matrix) on or off; ``on_event`` sees every event
    written to ``metrics.jsonl`` (for progress bars); ``callbacks`` maps a trainer's name to
    engine callbacks handed to it in each :class:`Step`. ``run_dir`` must be new, empty or an
    earlier run (see :mod:`leantrain.core.output_dir`); ``overwrite`` empties an earlier run
    first (a different config or other data is otherwise an error naming what changed). A rerun
    with the same trainers resumes: finished steps are skipped, an interrupted one continues
    from its ``work_dir``.
    """

    manifest: RunManifest  # the run's manifest, opened by run()

    def __init__(
        self,
        run_dir: str | Path,
        trainers: Sequence[LifelongTrainer],
        *,
        database: Any = None,
        repos: Iterable[Any] | None = None,
        data: Any = None,
        export_dir: str | Path | None = None,
        chain: Mapping[str, str] | None = None,
        evaluate_each_repo: bool = True,
        eval_split: str = "test",
        configs: Mapping[str, Mapping[str, Any]] | None = None,
        on_event: Event | None = None,
        callbacks: Mapping[str, Sequence[Any]] | None = None,
        overwrite: bool = False,
        output_flag: str = "--output-dir",
        kind: str = "lifelong",
    ) -> None:
        if not trainers:
            raise ConfigError("no trainers to run")
        names = [t.name for t in trainers]
        if len(set(names)) != len(names):
            raise ConfigError(f"trainer names must be distinct, got {names}")
        for src, dst in (chain or {}).items():
            if src not in names or dst not in names or names.index(dst) > names.index(src):
                raise ConfigError(
                    f"'{src}' cannot start from '{dst}'",
                    hint="both must be trainers of the run, the source after the one it starts from",
                )
        if database is None and data is None:
            raise ConfigError(
                "no training data",
                hint="give an export directory or dataset (--data), or repositories and a database",
            )
        database = open_database(database)
        self.run_dir = Path(run_dir)
        self.trainers = list(trainers)
        self.database = database
        self.repos = None if repos is None else list(repos)
        self.data = data
        self.export_dir = Path(export_dir) if export_dir is not None else self.run_dir / DATA_SUBDIR
        self.chain = dict(chain or {})
        self.evaluate_each_repo = evaluate_each_repo
        self.eval_split = eval_split
        self.configs = {k: dict(v) for k, v in (configs or {}).items()}
        self.on_event = on_event
        self.callbacks = {k: list(v) for k, v in (callbacks or {}).items()}
        self.overwrite = overwrite
        self._prepared = False
        self._touched: set[int] = set()  # trainers that trained or loaded a model in this run
        self.last_data: Any = None  # set by run(): the data of the last step
        self.output_flag = output_flag
        self.kind = kind
        self.main = is_main_process()
        self.events = EventLog(self.run_dir) if self.main else None

    # -- public ---------------------------------------------------------------------------------
    def run(self) -> dict[str, dict[str, Any]]:
        """Train every step not yet done; returns ``{trainer: result}`` (see :meth:`result`)."""
        self.manifest = self._open_manifest()
        for index, repo, items in self._order():
            data = self._export(index, repo, items)
            eval_dirs = self._eval_dirs(index, repo, data)
            for trainer in self.trainers:
                self._run_step(trainer, index, repo, items, data, eval_dirs)
            self.last_data = data
        for trainer in self.trainers:  # a rerun with nothing left: the final model, not the base
            steps = self.manifest.trained_steps(trainer.name)
            if id(trainer) not in self._touched and steps:
                trainer.load(self._verified(steps[-1].checkpoint))
        return {t.name: self.result(t.name) for t in self.trainers}

    def result(self, name: str) -> dict[str, Any]:
        """``{output_dir, per_repo, final, checkpoints, model_dir, evals}`` of trainer ``name``."""
        manifest = self.manifest
        steps = manifest.trained_steps(name)
        checkpoints = [str(manifest.checkpoint_path(s.checkpoint)) for s in steps]
        return {
            "output_dir": str(self.run_dir / name),
            "per_repo": {s.repo: s.metrics for s in steps},
            "final": steps[-1].metrics if steps else {},
            "checkpoints": checkpoints,
            "model_dir": checkpoints[-1] if checkpoints else None,
            "evals": manifest.eval_rows(name),
        }

    # -- the manifest ---------------------------------------------------------------------------
    def _run_config(self) -> dict[str, Any]:
        """What must not change between a run and its resume: trainers, chain, sections."""
        return {"trainers": [t.name for t in self.trainers], "chain": self.chain, **self.configs}

    def _open_manifest(self) -> RunManifest:
        """Claim the run directory and load its manifest (refusing a changed config), or
        start one. Other ranks wait for rank 0's."""
        path = self.run_dir / MANIFEST_NAME
        if not self.main:
            wait_for(path)
            return RunManifest.load(self.run_dir)
        claim_output_dir(self.run_dir, kind="run", flag=self.output_flag, overwrite=self.overwrite)
        if not path.is_file():
            return RunManifest.create(
                self.run_dir,
                kind=self.kind,
                trainers=[t.name for t in self.trainers],
                chain=self.chain,
                config=self.configs,
            )
        manifest = RunManifest.load(self.run_dir)
        old = {"trainers": manifest.trainers, "chain": manifest.chain, **manifest.config}
        new = self._run_config()
        changed = sorted(
            f"{section}.{key}" if isinstance(old.get(section), dict) and key else section
            for section in set(old) | set(new)
            for key in _changed(old.get(section), new.get(section))
        )
        if changed:
            raise ConfigError(
                f"{self.run_dir} holds a run with a different config "
                f"(changed: {', '.join(changed[:6])})",
                hint="same config to resume; another directory, or --overwrite to start over",
            )
        return manifest

    # -- order and data -------------------------------------------------------------------------
    def _order(self) -> list[tuple[int, str, list[Any]]]:
        """``(index, repo id, repo items so far)`` of every step, checked against the manifest."""
        manifest = self.manifest
        if self.database is None:
            order, items = [data_label(self.data)], [self.data]
        else:
            if self.repos is None:
                if not hasattr(self.database, "curriculum"):
                    raise ConfigError(
                        "no repositories given", hint="pass repos=[...] (--repos URL@COMMIT)"
                    )
                items = list(self.database.curriculum())
            else:
                items = list(self.repos)
            if not items:
                raise DataError(None, "no repositories to train on", hint="import data first")
            order = [repo_id(r, self.database) for r in items]
        old = manifest.order
        if old and old != order[: len(old)] and self.main:
            what = "other data" if self.database is None else "other repositories"
            raise ConfigError(
                f"{self.run_dir} was trained on {what} ({', '.join(old[:3])} …)",
                hint="keep the earlier repositories first and in order, another output "
                "directory, or overwrite to start over",
            )
        if self.main and old != order:
            manifest.order = order
            manifest.save()
        return [(i, r, items[: i + 1]) for i, r in enumerate(order)]

    def _export(self, index: int, repo: str, items: list[Any]) -> Any:
        """The data of step ``index``: the merged export of ``items`` (written once, by rank
        0), or the one-off data."""
        manifest = self.manifest
        if self.database is None:
            return self.data
        out = self.export_dir / f"{index:03d}_{repo_slug(repo)}"
        if all(self._done(t.name, index) for t in self.trainers):
            return out
        if not self.main:
            wait_for(out)
            return out
        if manifest.exports.get(index) != str(out) or not out.is_dir():
            if not self._prepared and hasattr(self.database, "prepare_lifelong"):
                # e.g. pin the novel-premises hold-out rate over every repository of the run
                self.database.prepare_lifelong(list(self.repos or []) or None, self.export_dir)
                self._prepared = True
            t0 = time.time()
            self.database.export_merged_data(list(items), out)
            manifest.exports[index] = str(out)
            manifest.save()
            self._event("export", repo=repo, repo_index=index, seconds=round(time.time() - t0, 2))
        return out

    def _eval_dirs(self, index: int, repo: str, data: Any) -> list[tuple[int, str, Path]]:
        """``[(j, repo_j, dir_j)]`` for every repository so far (written when it is added)."""
        if not self.evaluate_each_repo or self.database is None:
            if self.evaluate_each_repo and isinstance(data, (str, Path)) and Path(data).is_dir():
                return [(0, repo, Path(data))]
            return []
        order = self.manifest.order
        dirs = []
        for j in range(index + 1):
            out = self.export_dir / EVAL_SUBDIR / f"{j:03d}_{repo_slug(order[j])}"
            if j == index and self.main and not out.is_dir():
                write_repo_eval_dir(Path(data), order[j], out)
            dirs.append((j, order[j], out))
        return dirs

    # -- one trainer on one step ----------------------------------------------------------------
    def _done(self, name: str, index: int) -> bool:
        record = self.manifest.step(name, index)
        return record is not None and record.status == "done"

    def _run_step(
        self,
        trainer: LifelongTrainer,
        index: int,
        repo: str,
        items: list[Any],
        data: Any,
        eval_dirs: list[tuple[int, str, Path]],
    ) -> None:
        """Bring ``trainer``'s step ``index`` to done: train and save it (or, after a kill,
        reload what was saved), then score it on every repository so far. Rank 0 saves and
        records; other ranks train alongside and wait for its record."""
        record = self.manifest.step(trainer.name, index)
        if record is not None and record.status == "done":
            return
        merged: dict[str, Any] = {}
        if record is None:
            step = self._new_step(trainer, index, repo, items, data)
            metrics, seconds = self._train(trainer, step)
            if not self.main:
                self._wait_recorded(trainer.name, index)
                return
            checkpoint = self._save(trainer, step)
            merged = self._evaluate_merged(trainer, data)
            metrics.update({f"{self.eval_split}_{k}": v for k, v in merged.items()})
            record = self._record(trainer, step, checkpoint, metrics, seconds)
        elif self.main:  # trained and recorded, killed while evaluating
            self._reload(trainer, record)
        if self.main:
            self._evaluate_each_repo(trainer, record, eval_dirs, merged)

    def _new_step(
        self, trainer: LifelongTrainer, index: int, repo: str, items: list[Any], data: Any
    ) -> Step:
        """The :class:`Step` handed to ``trainer`` for repository ``index``."""
        trainer_dir = self.run_dir / trainer.name
        return Step(
            index=index,
            repo=repo,
            repos=[repo_id(r, self.database) for r in items] if self.database else [repo],
            data=data,
            init_from=self._init_from(trainer.name, index),
            work_dir=self._work_dir(trainer.name, index),
            log_file=trainer_dir / LOGS_SUBDIR / f"{step_name(index, repo)}.jsonl",
            callbacks=list(self.callbacks.get(trainer.name, [])),
        )

    def _train(self, trainer: LifelongTrainer, step: Step) -> tuple[dict[str, Any], float]:
        """Run ``trainer.train_step``; returns its metrics and the seconds it took."""
        self._event("start", trainer=trainer.name, repo=step.repo, repo_index=step.index)
        t0 = time.time()
        metrics = dict(trainer.train_step(step))
        self._touched.add(id(trainer))
        return metrics, round(time.time() - t0, 2)

    def _save(self, trainer: LifelongTrainer, step: Step) -> CheckpointRecord:
        """Save ``trainer``'s model as the step's checkpoint directory (atomically, with the
        modes the umask gives); returns its checksummed record."""
        ckpt = self.run_dir / trainer.name / step_name(step.index, step.repo)
        with atomic_directory(ckpt) as tmp:
            trainer.save(tmp)
            apply_umask_modes(tmp)  # libraries write some files private (safetensors 0600)
        return self.manifest.checksum(ckpt)

    def _evaluate_merged(self, trainer: LifelongTrainer, data: Any) -> dict[str, Any]:
        """The model on the step's own (merged) data, when that is a path; else ``{}``."""
        if self.evaluate_each_repo and isinstance(data, (str, Path)):
            return self._evaluate(trainer, data)
        return {}

    def _record(
        self,
        trainer: LifelongTrainer,
        step: Step,
        checkpoint: CheckpointRecord,
        metrics: dict[str, Any],
        seconds: float,
    ) -> StepRecord:
        """Record a saved step in the manifest, log its ``step`` event and drop its resumable
        state (the saved model supersedes it)."""
        record = StepRecord(
            trainer=trainer.name,
            index=step.index,
            repo=step.repo,
            checkpoint=checkpoint,
            init_from=None if step.init_from is None else str(step.init_from),
            metrics=metrics,
            seconds=seconds,
        )
        self.manifest.record_step(record)
        self._step_event(record)
        _remove_work_dir(step.work_dir)
        return record

    def _reload(self, trainer: LifelongTrainer, record: StepRecord) -> None:
        """Make a recorded step's saved model ``trainer``'s again after a kill, write the events
        the kill lost and drop resumable state it left."""
        trainer.load(self._verified(record.checkpoint))
        self._touched.add(id(trainer))
        self._replay_lost_events(record)
        _remove_work_dir(self._work_dir(record.trainer, record.index))

    def _replay_lost_events(self, record: StepRecord) -> None:
        """Append the ``step`` / ``eval`` events of ``record`` that the manifest has and
        ``metrics.jsonl`` lacks (a kill between saving the manifest and logging)."""
        logged = self._logged_events()
        if ("step", record.trainer, record.index, None) not in logged:
            self._step_event(record)
        for row in self.manifest.evals:
            if (
                row.trainer == record.trainer
                and row.step == record.index
                and ("eval", row.trainer, row.step, row.repo_index) not in logged
            ):
                self._event("eval", **row.model_dump())

    def _evaluate_each_repo(
        self,
        trainer: LifelongTrainer,
        record: StepRecord,
        eval_dirs: list[tuple[int, str, Path]],
        merged: dict[str, Any],
    ) -> None:
        """Score the step's model on each repository's own test split not yet scored (one row
        of the forgetting matrix), then mark the step done."""
        manifest = self.manifest
        seen = {(e.trainer, e.step, e.repo_index) for e in manifest.evals}
        for j, repo_j, eval_dir in eval_dirs:
            if (trainer.name, record.index, j) in seen:
                continue
            # after the first repository the merged test split *is* its own: score it once
            first = record.index == j == 0 and merged
            row = EvalRecord(
                trainer=trainer.name,
                step=record.index,
                repo_index=j,
                repo=repo_j,
                score_key=trainer.score_key,
                higher_is_better=trainer.higher_is_better,
                metrics=merged if first else self._evaluate(trainer, eval_dir),
            )
            manifest.record_eval(row)
            self._event("eval", **row.model_dump())
        manifest.mark_done(record)

    def _wait_recorded(self, name: str, index: int, timeout: float = 3600.0) -> None:
        """Another rank: wait until rank 0 recorded step ``index`` of ``name``, reloading the
        manifest meanwhile."""
        deadline = time.monotonic() + timeout
        while self.manifest.step(name, index) is None:
            if time.monotonic() > deadline:
                raise CheckpointError(
                    f"rank 0 did not record step {name}/{index} within {timeout:.0f} s"
                )
            time.sleep(0.5)
            with contextlib.suppress(CheckpointError):  # being replaced right now
                self.manifest = RunManifest.load(self.run_dir)

    def _evaluate(self, trainer: LifelongTrainer, data: Any) -> dict[str, Any]:
        try:
            return dict(trainer.evaluate(data, self.eval_split))
        except LeanTrainError as e:  # e.g. an empty test split: keep the trained model
            return {"skipped": e.one_line()}

    def _work_dir(self, name: str, index: int) -> Path:
        return self.run_dir / name / WORK_SUBDIR / f"{index:03d}"

    def _init_from(self, name: str, index: int) -> Path | None:
        """The checkpoint step ``index`` of ``name`` starts from: the chained trainer's of the
        same step, else its own previous one, else ``None`` (the configured model)."""
        manifest = self.manifest
        source = self.chain.get(name)
        if source is not None:
            record = manifest.step(source, index)
            if record is None:
                raise CheckpointError(f"'{name}' starts from '{source}', which has no step {index}")
            return self._verified(record.checkpoint)
        for previous in range(index - 1, -1, -1):
            record = manifest.step(name, previous)
            if record is not None:
                return self._verified(record.checkpoint)
        return None

    def _verified(self, checkpoint: CheckpointRecord) -> Path:
        """The path of a recorded checkpoint, its checksums verified (other ranks: once rank 0
        wrote it)."""
        manifest = self.manifest
        if not self.main:
            path = manifest.checkpoint_path(checkpoint)
            wait_for(path)
            return path
        return manifest.verify_checkpoint(checkpoint)

    def _logged_events(self) -> set[tuple[str, Any, Any, Any]]:
        """``(kind, trainer, step, repo_index)`` of the step and eval events already written
        (``step``: ``(kind, trainer, repo_index, None)``)."""
        if self.events is None:
            return set()
        logged = set()
        for ev in read_events(self.run_dir):
            if ev.get("kind") == "step":
                logged.add(("step", ev.get("trainer"), ev.get("repo_index"), None))
            elif ev.get("kind") == "eval":
                logged.add(("eval", ev.get("trainer"), ev.get("step"), ev.get("repo_index")))
        return logged

    def _step_event(self, record: StepRecord) -> None:
        self._event(
            "step",
            trainer=record.trainer,
            repo=record.repo,
            repo_index=record.index,
            metrics=record.metrics,
            seconds=record.seconds,
        )

    def _event(self, kind: str, **fields: Any) -> None:
        if self.events is None:
            return
        event = self.events.write(kind, **fields)
        if self.on_event is not None:
            self.on_event(event)


def _remove_work_dir(work_dir: Path) -> None:
    """Remove a step's resumable state, and ``work/`` once no other step's is left."""
    shutil.rmtree(work_dir, ignore_errors=True)
    with contextlib.suppress(OSError):
        work_dir.parent.rmdir()


# Settings that change how a run reports, not what it trains: a resume may change them (and
# transformers derives some from the environment, e.g. disable_tqdm from the log level). The
# contamination guard's only decide whether training may start (a refused run is rerun with them).
UNTRACKED_KEYS = frozenset(
    {
        "output_dir",
        "logging_dir",
        "report_to",
        "run_name",
        "disable_tqdm",
        "log_level",
        "log_level_replica",
        "logging_steps",
        "logging_first_step",
        "logging_strategy",
        "log_every_n_steps",
        "push_to_hub",
        "hub_token",
        "overwrite",
        "dataloader_num_workers",
        "num_workers",
        "eval_set",
        "allow_contamination",
    }
)


def _changed(old: Any, new: Any) -> list[str]:
    """Keys whose values differ (a section that is not a dict counts as one key: '')."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted((set(old) | set(new)) - UNTRACKED_KEYS)
        return [k for k in keys if old.get(k) != new.get(k)]
    return [] if old == new else [""]
