"""hello_agents-style training API (``hello_agents.rl``), thin over leantrain's trainers.

::

    from leantrain.llm.compat.hello_agents import (
        GRPOTrainerWrapper, SFTTrainerWrapper, create_accuracy_reward, create_rl_dataset,
        create_sft_dataset,
    )
    sft = SFTTrainerWrapper("tiny", create_sft_dataset(max_samples=32), "out/sft", num_epochs=1)
    print(sft.train()["output_dir"])

The wrappers build a :class:`~leantrain.llm.SFTTrainer` / :class:`~leantrain.llm.GRPOTrainer`
(so every leantrain option can be passed as a keyword, e.g. ``max_steps=20``) and train it on
the given ``datasets.Dataset``. The datasets are Lean tactic data, not GSM8K: the export dir in
``data=``, else ``$LEANTRAIN_DATA``, else the sample repositories shipped with leantrain-core.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from leantrain.core.errors import ConfigError, LeanTrainError
from leantrain.llm.lora import create_lora_config

__all__ = [
    "DATA_ENV",
    "GRPOTrainerWrapper",
    "RLTrainingTool",
    "SFTTrainerWrapper",
    "create_accuracy_reward",
    "create_lora_config",
    "create_rl_dataset",
    "create_sft_dataset",
]

DATA_ENV = "LEANTRAIN_DATA"
"""Environment variable naming the export dir the dataset helpers read by default."""


# -- datasets -----------------------------------------------------------------------------------
def _sources(data: str | Path | None) -> list[Path]:
    if data is not None:
        return [Path(data)]
    if os.environ.get(DATA_ENV):
        return [Path(os.environ[DATA_ENV])]
    from leantrain.core.sample import sample_repo_dirs

    return sample_repo_dirs()


def _load(kind: str, split: str, max_samples: int | None, data: str | Path | None) -> Any:
    import datasets
    from leantrain.tactics import create_rl_dataset as rl
    from leantrain.tactics import create_sft_dataset as sft

    if max_samples is not None and max_samples < 1:
        raise ConfigError(f"max_samples must be a positive integer or None, got {max_samples}")
    parts: list[Any] = []
    left = max_samples
    for source in _sources(data):
        if not source.exists():
            raise ConfigError(
                f"data not found: {source}", hint=f"give an export dir (data=… or ${DATA_ENV})"
            )
        part = (sft if kind == "sft" else rl)(source, split, left).to_hf()
        parts.append(part)
        if left is not None:
            left -= len(part)
            if left <= 0:
                break
    return parts[0] if len(parts) == 1 else datasets.concatenate_datasets(parts)


def create_sft_dataset(
    max_samples: int | None = 1000, split: str = "train", *, data: str | Path | None = None
) -> Any:
    """SFT rows (``prompt`` / ``completion`` chat messages) of ``split`` as a ``Dataset``."""
    return _load("sft", split, max_samples, data)


def create_rl_dataset(
    max_samples: int | None = 500,
    split: str = "train",
    model_name: str | None = None,
    *,
    data: str | Path | None = None,
) -> Any:
    """GRPO rows of ``split``: chat ``prompt``, ``problem`` (the proof state), ``reference`` and
    ``ground_truth`` (both the traced tactic) and the theorem's identity. ``model_name`` is
    accepted for hello_agents' signature; the trainer applies the model's chat template."""
    del model_name
    dataset = _load("rl", split, max_samples, data)
    return dataset.add_column("ground_truth", list(dataset["reference"]))


# -- reward -------------------------------------------------------------------------------------
def create_accuracy_reward() -> Callable[..., list[float]]:
    """A reward: 1.0 when the tactic equals the row's ``ground_truth`` (else ``reference``)
    after collapsing whitespace, 0.0 otherwise."""
    from leantrain.core.lean_text import normalize_whitespace
    from leantrain.llm.rewards.columns import column

    def accuracy_reward(completions: Sequence[str], **kwargs: Any) -> list[float]:
        name = "ground_truth" if kwargs.get("ground_truth") is not None else "reference"
        truths = column(kwargs, name, len(completions), "accuracy")
        return [
            float(normalize_whitespace(str(c).strip()) == normalize_whitespace(str(t).strip()))
            for c, t in zip(completions, truths)
        ]

    return accuracy_reward


# -- trainers -----------------------------------------------------------------------------------
def _lora(use_lora: bool, lora_config: Any) -> Any:
    return lora_config if lora_config is not None else (True if use_lora else None)


def _trainer_kwargs(
    model_name: str,
    output_dir: str | Path,
    num_epochs: float,
    batch_size: int,
    learning_rate: float,
    use_lora: bool,
    lora_config: Any,
) -> dict[str, Any]:
    """hello_agents' wrapper arguments as leantrain trainer keys (shared by both wrappers)."""
    return {
        "model_name": model_name,
        "output_dir": output_dir,
        "epochs_per_repo": num_epochs,
        "batch_size": batch_size,
        "lr": learning_rate,
        "lora_config": _lora(use_lora, lora_config),
    }


class _Wrapper:
    trainer: Any
    dataset: Any

    def train(self) -> dict[str, Any]:
        """Train on the dataset; leantrain's result dict (``output_dir``, ``model_dir``,
        ``final`` metrics, …) plus ``num_samples``."""
        result = self.trainer.train(self.dataset)
        return {**result, "num_samples": len(self.dataset)}

    def save_model(self, path: str | Path | None = None) -> Path:
        """Save the current model (only the adapter with LoRA) to ``path`` (default:
        ``<output_dir>/final``); returns the path."""
        target = Path(path) if path is not None else self.trainer.output_dir / "final"
        self.trainer.save(target)
        return target


class SFTTrainerWrapper(_Wrapper):
    """hello_agents' SFT wrapper over :class:`~leantrain.llm.SFTTrainer`; ``options`` are
    further :class:`~leantrain.llm.SFTConfig` keys (``max_steps``, ``evaluate_each_repo`` …)."""

    def __init__(
        self,
        model_name: str,
        dataset: Any,
        output_dir: str | Path = "./output",
        num_epochs: float = 3,
        batch_size: int = 4,
        learning_rate: float = 2e-5,
        use_lora: bool = False,
        lora_config: Any = None,
        **options: Any,
    ) -> None:
        from leantrain.llm.sft_trainer import SFTTrainer

        options.setdefault("evaluate_each_repo", False)
        self.dataset = dataset
        self.trainer = SFTTrainer(
            **_trainer_kwargs(
                model_name, output_dir, num_epochs, batch_size, learning_rate, use_lora, lora_config
            ),
            **options,
        )


def _group_size(batch_size: int) -> int:
    """Completions per prompt that divide ``batch_size`` (GRPO compares them within a group)."""
    return next((n for n in (4, 3, 2) if batch_size % n == 0), batch_size)


class GRPOTrainerWrapper(_Wrapper):
    """hello_agents' GRPO wrapper over :class:`~leantrain.llm.GRPOTrainer`. ``reward_fn`` is a
    function (or a list; ``None``: leantrain's default rewards) given the tactic texts as
    ``str``; ``num_generations`` defaults to the largest of 4, 3, 2 dividing ``batch_size``;
    ``options`` are further :class:`~leantrain.llm.GRPOConfig` keys."""

    def __init__(
        self,
        model_name: str,
        dataset: Any,
        reward_fn: Any = None,
        output_dir: str | Path = "./output",
        num_epochs: float = 3,
        batch_size: int = 2,
        learning_rate: float = 1e-5,
        use_lora: bool = False,
        lora_config: Any = None,
        **options: Any,
    ) -> None:
        from leantrain.llm.grpo_trainer import GRPOTrainer

        options.setdefault("evaluate_each_repo", False)
        if isinstance(batch_size, int) and batch_size >= 1:
            options.setdefault("num_generations", _group_size(batch_size))
        self.dataset = dataset
        self.trainer = GRPOTrainer(
            **_trainer_kwargs(
                model_name, output_dir, num_epochs, batch_size, learning_rate, use_lora, lora_config
            ),
            reward_funcs=reward_fn,
            **options,
        )


# -- agent tool ---------------------------------------------------------------------------------
class RLTrainingTool:
    """hello_agents' ``rl_training`` tool: ``run({"action": "train" | "evaluate", …})`` returns
    a result dict with ``status`` ``"success"``, or ``"error"`` and a one-line ``message``."""

    name = "rl_training"
    description = (
        "Train a Lean 4 tactic generator (action 'train', algorithm 'sft' or 'grpo') or measure "
        "its tactic accuracy (action 'evaluate', model_path)."
    )
    _TRAIN_KEYS = ("action", "algorithm", "model_name", "max_samples", "num_epochs")
    _TRAIN_KEYS += ("output_dir", "use_lora", "batch_size", "learning_rate", "data", "dataset")
    _TRAIN_KEYS += ("custom_dataset", "custom_reward", "use_wandb", "use_tensorboard")

    def run(self, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """Do ``parameters["action"]`` (default ``train``)."""
        params = dict(parameters)
        action = str(params.get("action", "train")).lower()
        try:
            if action == "train":
                return {"status": "success", **self._train(params)}
            if action == "evaluate":
                return {"status": "success", **self._evaluate(params)}
            raise ConfigError(f"unknown action '{action}'", hint="use action 'train' or 'evaluate'")
        except LeanTrainError as e:
            return {"status": "error", "message": e.one_line()}

    def _train(self, params: dict[str, Any]) -> dict[str, Any]:
        algorithm = str(params.get("algorithm", "sft")).lower()
        if algorithm not in ("sft", "grpo"):
            raise ConfigError(f"unknown algorithm '{algorithm}'", hint="use 'sft' or 'grpo'")
        if not params.get("model_name"):
            raise ConfigError("'model_name' is missing", hint="e.g. 'tiny' or a model directory")
        data = params.get("data") or params.get("dataset")
        max_samples = params.get("max_samples")
        options = {k: v for k, v in params.items() if k not in self._TRAIN_KEYS}
        report = [
            name for name in ("wandb", "tensorboard") if params.get(f"use_{name}", False)
        ] or ["none"]
        options.setdefault("report_to", report)
        common = {
            "output_dir": params.get("output_dir", "./output"),
            "num_epochs": params.get("num_epochs", 3),
            "use_lora": bool(params.get("use_lora", False)),
            **({"batch_size": params["batch_size"]} if "batch_size" in params else {}),
            **({"learning_rate": params["learning_rate"]} if "learning_rate" in params else {}),
            **options,
        }
        dataset = params.get("custom_dataset")
        if algorithm == "sft":
            if dataset is None:
                dataset = create_sft_dataset(max_samples, data=data)
            wrapper: _Wrapper = SFTTrainerWrapper(params["model_name"], dataset, **common)
        else:
            if dataset is None:
                dataset = create_rl_dataset(max_samples, data=data)
            wrapper = GRPOTrainerWrapper(
                params["model_name"], dataset, params.get("custom_reward"), **common
            )
        return {"algorithm": algorithm, "model": params["model_name"], **wrapper.train()}

    def _evaluate(self, params: dict[str, Any]) -> dict[str, Any]:
        from leantrain.llm.sft_trainer import SFTTrainer

        model = params.get("model_path") or params.get("model_name")
        if not model:
            raise ConfigError("'model_path' is missing", hint="the output_dir of a training run")
        max_samples = params.get("max_samples", 100)
        dataset = create_rl_dataset(
            max_samples, split=params.get("split", "test"), data=params.get("data")
        )
        trainer = SFTTrainer.from_pretrained(model, max_eval_samples=max_samples)
        metrics = trainer.evaluate(dataset, params.get("split", "test"))
        return {
            "model_path": str(model),
            "num_samples": len(dataset),
            "accuracy": metrics.get("top1_accuracy"),
            **metrics,
        }
