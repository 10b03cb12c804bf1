"""What :class:`SFTTrainer` and :class:`GRPOTrainer` share: config handling, model loading, one
lifelong step on a TRL trainer, evaluation, saving and suggestion. The loop over repositories
is :class:`leantrain.core.lifelong.LifelongEngine`'s; a trainer only trains one step of it.

A step trains in ``step.work_dir`` (the TRL trainer's ``output_dir``), so a killed step resumes
from its last ``checkpoint-*`` (optimizer, scheduler, RNG and step restored by the HF Trainer),
and appends every HF log dict as one JSON line to ``step.log_file``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from leantrain.core.atomic import atomic_write_json
from leantrain.core.config import config_from_dict, resolve
from leantrain.core.errors import ConfigError, DataError
from leantrain.core.lifelong import Fits, Step, last_complete_checkpoint, step_name
from leantrain.llm.lm_head import labelled_positions_only
from leantrain.llm.lora import check_target_modules, resolve_lora_config
from leantrain.llm.memory import prepare_training
from leantrain.llm.model_loading import load_model_and_tokenizer
from transformers import TrainerCallback
from transformers.trainer_callback import PrinterCallback, ProgressCallback

log = logging.getLogger("leantrain.llm")


class JsonlLogCallback(TrainerCallback):
    """Appends each HF log dict as ``{"step": N, ...}`` to a JSON-lines file and logs it to the
    ``leantrain.llm`` logger (stdout stays free for the CLI's JSON)."""

    def __init__(self, path: Path | None, label: str = "") -> None:
        self.path, self.label = path, label

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> None:
        if not logs or not state.is_world_process_zero:
            return
        line = {"step": state.global_step, **logs}
        log.info(
            "%s step %d: %s",
            self.label,
            state.global_step,
            " ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in logs.items()
            ),
        )
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(line, default=str) + "\n")


class _ProgressBarOnly(ProgressCallback):
    """HF's progress bar (stderr) without its ``tqdm.write`` of every log dict to stdout."""

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> None:
        pass


def parameter_counts(model: Any) -> tuple[int, int]:
    """``(trainable, total)`` parameters of ``model`` (with LoRA: the adapter's, and all)."""
    params = list(model.parameters())
    return sum(p.numel() for p in params if p.requires_grad), sum(p.numel() for p in params)


def _logged_mean(history: list[dict[str, Any]], key: str) -> float | None:
    """Step-weighted mean of the logged values of ``key`` (each covers the steps since the last)."""
    total, steps, previous = 0.0, 0, 0
    for entry in history:
        if key in entry:
            weight = entry["step"] - previous
            total, steps, previous = total + entry[key] * weight, steps + weight, entry["step"]
    return total / steps if steps else None


class LLMTrainer(Fits):
    """Base of the trainers; implements :class:`leantrain.core.lifelong.LifelongTrainer`.
    Subclasses set ``name`` and ``config_class`` and implement :meth:`_dataset` and
    :meth:`_trl_trainer`."""

    name: ClassVar[str] = "llm"
    config_class: ClassVar[type] = object
    score_key: ClassVar[str] = "eval_loss"
    higher_is_better: ClassVar[bool] = False

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
        values = {k: v for k, v in seeds.items() if v is not None}
        values = resolve(self.config_class, {**values, **overrides}, source=self.name)
        self.config = self._build_config(config, values)
        self.lora = (
            resolve_lora_config(lora_config)
            if lora_config is not None
            else self.config.lora_config()
        )
        self.callbacks = list(callbacks or [])
        self._model: Any = None
        self._tokenizer: Any = None
        self._trained: tuple[Path, str] | None = None  # (trainer dir, step name) of the model
        self.last_data: Any = None  # the data of the last step trained
        self._prompt: Any = None  # the ModelPrompt the model is trained / asked with

    # -- configuration ------------------------------------------------------------------------
    def _build_config(self, config: Any, values: dict[str, Any]) -> Any:
        cls = self.config_class
        if config is None or isinstance(config, Mapping):
            given = resolve(cls, dict(config or {}), source=cls.__name__)
            return config_from_dict(cls, {**given, **values}, source=cls.__name__)
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
        self._trained = None

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

    @property
    def prompt(self) -> Any:
        """The :class:`~leantrain.tactics.model_prompt.ModelPrompt` the model is trained and
        asked with: the config's explicit settings over the ``prompt.json`` of the model it
        started from (:func:`~leantrain.llm.training_data.model_prompt`); saved beside it."""
        if self._prompt is None:
            from leantrain.llm.training_data import model_prompt

            # (in mode whole, the default system prompt is the whole-proof one: resolve_prompt)
            self._prompt = model_prompt(self.config)
        return self._prompt

    def save(self, path: Path) -> None:
        """Save the model (only the adapter for LoRA), tokenizer, ``prompt.json`` and
        ``leantrain_model.json``."""
        from leantrain.tactics.model_prompt import write_prompt

        path = Path(path)
        self.model.save_pretrained(path, safe_serialization=True)
        self.tokenizer.save_pretrained(path)
        write_prompt(path, self.prompt)
        atomic_write_json(
            path / "leantrain_model.json",
            {"trainer": self.name, "base_model": self.config.model_name},
        )

    def load(self, path: Path) -> None:
        """Make the model saved at ``path`` the current one (asked with its ``prompt.json``)."""
        from leantrain.tactics.model_prompt import read_prompt

        self._load(path)
        self._prompt = read_prompt(path) or self._prompt

    @classmethod
    def from_pretrained(cls, path: str | Path, **kwargs: Any) -> LLMTrainer:
        """A trainer whose model is loaded from ``path`` (model dir, adapter dir or run dir)."""
        trainer = cls(model_name=str(path), **kwargs)
        trainer._load(path)
        return trainer

    # -- training -----------------------------------------------------------------------------
    def fit_options(self) -> dict[str, Any]:
        """What ``evaluate()`` scores after each step: the configured ``eval_split``."""
        return {"eval_split": self.config.eval_split}

    def train_step(self, step: Step) -> dict[str, Any]:
        """Train one step on ``step.data`` from ``step.init_from`` (or the configured model);
        continues from the last ``checkpoint-*`` in ``step.work_dir`` if a run was killed."""
        from leantrain.llm.training_data import guard

        guard(step.data, self.config)  # the contamination guard, before any model is loaded
        if step.init_from is None:
            self.model  # noqa: B018 - the configured model, or the one trained so far
        else:
            from leantrain.llm.training_data import model_prompt

            # the prompt of the checkpoint trained on; its own run's previous one must resolve
            # to the same retriever checkpoint (a retrieval run may have trained on since)
            own = step.init_from.parent.name == self.name
            self._prompt = model_prompt(self.config, step.init_from, in_run=own)
            if (step.init_from.parent, step.init_from.name) != self._trained:
                self._load(step.init_from)
        self.last_data = step.data  # what evaluate() defaults to after a lifelong run
        dataset = self._dataset(step.data)
        if len(dataset) == 0:
            raise DataError(
                str(step.data), "no training examples", hint="check the split and the filters"
            )
        args = copy.copy(self.config)
        args.output_dir = str(step.work_dir)
        label = f"{self.name} {step_name(step.index, step.repo)}"
        callbacks = [JsonlLogCallback(step.log_file, label), *self.callbacks, *step.callbacks]
        trainer = self._trl_trainer(dataset, args, callbacks)
        trainer.remove_callback(PrinterCallback)
        if trainer.pop_callback(ProgressCallback) is not None:
            trainer.add_callback(_ProgressBarOnly)
        resume = last_complete_checkpoint(step.work_dir)  # not one a kill cut off
        prepare_training(trainer)  # on a CPU, freed activations go back to the OS (glibc)
        with labelled_positions_only():  # the LM head skips prompt positions on a CPU too
            output = trainer.train(resume_from_checkpoint=resume)
        self._model = getattr(trainer.model, "module", trainer.model)
        self._trained = (step.work_dir.parent.parent, step_name(step.index, step.repo))
        history = trainer.state.log_history
        losses = [e["loss"] for e in history if "loss" in e]
        # logged once trained, so that an error before or during training stays one line
        trainable, total = parameter_counts(self._model)
        log.info(
            "%s: trained %s of %s parameters (%.2f%%)%s",
            label,
            f"{trainable:,}",
            f"{total:,}",
            100 * trainable / max(total, 1),
            " (LoRA)" if self.lora is not None else "",
        )
        return {
            # after a resume HF averages only the steps of this call: use the logged losses
            "train_loss": output.training_loss if resume is None else _logged_mean(history, "loss"),
            "first_loss": losses[0] if losses else None,
            "last_loss": losses[-1] if losses else None,
            "global_step": trainer.state.global_step,
            "num_examples": len(dataset),
            "trainable_parameters": trainable,
            "parameters": total,
            **self._extra_metrics(history),
        }

    def _dataset(self, data: Any) -> Any:
        raise NotImplementedError

    def _trl_trainer(self, dataset: Any, args: Any, callbacks: list[Any]) -> Any:
        raise NotImplementedError

    def _extra_metrics(self, history: list[dict[str, Any]]) -> dict[str, Any]:
        return {}

    # -- evaluation ---------------------------------------------------------------------------
    def evaluate(self, data: Any = None, split: str = "test") -> dict[str, float]:
        """``eval_loss``, ``top1_accuracy``, ``top{k}_accuracy`` on ``split`` of ``data`` (an
        export dir or a ``Dataset``; default: ``config.data_path``, else the data of the last step
        trained, e.g. the merged export of a lifelong run). A whole-proof model (``mode``
        ``"whole"``) is evaluated on the whole proofs of the split: ``eval_loss`` is the loss
        on the proof tokens, the accuracies exact matches of the whole proof."""
        from leantrain.llm.evaluation import evaluate_pairs
        from leantrain.llm.training_data import load_rl_dataset, load_whole_dataset, references

        if data is None:
            data = self.config.data_path if self.config.data_path is not None else self.last_data
        if data is None:
            raise ConfigError("nothing to evaluate on", hint="pass data=… (--data DIR)")
        whole = self.prompt.mode == "whole"  # the held-out proofs: loss and exact match
        dataset = (load_whole_dataset if whole else load_rl_dataset)(
            data, split, self.config, max_samples=self.config.max_eval_samples, prompt=self.prompt
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

        prompt = self.prompt
        if prompt.mode == "whole":
            raise ConfigError(
                "suggest_tactics asks for one tactic, and this model writes whole proofs",
                hint="prove with it: leantrain prove --mode whole --generator RUN",
            )
        if prompt.retriever is not None:
            # a premise-free prompt would not be the training one: refuse, never ask silently
            raise ConfigError(
                "suggest_tactics does not retrieve premises, and this model trains with "
                f"retriever={prompt.retriever}",
                hint="prove with the retriever: leantrain prove --generator RUN (leantrain.prover)",
            )
        from leantrain.tactics import build_messages

        messages = build_messages(state, prompt.system_prompt)
        return generate_tactics(
            self.model,
            self.tokenizer,
            [messages],
            k=k,
            max_new_tokens=self.config.eval_max_new_tokens,
        )[0][:k]
