"""``RetrievalTrainer``: trains a :class:`PremiseRetriever` on one export or lifelong.

Lifelong: for each repository (curriculum order) the merged export of the repositories so far
is trained on, starting from the *previous repository's* best checkpoint (LeanDojo-v2 reloads
the initial checkpoint for every repository instead). The best checkpoint by validation R@10
is kept and recorded in the run manifest with its checksums; with ``ewc_lambda > 0`` the
diagonal Fisher of the repository's data and θ* are stored beside it (safetensors) and
constrain the next repository. A killed run resumes after the last completed repository.

Checkpoints are plain HF encoder directories plus JSON (no pickle, no Lightning ``.ckpt``).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning as L
import torch
from leantrain.core.config import config_to_dict
from leantrain.core.errors import ConfigError
from leantrain.core.manifest import RunManifest
from leantrain.retrieval.datamodule import RetrievalDataModule
from leantrain.retrieval.encoder import is_retriever_dir
from leantrain.retrieval.ewc import EWC
from leantrain.retrieval.premise_retriever import PremiseRetriever
from leantrain.retrieval.retrieval_config import RetrievalConfig

log = logging.getLogger("leantrain.retrieval")

MODEL_SUBDIR = "model"


def resolve_model_dir(path: str | Path) -> Path:
    """A saved retriever directory, given it or a run directory holding ``model/``."""
    path = Path(path)
    if not is_retriever_dir(path) and is_retriever_dir(path / MODEL_SUBDIR):
        return path / MODEL_SUBDIR
    return path


@dataclass
class _Step:
    index: int
    repo: str
    data_dir: Path
    prepare: Any = None  # writes data_dir (called from the data module's prepare_data)


class BestRetrieverCheckpoint(L.Callback):
    """Saves the retriever (HF dir + JSON) whenever validation R@10 improves (rank 0 only)."""

    def __init__(self, directory: Path, monitor: str = "val_R@10") -> None:
        self.directory = directory
        self.monitor = monitor
        self.best: float | None = None
        self.best_metrics: dict[str, float] = {}

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.sanity_checking:
            return
        value = trainer.callback_metrics.get(self.monitor)
        if value is None:
            return
        value = float(value)
        if self.best is None or value > self.best:
            self.best = value
            self.best_metrics = {
                k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith("val_")
            }
            self.best_metrics["step"] = trainer.global_step
            if trainer.is_global_zero:
                pl_module.save_pretrained(self.directory)


def _slug(repo: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", repo.rstrip("/").split("/")[-1])[:60] or "repo"


class RetrievalTrainer:
    """Trains the premise retriever; ``train()`` returns a result dict (see DESIGN.md)."""

    def __init__(self, config: RetrievalConfig | None = None, **overrides: Any) -> None:
        if config is None:
            config = RetrievalConfig(**overrides)
        elif overrides:
            raise ConfigError("give either a RetrievalConfig or keyword overrides, not both")
        self.config = config
        self.output_dir = Path(config.output_dir)
        self.retriever: PremiseRetriever | None = None

    # -- public API ---------------------------------------------------------------------------
    def train(
        self,
        repos: Sequence[str] | str | Path | None = None,
        database: Any = None,
        data_path: str | Path | None = None,
    ) -> dict[str, Any]:
        """Train on one export dir (``train(data_dir)``) or lifelong (``train(repos, database, data_path)``).

        Lifelong uses ``leantrain.export.lifelong_exports``; ``repos=None`` takes the
        database's curriculum. ``data_path`` is where the merged exports are written
        (default ``<output_dir>/data``).
        """
        cfg = self.config
        if isinstance(repos, (str, Path)) and database is None:
            return self.train_on_export(repos)
        database = database if database is not None else cfg.database
        if database is None:
            if cfg.data_path is None:
                raise ConfigError(
                    "nothing to train on",
                    hint="give --data EXPORT_DIR, or --database (and --repos) for lifelong training",
                )
            return self.train_on_export(cfg.data_path)
        from leantrain.export import Database, lifelong_exports
        from leantrain.export.lifelong import step_dir_name

        repo_list = (
            list(repos) if repos is not None else (list(cfg.repos) or None)
        )  # None: the curriculum
        data_path = Path(data_path) if data_path is not None else self.output_dir / "data"
        done = set(self._manifest().completed_repos)
        db = database if isinstance(database, Database) else Database(database, create=False)
        try:
            order = db.curriculum() if repo_list is None else repo_list
            ids = [db.get_repository(r).id for r in order]
        finally:
            if db is not database:
                db.close()
        # Every rank knows each step's directory; only the rank that runs the data module's
        # prepare_data (global rank 0, before the others read) writes the export, by advancing
        # the lifelong generator one step.
        exports = lifelong_exports(database, repo_list, data_path, skip=done)

        def prepare_for(index: int) -> Any:
            def prepare() -> None:
                step = next(exports, None)
                if step is None or step.index != index:
                    raise ConfigError(
                        f"lifelong export out of step: expected step {index}, got {getattr(step, 'index', None)}"
                    )

            return prepare

        steps = [
            _Step(i, rid, data_path / step_dir_name(i, rid), prepare_for(i))
            for i, rid in enumerate(ids)
            if rid not in done and order[i] not in done
        ]
        return self.train_progressive(steps)

    def train_on_export(self, data_dir: str | Path) -> dict[str, Any]:
        """Train on one export directory (a one-step lifelong run named after the directory)."""
        data_dir = Path(data_dir)
        return self.train_progressive([_Step(0, str(data_dir.resolve()), data_dir)])

    def train_progressive(self, steps: Iterable[Any]) -> dict[str, Any]:
        """The lifelong loop over ``steps`` (each with ``index``, ``repo``, ``data_dir``)."""
        cfg = self.config
        manifest = self._manifest()
        L.seed_everything(cfg.seed, workers=True, verbose=False)
        result: dict[str, Any] = {
            "output_dir": str(self.output_dir),
            "per_repo": {},
            "checkpoints": [],
        }
        for step in steps:
            if manifest.is_repo_done(step.repo):
                log.info("repo %s already done: skipping (resume)", step.repo)
                continue
            metrics, ckpt = self._train_repo(manifest, step)
            result["per_repo"][step.repo] = metrics
            result["checkpoints"].append(str(ckpt))
        manifest = RunManifest.load(self.output_dir)
        last = self._previous_checkpoint(manifest)
        if last is not None and self.is_rank_zero():
            self.retriever = PremiseRetriever.from_pretrained(last, **self._module_kwargs())
            self.retriever.save_pretrained(self.output_dir / MODEL_SUBDIR)
            manifest.data["status"] = "completed"
            manifest.data["model_dir"] = MODEL_SUBDIR
            manifest.save()
        result["per_repo"] = {**manifest.data["metrics"].get("per_repo", {}), **result["per_repo"]}
        result["final_metrics"] = (
            result["per_repo"].get(manifest.completed_repos[-1], {})
            if manifest.completed_repos
            else {}
        )
        result["model_dir"] = str(self.output_dir / MODEL_SUBDIR)
        return result

    # -- internals ----------------------------------------------------------------------------
    @staticmethod
    def is_rank_zero() -> bool:
        """Whether this process is the global rank 0 (the one that writes and prints)."""
        import os

        return (
            int(os.environ.get("RANK", os.environ.get("LOCAL_RANK", "0"))) == 0
            and int(os.environ.get("NODE_RANK", "0")) == 0
        )

    def _manifest(self) -> RunManifest:
        return RunManifest.load_or_create(
            self.output_dir, kind="retrieval", config=config_to_dict(self.config)
        )

    def _module_kwargs(self) -> dict[str, Any]:
        c = self.config
        return {
            "learning_rate": c.learning_rate,
            "weight_decay": c.weight_decay,
            "warmup_steps": c.warmup_steps,
            "loss": c.loss,
            "temperature": c.temperature,
            "context_max_len": c.context_max_len,
            "premise_max_len": c.premise_max_len,
            "eval_batch_size": c.eval_batch_size,
            "ewc_lambda": c.ewc_lambda,
        }

    def _previous_checkpoint(self, manifest: RunManifest) -> Path | None:
        done = manifest.completed_repos
        if not done:
            return None
        entry = manifest.latest_checkpoint(repo=done[-1])
        return None if entry is None else manifest.verify_checkpoint(entry)

    def _start_model(self, manifest: RunManifest) -> PremiseRetriever:
        cfg = self.config
        prev = self._previous_checkpoint(manifest)
        if prev is not None:
            log.info("continuing from the previous repo's checkpoint %s", prev)
            model = PremiseRetriever.from_pretrained(prev, **self._module_kwargs())
            if cfg.ewc_lambda > 0:
                model.ewc = EWC.load(prev / "ewc")
            return model
        name = (
            str(resolve_model_dir(cfg.model_name))
            if Path(cfg.model_name).exists()
            else cfg.model_name
        )
        return PremiseRetriever.from_name(
            name,
            tiny_d_model=cfg.tiny_d_model,
            tiny_layers=cfg.tiny_layers,
            **self._module_kwargs(),
        )

    def _test_metrics(
        self, model: PremiseRetriever, data_dir: Path, dm: RetrievalDataModule
    ) -> dict[str, Any]:
        """R@1/R@10/MRR of ``model`` and of BM25 on the test splits (flat keys for reports)."""
        from leantrain.core.errors import DataError
        from leantrain.retrieval.evaluation import evaluate_retriever

        try:
            res = evaluate_retriever(model, data_dir, corpus=dm.corpus, strict=False)
        except DataError as e:  # an export without test splits still trains
            log.info("no test evaluation for %s: %s", data_dir, e)
            return {}
        out: dict[str, Any] = {}
        for split, prefix in (("random", ""), ("novel_premises", "novel_")):
            for method, tag in (("retriever", ""), ("bm25", "bm25_")):
                for name, value in res.get(split, {}).get(method, {}).items():
                    key = "test_count" if name == "count" else name
                    out[f"{prefix}{tag}{key}"] = value
        return out

    def _precision(self) -> str:
        if self.config.precision != "auto":
            return self.config.precision
        return (
            "bf16-mixed"
            if torch.cuda.is_available() and torch.cuda.is_bf16_supported()
            else "32-true"
        )

    def _devices(self) -> Any:
        d = self.config.devices
        return int(d) if d.isdigit() else d

    def _lightning_trainer(self, run_name: str, callbacks: list[L.Callback]) -> L.Trainer:
        from lightning.pytorch.loggers import CSVLogger

        cfg = self.config
        kwargs: dict[str, Any] = {}
        if cfg.val_check_interval:
            kwargs.update(val_check_interval=cfg.val_check_interval, check_val_every_n_epoch=None)
        return L.Trainer(
            accelerator=cfg.accelerator,
            devices=self._devices(),
            strategy=cfg.strategy,
            num_nodes=cfg.num_nodes,
            precision=self._precision(),
            max_steps=cfg.max_steps,
            max_epochs=None if cfg.max_steps > 0 else cfg.max_epochs,
            gradient_clip_val=cfg.gradient_clip_val or None,
            accumulate_grad_batches=cfg.accumulate_grad_batches,
            callbacks=callbacks,
            enable_checkpointing=False,
            logger=CSVLogger(self.output_dir, name="logs", version=run_name),
            log_every_n_steps=cfg.log_every_n_steps,
            num_sanity_val_steps=0,
            enable_model_summary=False,
            enable_progress_bar=sys.stderr.isatty(),
            deterministic=False,
            **kwargs,
        )

    def _train_repo(self, manifest: RunManifest, step: Any) -> tuple[dict[str, Any], Path]:
        cfg = self.config
        model = self._start_model(manifest)
        dm = RetrievalDataModule(
            step.data_dir,
            model.tokenizer,
            split=cfg.split,
            batch_size=cfg.batch_size,
            eval_batch_size=cfg.eval_batch_size,
            num_negatives=cfg.num_negatives,
            num_in_file_negatives=cfg.num_in_file_negatives,
            context_max_len=cfg.context_max_len,
            premise_max_len=cfg.premise_max_len,
            num_workers=cfg.num_workers,
            seed=cfg.seed + step.index,
            prepare=getattr(step, "prepare", None),
        )
        name = f"{step.index:03d}-{_slug(step.repo)}"
        ckpt_dir = self.output_dir / "checkpoints" / name
        best = BestRetrieverCheckpoint(ckpt_dir)
        trainer = self._lightning_trainer(name, [best])
        if trainer.is_global_zero:
            manifest.set_position(repo=step.repo, repo_index=step.index, phase="training")
        trainer.fit(model, datamodule=dm)
        trainer.validate(model, datamodule=dm, verbose=False)  # the final weights compete too
        metrics = dict(best.best_metrics)
        metrics["train_examples"] = len(dm.train_examples)
        metrics["val_examples"] = len(dm.val_examples)
        metrics["global_step"] = trainer.global_step
        metrics["world_size"] = trainer.world_size
        if trainer.is_global_zero:
            best_model = PremiseRetriever.from_pretrained(ckpt_dir, **self._module_kwargs())
            if cfg.ewc_lambda > 0:
                ewc = model.ewc
                fisher = EWC.estimate_fisher(
                    best_model.encoder,
                    dm.train_dataloader(),
                    lambda b: best_model.retrieval_loss(b),
                    cfg.ewc_batches,
                )
                ewc.consolidate(best_model.encoder, fisher, gamma=cfg.ewc_gamma)
                ewc.save(ckpt_dir / "ewc")
            if cfg.evaluate_after_repo:
                metrics.update(self._test_metrics(best_model, step.data_dir, dm))
            manifest.complete_repo(step.repo, metrics, ckpt_dir)
            self.retriever = best_model
            log.info(
                "repo %s done: %s",
                step.repo,
                {k: round(v, 4) for k, v in metrics.items() if isinstance(v, float)},
            )
        trainer.strategy.barrier()
        return metrics, ckpt_dir
