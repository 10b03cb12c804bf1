"""The lifelong training loop shared by :class:`SFTTrainer` and :class:`GRPOTrainer`.

A run directory holds ``manifest.json`` (completed repos, position, metrics, checksummed
checkpoints), ``stages/NNN/`` (the HF Trainer's resumable ``checkpoint-*`` dirs of stage NNN),
``checkpoints/repo-NNN/`` (the model after repo NNN) and ``model/`` (the final model).
A killed run restarts from the last completed repo's model and, inside the interrupted repo,
from its last step checkpoint (optimizer, scheduler, RNG and step restored by the HF Trainer).
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from leantrain.core.atomic import atomic_directory, atomic_write_json
from leantrain.core.config import config_from_dict, config_to_dict
from leantrain.core.errors import ConfigError, LeanTrainError
from leantrain.core.manifest import RunManifest
from leantrain.llm.lora import check_target_modules, resolve_lora_config
from leantrain.llm.model_loading import FINAL_MODEL_DIR, load_model_and_tokenizer

_SEED_ALIASES = {"batch_size": "per_device_train_batch_size", "lr": "learning_rate"}


def is_main_process() -> bool:
    """Rank 0 (or not distributed): the one process that writes manifests and final models."""
    return int(os.environ.get("RANK", "0")) == 0


def _barrier() -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def _manifest_callback(manifest: RunManifest | None, stage: int, repo: str) -> Any:
    from transformers import TrainerCallback

    class ManifestCallback(TrainerCallback):
        """Records each step checkpoint (with checksums) and the position after every save."""

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if manifest is None or not state.is_world_process_zero:
                return
            path = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if path.is_dir():
                manifest.add_checkpoint(
                    path, kind="step", stage=stage, repo=repo, step=state.global_step, save=False
                )
                # the trainer prunes old checkpoint dirs (save_total_limit): forget those entries
                manifest.data["checkpoints"] = [
                    c
                    for c in manifest.data["checkpoints"]
                    if c.get("kind") != "step" or manifest.checkpoint_path(c).is_dir()
                ]
            manifest.set_position(repo=repo, repo_index=stage, step=state.global_step)

    return ManifestCallback()


class LifelongTrainer:
    """Base of the trainers: config handling, model loading, the lifelong loop, resume, saving,
    evaluation and suggestion. Subclasses implement :meth:`_train_stage`."""

    kind: ClassVar[str] = "llm"
    config_class: ClassVar[type] = object

    def __init__(
        self,
        model_name: str | None = None,
        output_dir: str | Path | None = None,
        epochs_per_repo: float | None = None,
        batch_size: int | None = None,
        lr: float | None = None,
        lora_config: Any = None,
        *,
        config: Any = None,
        callbacks: Sequence[Any] | None = None,
        **overrides: Any,
    ) -> None:
        seeds = {
            "model_name": model_name,
            "output_dir": None if output_dir is None else str(output_dir),
            "epochs_per_repo": epochs_per_repo,
            "batch_size": batch_size,
            "lr": lr,
        }
        values = {_SEED_ALIASES.get(k, k): v for k, v in seeds.items() if v is not None}
        values.update({_SEED_ALIASES.get(k, k): v for k, v in overrides.items()})
        self.config = self._build_config(config, values)
        self.lora = (
            resolve_lora_config(lora_config)
            if lora_config is not None
            else self.config.lora_config()
        )
        self.callbacks = list(callbacks or [])
        self._model: Any = None
        self._tokenizer: Any = None
        self._last_data: Any = None

    # -- configuration ------------------------------------------------------------------------
    def _build_config(self, config: Any, values: dict[str, Any]) -> Any:
        cls = self.config_class
        if config is None or isinstance(config, Mapping):
            return config_from_dict(cls, {**dict(config or {}), **values}, source=f"{cls.__name__}")
        if not isinstance(config, cls):
            raise ConfigError(
                f"config must be a {cls.__name__} or a dict, got {type(config).__name__}"
            )
        config = copy.copy(config)
        names = {f.name for f in dataclasses.fields(cls)}
        for key, value in values.items():
            if key not in names:
                raise ConfigError(f"unknown {cls.__name__} key '{key}'")
            setattr(config, key, value)
        if "epochs_per_repo" in values:
            config.num_train_epochs = values["epochs_per_repo"]
        self._after_overrides(config, values)
        return config

    def _after_overrides(self, config: Any, values: dict[str, Any]) -> None:
        """Hook: re-derive dependent settings after overrides of a ready config."""

    @property
    def output_dir(self) -> Path:
        return Path(self.config.output_dir)

    # -- model --------------------------------------------------------------------------------
    def _load(self, source: str | Path) -> None:
        model, tokenizer = load_model_and_tokenizer(source)
        if self.lora is not None:
            from peft import PeftModel, get_peft_model

            if not isinstance(model, PeftModel):
                check_target_modules(model, self.lora)
                model = get_peft_model(model, self.lora)
        self._model, self._tokenizer = model, tokenizer

    @property
    def model(self) -> Any:
        """The policy model (loaded on first use)."""
        if self._model is None:
            self._load(self.config.model_name)
        return self._model

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            self._load(self.config.model_name)
        return self._tokenizer

    def save_model(self, path: str | Path) -> Path:
        """Save the model (only the adapter for LoRA) and tokenizer to ``path``, atomically."""
        path = Path(path)
        with atomic_directory(path) as tmp:
            self.model.save_pretrained(tmp, safe_serialization=True)
            self.tokenizer.save_pretrained(tmp)
            atomic_write_json(
                tmp / "leantrain_model.json",
                {"trainer": self.kind, "base_model": self.config.model_name},
            )
        return path

    @classmethod
    def from_pretrained(cls, path: str | Path, **kwargs: Any) -> LifelongTrainer:
        """A trainer whose model is loaded from ``path`` (model dir, adapter dir or run dir)."""
        trainer = cls(model_name=str(path), **kwargs)
        trainer._load(path)
        return trainer

    # -- training -----------------------------------------------------------------------------
    def train(
        self, repos: Any = None, database: Any = None, data_path: str | Path | None = None
    ) -> dict[str, Any]:
        """Train; returns ``{output_dir, per_repo, final, checkpoints, model_dir}``.

        * ``train(dataset_or_path)`` — one stage on a ``datasets.Dataset``, an export dir or a
          split file (default: ``config.data``);
        * ``train(repos, database, data_path)`` — lifelong: for each repo (default: the
          database's curriculum) export the merged data of the repos so far, train on it,
          checkpoint. Completed repos of an earlier (killed) run in the same output dir are
          skipped, and the interrupted one resumes from its last step checkpoint.
        """
        database = database if database is not None else self.config.database
        if database is None:
            data = repos if repos is not None else self.config.data
            if data is None:
                raise ConfigError(
                    "no training data",
                    hint="pass a dataset or export dir (--data DIR), or repos and a database",
                )
            if isinstance(data, (list, tuple)):
                raise ConfigError(
                    "a list of repos needs a database", hint="pass database=… (--database lt.db)"
                )
            repo_id = (
                "dataset" if not isinstance(data, (str, Path)) else f"data:{Path(data).resolve()}"
            )
            return self._run([(0, repo_id, data)])
        repo_list = list(repos) if repos is not None else self.config.repos
        return self._run_lifelong(repo_list, database, data_path)

    def _run_lifelong(
        self, repos: list[str] | None, database: Any, data_path: Any
    ) -> dict[str, Any]:
        from leantrain.export import lifelong_exports

        manifest = self._manifest()
        data_path = Path(data_path or self.config.data_path or self.output_dir / "data")
        steps = lifelong_exports(database, repos, data_path, skip=manifest.completed_repos)
        return self._run(((s.index, s.repo, s.data_dir) for s in steps), manifest=manifest)

    def _manifest(self) -> RunManifest:
        return RunManifest.load_or_create(
            self.output_dir, kind=self.kind, config=config_to_dict(self.config)
        )

    def _run(self, stages: Any, manifest: RunManifest | None = None) -> dict[str, Any]:
        main = is_main_process()
        manifest = manifest or self._manifest()
        self._restore(manifest)
        checkpoints: list[str] = []
        for index, repo, data in stages:
            if manifest.is_repo_done(repo):
                continue
            stage_dir = self.output_dir / "stages" / f"{index:03d}"
            resume = self._resume_checkpoint(manifest, index)
            if main:
                manifest.set_position(
                    repo=repo,
                    repo_index=index,
                    step=0 if resume is None else manifest.data["position"].get("step", 0),
                )
            metrics = self._train_stage(
                data, stage_dir, resume, _manifest_callback(manifest if main else None, index, repo)
            )
            self._last_data = data
            metrics.update(self._stage_eval(data))
            ckpt = self.output_dir / "checkpoints" / f"repo-{index:03d}"
            if main:
                self.save_model(ckpt)
                manifest.add_checkpoint(ckpt, kind="repo", repo=repo, index=index, save=False)
                manifest.complete_repo(repo, metrics)
            _barrier()
            checkpoints.append(str(ckpt))
        final_dir = self.output_dir / FINAL_MODEL_DIR
        per_repo = manifest.data["metrics"].get("per_repo", {})
        final = per_repo[manifest.completed_repos[-1]] if manifest.completed_repos else {}
        if main:
            self.save_model(final_dir)
            manifest.add_checkpoint(final_dir, kind="final", save=False)
            manifest.data["status"] = "completed"
            manifest.set_metrics("final", final)
        _barrier()
        return {
            "output_dir": str(self.output_dir),
            "per_repo": per_repo,
            "final": final,
            "checkpoints": [
                str(manifest.checkpoint_path(c))
                for c in manifest.data["checkpoints"]
                if c.get("kind") == "repo"
            ]
            or checkpoints,
            "model_dir": str(final_dir),
        }

    def _restore(self, manifest: RunManifest) -> None:
        """Continue from the model of the last completed repo of an earlier run, if any."""
        entry = manifest.latest_checkpoint(kind="repo")
        if entry is not None and self._model is None:
            self._load(manifest.verify_checkpoint(entry))

    def _resume_checkpoint(self, manifest: RunManifest, stage: int) -> str | None:
        entry = manifest.latest_checkpoint(kind="step", stage=stage)
        if entry is None:
            return None
        return str(manifest.verify_checkpoint(entry))

    def _train_stage(
        self, data: Any, stage_dir: Path, resume: str | None, callback: Any
    ) -> dict[str, Any]:
        raise NotImplementedError

    def _stage_args(self, stage_dir: Path) -> Any:
        args = copy.copy(self.config)
        args.output_dir = str(stage_dir)
        return args

    # -- evaluation ---------------------------------------------------------------------------
    def _stage_eval(self, data: Any) -> dict[str, Any]:
        from leantrain.llm.training_data import has_split

        split = self.config.eval_split
        if (
            not split
            or not isinstance(data, (str, Path))
            or not has_split(data, split, self.config)
            or Path(data).is_file()
        ):
            return {}
        try:
            metrics = self.evaluate(split, data=data)
        except LeanTrainError:
            return {}  # an empty eval split is not a reason to lose the trained repo
        return {f"{split}_{k}": v for k, v in metrics.items()}

    def evaluate(self, split: str = "test", data: Any = None) -> dict[str, float]:
        """``eval_loss``, ``top1_accuracy``, ``top{k}_accuracy`` on ``split`` of ``data``
        (default: ``config.data`` or the last trained export)."""
        from leantrain.llm.evaluation import evaluate_pairs
        from leantrain.llm.training_data import load_rl_dataset, references

        data = data if data is not None else (self.config.data or self._last_data)
        if data is None:
            raise ConfigError("nothing to evaluate on", hint="pass data=… (--data DIR)")
        dataset = load_rl_dataset(
            data, split, self.config, max_samples=self.config.max_eval_samples
        )
        return evaluate_pairs(
            self.model,
            self.tokenizer,
            references(dataset),
            k=self.config.eval_k,
            max_new_tokens=self.config.eval_max_new_tokens,
        )

    def suggest_tactics(self, state: str, k: int = 4) -> list[str]:
        """Up to ``k`` distinct tactics for a proof state, best first, prompted as in training."""
        from leantrain.llm.evaluation import generate_tactics
        from leantrain.tactics import DEFAULT_SYSTEM_PROMPT, build_messages

        prompt = (
            self.config.system_prompt
            if self.config.system_prompt is not None
            else DEFAULT_SYSTEM_PROMPT
        )
        messages = build_messages(state, prompt)
        return generate_tactics(
            self.model,
            self.tokenizer,
            [messages],
            k=k,
            max_new_tokens=self.config.eval_max_new_tokens,
        )[0][:k]
