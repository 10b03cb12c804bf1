"""``ProgressTrainer``: fine-tune a sequence regressor to predict the proof steps remaining.

LeanDojo-v2's trainer with its constructor and defaults, fixed and extended:

* best checkpoint = *lowest* eval MSE (``greater_is_better=False``; LeanDojo-v2 kept the worst);
* ``processing_class=`` (transformers 5 removed ``tokenizer=``);
* dynamic padding and length-grouped batches instead of padding every row to ``max_length``;
* MSE, MAE, accuracy within ±1 step and MAE per steps-remaining bin;
* lifelong training over repositories with per-repository checkpoints and resume.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_directory
from leantrain.core.config import config_from_dict, config_to_dict
from leantrain.core.errors import CheckpointError, DataError
from leantrain.core.manifest import RunManifest
from leantrain.progress.dataset import ProgressDataset, build_text, load_progress_data
from leantrain.progress.metrics import compute_metrics
from leantrain.progress.predictor import ProgressPredictor
from leantrain.progress.progress_config import ProgressConfig
from leantrain.progress.tiny_model import TINY_NAME, build_tiny_model, build_tiny_tokenizer

log = logging.getLogger("leantrain.progress")

_HF_DIR = "hf-checkpoints"
_MODEL_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)


def _bf16_supported() -> bool:
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text.rsplit("/", 1)[-1])[:60].strip("-") or "repo"


def _save_flat(model: Any, tokenizer: Any, target: Path) -> None:
    """Save model + tokenizer into ``target`` file by file, each file replaced atomically.

    ``target`` is also the run directory (manifest, checkpoints), so it cannot be swapped as a
    whole; building in a temp dir and renaming each file means no file is ever half-written.
    """
    target.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target, prefix=".model.tmp-"))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        # Weights last: config and tokenizer of the new model never sit beside a missing file.
        files = sorted(tmp.iterdir(), key=lambda p: p.suffix == ".safetensors")
        for f in files:
            os.replace(f, target / f.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _stderr_logs() -> Any:
    """A callback logging each log dict as one line to the ``leantrain.progress`` logger (shown on
    stderr by the CLI; silent in library use unless logging is configured). Built lazily: no
    transformers import when the CLI only registers its commands."""
    from transformers import TrainerCallback

    class StderrLogs(TrainerCallback):
        """Prints each log dict as one compact line on stderr."""

        def on_log(
            self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any
        ) -> None:
            if logs and state.is_world_process_zero:
                items = ", ".join(
                    f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in logs.items()
                )
                log.info("[progress] step %s: %s", state.global_step, items)

    return StderrLogs()


class ProgressTrainer:
    """Train the LeanProgress steps-remaining regressor.

    ``ProgressTrainer(data_path, model_name="bert-base-uncased", output_dir="outputs",
    max_length=512, batch_size=8, epochs=3.0, learning_rate=1e-5, eval_ratio=0.2, seed=42,
    **options)`` — the seed's signature; ``options`` are further :class:`ProgressConfig` keys.
    Or ``ProgressTrainer(config=ProgressConfig(...))``. ``model_name="tiny"`` builds a small BERT
    and a WordPiece tokenizer from the training data, offline.
    """

    def __init__(
        self,
        data_path: str | Path | None = None,
        model_name: str = "bert-base-uncased",
        output_dir: str | Path = "outputs",
        max_length: int = 512,
        batch_size: int = 8,
        epochs: float = 3.0,
        learning_rate: float = 1e-5,
        eval_ratio: float = 0.2,
        seed: int = 42,
        *,
        config: ProgressConfig | None = None,
        **options: Any,
    ) -> None:
        if config is None:
            values = {
                "data_path": None if data_path is None else str(data_path),
                "model_name": model_name,
                "output_dir": str(output_dir),
                "max_length": max_length,
                "batch_size": batch_size,
                "epochs": float(epochs),
                "learning_rate": float(learning_rate),
                "eval_ratio": float(eval_ratio),
                "seed": seed,
                **options,
            }
            config = config_from_dict(ProgressConfig, values, source="ProgressTrainer")
        elif options:
            config = dataclasses.replace(config, **options)
        self.config = config
        self.model: Any = None
        self.tokenizer: Any = None
        self.trainer: Any = None  # the transformers Trainer of the last fit
        self.callbacks: list[Any] = []  # extra transformers TrainerCallbacks for every fit

    @classmethod
    def from_pretrained(cls, path: str | Path, **options: Any) -> ProgressTrainer:
        """A trainer that continues from a trained model directory."""
        options.setdefault("output_dir", str(path))
        trainer = cls(model_name=str(path), **options)
        trainer._load(str(path))
        return trainer

    @property
    def output_dir(self) -> Path:
        return Path(self.config.output_dir)

    # -- model -------------------------------------------------------------------------------
    def _load(self, name: str) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(name, trust_remote_code=False)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.cls_token
        self.model = AutoModelForSequenceClassification.from_pretrained(
            name, num_labels=1, problem_type="regression", trust_remote_code=False
        )
        if self.model.config.pad_token_id is None:
            self.model.config.pad_token_id = self.tokenizer.pad_token_id

    def _ensure_model(self, texts: Sequence[str]) -> None:
        if self.model is not None:
            return
        cfg = self.config
        if cfg.model_name == TINY_NAME:
            self.tokenizer = build_tiny_tokenizer(
                texts, vocab_size=cfg.tiny_vocab_size, max_length=cfg.max_length
            )
            self.model = build_tiny_model(
                self.tokenizer,
                hidden_size=cfg.tiny_hidden_size,
                num_layers=cfg.tiny_layers,
                max_length=cfg.max_length,
                seed=cfg.seed,
            )
        else:
            self._load(cfg.model_name)

    # -- data --------------------------------------------------------------------------------
    def load_rows(self, data_path: str | Path | None = None) -> list[dict[str, Any]]:
        """Progress rows of ``data_path`` (default: ``config.data_path``)."""
        path = data_path if data_path is not None else self.config.data_path
        if path is None:
            raise DataError(None, "no training data given", hint="set data_path (--data FILE)")
        return load_progress_data(
            path, splits=self.config.split, sorry_policy=self.config.sorry_policy
        )

    def encode(self, dataset: ProgressDataset) -> Any:
        """Tokenised ``datasets.Dataset`` (input ids, float labels); padded only if configured."""
        cfg, tok = self.config, self.tokenizer
        pad = "max_length" if cfg.padding == "max_length" else False

        def encode_batch(batch: dict[str, list[Any]]) -> dict[str, Any]:
            texts = [
                build_text(g, p, t)
                for g, p, t in zip(batch["goal"], batch["prefix"], batch["tactic"])
            ]
            enc = tok(texts, truncation=True, max_length=cfg.max_length, padding=pad)
            enc["labels"] = [float(x) for x in batch["steps_remaining"]]
            return dict(enc)

        hf = dataset.to_hf()
        return hf.map(encode_batch, batched=True, remove_columns=hf.column_names)

    # -- training ----------------------------------------------------------------------------
    def _training_args(self, hf_dir: Path, has_eval: bool) -> Any:
        from transformers import TrainingArguments

        cfg = self.config
        strategy = cfg.eval_strategy if has_eval else "no"
        bf16 = _bf16_supported() if cfg.bf16 is None else cfg.bf16
        return TrainingArguments(
            output_dir=str(hf_dir),
            learning_rate=cfg.learning_rate,
            per_device_train_batch_size=cfg.batch_size,
            per_device_eval_batch_size=cfg.batch_size,
            gradient_accumulation_steps=cfg.gradient_accumulation_steps,
            num_train_epochs=cfg.epochs,
            max_steps=cfg.max_steps,
            weight_decay=cfg.weight_decay,
            warmup_steps=cfg.warmup_ratio,  # transformers 5: a float < 1 is a ratio of all steps
            eval_strategy=strategy,
            eval_steps=cfg.eval_steps,
            save_strategy=cfg.eval_strategy if has_eval else "epoch",
            save_steps=cfg.eval_steps if cfg.eval_strategy == "steps" else None,
            save_total_limit=2,
            load_best_model_at_end=has_eval,
            metric_for_best_model="mse" if has_eval else None,
            greater_is_better=False if has_eval else None,  # lower MSE is better
            train_sampling_strategy="group_by_length" if cfg.group_by_length else "random",
            logging_steps=cfg.logging_steps,
            report_to="none",
            seed=cfg.seed,
            data_seed=cfg.seed,
            bf16=bf16,
            dataloader_pin_memory=False,
            disable_tqdm=True,
        )

    def _fit(self, rows: Sequence[dict[str, Any]], hf_dir: Path) -> dict[str, Any]:
        """Train on ``rows`` (split into train/eval); resumes from a checkpoint in ``hf_dir``."""
        from transformers import DataCollatorWithPadding, Trainer
        from transformers.trainer_utils import get_last_checkpoint

        cfg = self.config
        if cfg.eval_data_path is not None:
            train_ds = ProgressDataset(rows=rows)
            eval_ds = ProgressDataset(
                cfg.eval_data_path, splits=["val"], sorry_policy=cfg.sorry_policy
            )
        else:
            train_ds, eval_ds = ProgressDataset(rows=rows).split(cfg.eval_ratio, cfg.seed)
        last = get_last_checkpoint(str(hf_dir)) if cfg.resume and hf_dir.is_dir() else None
        if last is not None and self.model is None:
            self._load(last)  # a killed run resumes with the same tokenizer and weights
        self._ensure_model(train_ds.texts())
        has_eval = len(eval_ds) > 0
        trainer = Trainer(
            model=self.model,
            args=self._training_args(hf_dir, has_eval),
            train_dataset=self.encode(train_ds),
            eval_dataset=self.encode(eval_ds) if has_eval else None,
            processing_class=self.tokenizer,
            data_collator=DataCollatorWithPadding(self.tokenizer),
            compute_metrics=compute_metrics,
        )
        # Keep stdout for results (the CLI prints JSON there): training logs go to stderr.
        from transformers.trainer_callback import PrinterCallback

        trainer.remove_callback(PrinterCallback)
        trainer.add_callback(_stderr_logs())
        for callback in self.callbacks:
            trainer.add_callback(callback)
        train_out = trainer.train(resume_from_checkpoint=last)
        self.trainer = trainer
        self.model = trainer.model
        evals = [h for h in trainer.state.log_history if "eval_mse" in h]
        final = trainer.evaluate() if has_eval else {}
        return {
            "train_rows": len(train_ds),
            "eval_rows": len(eval_ds),
            "train_loss": float(train_out.training_loss),
            "train_samples_per_second": float(
                train_out.metrics.get("train_samples_per_second", 0.0)
            ),
            "train_runtime": float(train_out.metrics.get("train_runtime", 0.0)),
            "global_step": int(trainer.state.global_step),
            "best_mse": trainer.state.best_metric,
            "best_checkpoint": trainer.state.best_model_checkpoint,
            "eval_history": [
                {"epoch": h.get("epoch"), "step": h.get("step"), "mse": h["eval_mse"]}
                for h in evals
            ],
            "eval": {k.removeprefix("eval_"): v for k, v in final.items()},
        }

    def train(
        self,
        repos: Sequence[str] | None = None,
        database: Any = None,
        data_path: str | Path | None = None,
    ) -> dict[str, Any]:
        """Train and save the best (lowest eval MSE) model to ``output_dir``; returns a result dict.

        Without ``repos``: one run on ``config.data_path``. With ``repos`` and ``database`` (a
        ``leantrain.export.Database`` or its path): lifelong — for each repository in order, the
        merged export of the repositories so far is written under ``data_path`` and the model
        continues training on it; a checkpoint is written and recorded after each repository,
        and a rerun skips the repositories the manifest has finished.
        """
        if repos is not None:
            return self._train_lifelong(repos, database, data_path)
        cfg = self.config
        rows = self.load_rows(data_path)
        out = self.output_dir
        manifest = RunManifest.load_or_create(out, kind="progress", config=config_to_dict(cfg))
        manifest.set_position(stage="train", rows=len(rows))
        fit = self._fit(rows, out / _HF_DIR)
        _save_flat(self.model, self.tokenizer, out)
        # The saved best model stands for the run; keeping the Trainer's checkpoints would make
        # a later run on this output_dir "resume" a finished training.
        shutil.rmtree(out / _HF_DIR, ignore_errors=True)
        manifest.set_metrics("final", fit["eval"])
        manifest.data["status"] = "done"
        manifest.set_position(stage="done", step=fit["global_step"])
        return {
            "output_dir": str(out),
            "metrics": fit["eval"],
            "fit": fit,
            "checkpoints": [str(out)],
        }

    def _train_lifelong(
        self, repos: Sequence[str], database: Any, data_path: str | Path | None
    ) -> dict[str, Any]:
        from leantrain.export import lifelong_exports

        cfg, out = self.config, self.output_dir
        if database is None:
            raise DataError(
                None,
                "lifelong training needs a database",
                hint="pass database=Database(path) or its path",
            )
        data_root = Path(data_path) if data_path is not None else out / "data"
        manifest = RunManifest.load_or_create(
            out, kind="progress-lifelong", config=config_to_dict(cfg)
        )
        latest = manifest.latest_checkpoint()
        if latest is not None and self.model is None:
            self._load(str(manifest.verify_checkpoint(latest)))
        per_repo: dict[str, Any] = dict(manifest.data["metrics"].get("per_repo", {}))
        checkpoints = [str(manifest.checkpoint_path(c)) for c in manifest.data["checkpoints"]]
        for step in lifelong_exports(
            database, list(repos), data_root, skip=manifest.completed_repos
        ):
            manifest.set_position(repo=step.repo, repo_index=step.index)
            try:
                rows = load_progress_data(
                    step.data_dir, splits=cfg.split, sorry_policy=cfg.sorry_policy
                )
            except (
                DataError
            ) as e:  # e.g. a first repository without tactic proofs: nothing to learn yet
                manifest.complete_repo(step.repo, {"skipped": e.one_line()})
                per_repo[step.repo] = {"skipped": e.one_line()}
                continue
            hf_dir = out / _HF_DIR / f"{step.index:03d}"
            fit = self._fit(rows, hf_dir)
            ckpt = out / "checkpoints" / f"{step.index:03d}-{_slug(step.repo)}"
            with atomic_directory(ckpt) as tmp:
                self.model.save_pretrained(tmp)
                self.tokenizer.save_pretrained(tmp)
            metrics = {
                **fit["eval"],
                "train_rows": fit["train_rows"],
                "eval_rows": fit["eval_rows"],
            }
            manifest.complete_repo(step.repo, metrics, ckpt)
            shutil.rmtree(hf_dir, ignore_errors=True)  # the repo's checkpoint now stands for it
            per_repo[step.repo] = metrics
            checkpoints.append(str(ckpt))
        if self.model is None:
            raise CheckpointError(
                f"{out}: no repository produced a model",
                hint="check that the repositories have traced tactic proofs",
            )
        _save_flat(self.model, self.tokenizer, out)
        final = per_repo[manifest.completed_repos[-1]] if manifest.completed_repos else {}
        manifest.set_metrics("final", final)
        manifest.data["status"] = "done"
        manifest.save()
        return {
            "output_dir": str(out),
            "per_repo": per_repo,
            "metrics": final,
            "checkpoints": checkpoints,
        }

    # -- evaluation and saving -----------------------------------------------------------------
    def predictor(self) -> ProgressPredictor:
        """A predictor over the current in-memory model."""
        if self.model is None:
            raise CheckpointError(
                "no model yet", hint="train first or use ProgressTrainer.from_pretrained(dir)"
            )
        return ProgressPredictor(
            self.model,
            self.tokenizer,
            max_length=self.config.max_length,
            batch_size=self.config.batch_size * 4,
        )

    def evaluate(self, data_path: str | Path | None = None) -> dict[str, float]:
        """Metrics of the current model on the rows of ``data_path`` (default: ``config.data_path``)."""
        return self.predictor().evaluate(self.load_rows(data_path))

    def save_model(self, path: str | Path | None = None) -> Path:
        """Save model and tokenizer (safetensors + tokenizer.json) to ``path`` (default output_dir)."""
        target = Path(path) if path is not None else self.output_dir
        if self.model is None:
            raise CheckpointError("no model to save", hint="train first")
        _save_flat(self.model, self.tokenizer, target)
        return target
