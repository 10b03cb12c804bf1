"""``RetrievalTrainer``: trains a :class:`PremiseRetriever`, one step of the lifelong engine.

The loop over repositories is :class:`leantrain.core.lifelong.LifelongEngine`'s: it exports
the merged data of the repositories so far, calls :meth:`RetrievalTrainer.train_step` (start
from the previous repository's model, fit with Lightning, keep the best model by validation
R@10, estimate the Fisher for EWC), saves the model with :meth:`save` as
``<output_dir>/retrieval/NNN-<repo>/`` and scores it with :meth:`evaluate` on every repository
seen so far. A step killed mid-way resumes from its ``work_dir`` (Lightning's last checkpoint,
read back with ``weights_only=True``).

Checkpoints are plain HF encoder directories plus JSON and ``ewc/`` (safetensors).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import logging
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lightning as L
import torch
from leantrain.core.errors import ConfigError, LeanTrainError, MissingDependencyError
from leantrain.core.lifelong import Fits, Step, find_model
from leantrain.retrieval.datamodule import RetrievalDataModule
from leantrain.retrieval.ewc import EWC
from leantrain.retrieval.premise_retriever import PremiseRetriever
from leantrain.retrieval.retrieval_config import DataModuleArgs, RetrievalConfig, RetrieverArgs
from leantrain.retrieval.trainer_args import build_trainer

log = logging.getLogger("leantrain.retrieval")

NAME = "retrieval"
LAST_CKPT = "last.ckpt"


def resolve_model_dir(path: str | Path) -> Path:
    """A saved retriever directory, given it or a run directory (its newest retriever)."""
    return find_model(path, (NAME,)) or Path(path)


class BestRetrieverCheckpoint(L.Callback):
    """Saves the retriever (HF dir + JSON) whenever validation R@10 improves or ties (rank 0)."""

    def __init__(self, directory: Path, monitor: str = "val_R@10") -> None:
        self.directory = directory
        self.monitor = monitor
        self.best: float | None = None
        self.best_metrics: dict[str, float] = {}
        self.validated_step: int | None = None  # global step of the last validation

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        value = trainer.callback_metrics.get(self.monitor)
        if trainer.sanity_checking or value is None:
            return
        self.validated_step = trainer.global_step
        # ties go to the later (more trained) model: on small validation sets R@10 is often flat
        if self.best is None or float(value) >= self.best:
            self.best = float(value)
            self.best_metrics = {
                k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith("val_")
            }
            self.best_metrics["step"] = trainer.global_step
            if trainer.is_global_zero:
                pl_module.save_pretrained(self.directory)

    def state_dict(self) -> dict[str, Any]:  # restored when a killed step resumes
        return {"best": self.best, "best_metrics": self.best_metrics}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.best, self.best_metrics = state_dict["best"], dict(state_dict["best_metrics"])


class JsonlLog(L.Callback):
    """Appends ``{"step", "train_loss", …}`` lines (and validation metrics) to a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _write(self, trainer: L.Trainer, prefix: str) -> None:
        row = {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith(prefix)}
        if trainer.is_global_zero and row:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"step": trainer.global_step, **row}) + "\n")

    def on_train_batch_end(self, trainer: L.Trainer, *args: Any) -> None:
        if trainer.global_step % max(1, trainer.log_every_n_steps) == 0:
            self._write(trainer, "train_")

    def on_validation_end(self, trainer: L.Trainer, pl_module: Any) -> None:
        if not trainer.sanity_checking:
            self._write(trainer, "val_")


class RetrievalTrainer(Fits):
    """Trains the premise retriever; a :class:`~leantrain.core.lifelong.LifelongTrainer`."""

    name = NAME
    score_key = "R@10"
    higher_is_better = True

    def __init__(self, config: RetrievalConfig | None = None, **overrides: Any) -> None:
        if config is None:
            config = RetrievalConfig(**overrides)
        elif overrides:
            raise ConfigError("give either a RetrievalConfig or keyword overrides, not both")
        self.config = config
        self.output_dir = Path(config.output_dir)
        self.retriever: PremiseRetriever | None = None
        self.last_data: Any = None  # the data of the last step train() ran or resumed

    # -- public API ---------------------------------------------------------------------------
    def train_step(self, step: Step) -> dict[str, Any]:
        """Fit on ``step.data`` from ``step.init_from`` (or the configured encoder); the best
        model by validation R@10, with its EWC consolidated, becomes the current one."""
        cfg = self.config
        self.last_data = step.data  # what evaluate() defaults to after a lifelong run
        L.seed_everything(cfg.seed + step.index, workers=True, verbose=False)
        model = self._start_model(step.init_from)
        data_args = dataclasses.replace(cfg.part(DataModuleArgs), seed=cfg.seed + step.index)
        dm = RetrievalDataModule(step.data, model.tokenizer, data_args)
        from lightning.pytorch.callbacks import ModelCheckpoint

        best = BestRetrieverCheckpoint(step.work_dir / "best")
        callbacks = [
            best,
            # the resume point: written after each validation, with the best model beside it
            ModelCheckpoint(step.work_dir, LAST_CKPT[:-5], enable_version_counter=False),
            *[c for c in step.callbacks if isinstance(c, L.Callback)],
        ]
        if step.log_file is not None:
            callbacks.append(JsonlLog(step.log_file))
        resume = step.work_dir / LAST_CKPT
        resumed = resume.is_file()
        if resumed:
            log.info("resuming step %d from %s", step.index, resume)
        with _without_engine_chatter():
            trainer = self._lightning_trainer(step, callbacks)
            trainer.fit(
                model,
                datamodule=dm,
                ckpt_path=resume if resumed else None,
                weights_only=True,
            )
            if best.validated_step != trainer.global_step:  # the final weights compete too
                trainer.validate(model, datamodule=dm, verbose=False)
        metrics: dict[str, Any] = {
            **best.best_metrics,
            "train_examples": len(dm.train_examples),
            "val_examples": len(dm.val_examples),
            "global_step": trainer.global_step,
            "world_size": trainer.world_size,
            "resumed": resumed,
        }
        if trainer.is_global_zero:  # the engine saves and evaluates on rank 0 only
            device = trainer.strategy.root_device
            best_model = PremiseRetriever.from_pretrained(best.directory, self._model_args())
            best_model.ewc = model.ewc
            best_model.to(device)
            if cfg.ewc_lambda > 0:
                from lightning.fabric.utilities.apply_func import move_data_to_device

                fisher = EWC.estimate_fisher(
                    best_model.encoder,
                    dm.train_dataloader(),
                    lambda b: best_model.retrieval_loss(move_data_to_device(b, device)),
                    cfg.ewc_batches,
                )
                best_model.ewc.consolidate(best_model.encoder, fisher, gamma=cfg.ewc_gamma)
            self.retriever = best_model
        return metrics

    def evaluate(
        self, data: Any = None, split: str = "test", *, dataset_path: Any = None
    ) -> dict[str, float]:
        """R@1, R@10, MRR and ``count`` of the current model and of BM25 (``bm25_`` keys) on
        ``split`` of an export directory, and ``reachable_fraction`` (the fraction of positive
        premises accessible at all, shared by both): the random split's un-prefixed, the
        novel_premises split's prefixed ``novel_``. ``data`` (or LeanDojo-v2's
        ``dataset_path``) defaults to ``config.data_path``, else the data of the last step
        trained (the merged export of a lifelong run)."""
        from leantrain.retrieval.evaluation import evaluate_retriever

        last = self.last_data
        given = (data, dataset_path, self.config.data_path, last)
        data = next((d for d in given if d is not None), None)
        if data is None:
            raise ConfigError(
                "nothing to evaluate on", hint="pass an export dir: evaluate(data_dir, split)"
            )
        res = evaluate_retriever(self._model(), data, split_file=f"{split}.json", strict=False)
        return {
            f"{prefix}{tag}{name}": value
            for split_name, prefix in (("random", ""), ("novel_premises", "novel_"))
            for method, tag in (("retriever", ""), ("bm25", "bm25_"))
            for name, value in res.get(split_name, {}).get(method, {}).items()
            if not (tag and name == "reachable_fraction")
        }

    def save(self, path: str | Path) -> None:
        """Write the current model (``PremiseRetriever.from_pretrained(path)`` reloads it)."""
        self._model().save_pretrained(path)

    def load(self, path: str | Path) -> None:
        """Make the retriever saved at ``path`` (a model or a run directory) the current one."""
        device = "cuda" if torch.cuda.is_available() else "cpu"
        self.retriever = PremiseRetriever.from_pretrained(
            resolve_model_dir(path), self._model_args()
        ).to(device)

    # -- internals ----------------------------------------------------------------------------
    def _model(self) -> PremiseRetriever:
        if self.retriever is None:
            raise LeanTrainError("no trained retriever", hint="train() or load(path) first")
        return self.retriever

    def _model_args(self) -> RetrieverArgs:
        return self.config.part(RetrieverArgs)

    def _start_model(self, init_from: Path | None) -> PremiseRetriever:
        cfg = self.config
        if init_from is not None:
            log.info("continuing from the previous repo's checkpoint %s", init_from)
            model = PremiseRetriever.from_pretrained(init_from, self._model_args())
        else:
            name = cfg.model_name
            model = PremiseRetriever.from_name(
                str(resolve_model_dir(name)) if Path(name).exists() else name,
                tiny_d_model=cfg.tiny_d_model,
                tiny_layers=cfg.tiny_layers,
                allow_code=cfg.allow_code,
                args=self._model_args(),
            )
        if cfg.ewc_lambda <= 0:
            model.ewc = EWC()
        return model

    def _logger(self, step: Step) -> Any:
        choice = self.config.report_to
        if choice == "auto":
            installed = any(importlib.util.find_spec(m) for m in ("tensorboard", "tensorboardX"))
            choice = "tensorboard" if installed else "csv"
        if choice == "none":
            return False
        from lightning.pytorch import loggers

        if step.log_file is not None:  # beside the engine's JSON-lines log of the step
            root, version = step.log_file.parent, step.log_file.stem
        else:
            root, version = self.output_dir / NAME / "logs", f"{step.index:03d}"
        if choice in ("wandb", "mlflow"):  # the services' own clients, installed by the user
            if importlib.util.find_spec(choice) is None:
                raise MissingDependencyError(
                    f"report_to={choice} needs the Python package '{choice}'",
                    hint=f"pip install {choice} (or: uv add {choice})",
                )
            if choice == "wandb":
                return loggers.WandbLogger(name=version, save_dir=str(root))
            return loggers.MLFlowLogger(run_name=version, save_dir=str(root))
        cls = loggers.TensorBoardLogger if choice == "tensorboard" else loggers.CSVLogger
        return cls(root, name="", version=version)

    def _lightning_trainer(self, step: Step, callbacks: list[L.Callback]) -> L.Trainer:
        """The step's ``lightning.Trainer``: the ``trainer:`` section over leantrain's
        defaults (ReProver's clipping; bf16 where the GPU has it; 2 epochs unless steps are
        capped)."""
        user = self.config.trainer
        bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
        defaults: dict[str, Any] = {
            "precision": "bf16-mixed" if bf16 else "32-true",
            "max_epochs": 2 if user.get("max_steps", -1) in (-1, None) else -1,
            "gradient_clip_val": 1.0,
            "log_every_n_steps": 10,
            "num_sanity_val_steps": 0,
            "enable_model_summary": False,
            "enable_progress_bar": sys.stderr.isatty(),
            "logger": self._logger(step),
            "default_root_dir": step.work_dir,
            "callbacks": callbacks,
        }
        if isinstance(user.get("val_check_interval"), int):
            defaults["check_val_every_n_epoch"] = None  # every N steps, across epochs
        return build_trainer(user, **defaults)


class _DropLitLoggerTip(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "litlogger" not in record.getMessage()


@contextlib.contextmanager
def _without_engine_chatter() -> Iterator[None]:
    """Lightning's advertisement for its cloud logger and torch's deprecation of ``LeafSpec``
    (which Lightning itself uses) say nothing about the user's run: hidden while training,
    through the Python API as through the CLI. Nothing else is filtered, and the filters are
    removed afterwards."""
    rank_zero = logging.getLogger("lightning.pytorch.utilities.rank_zero")
    tip = _DropLitLoggerTip()
    rank_zero.addFilter(tip)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
            yield
    finally:
        rank_zero.removeFilter(tip)
