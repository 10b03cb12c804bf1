"""The configuration of :class:`~leantrain.retrieval.retrieval_trainer.RetrievalTrainer`.

One dataclass, filled from Python, a dict, YAML (``--config``) or CLI flags through
:mod:`leantrain.core.config`. Each field's help text lives once, in its ``metadata``.
Defaults follow ReProver (lr 1e-4 with warm-up, batch 8, 3 negatives of which 1 in-file).
Lightning's own arguments live in one section, ``trainer:`` (LightningCLI's way), passed to
``lightning.Trainer`` as given; its keys are checked against ``Trainer``'s signature.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leantrain.core.config import check_choices
from leantrain.core.errors import ConfigError
from leantrain.retrieval.context import CONTEXT_FORMATS

LOSSES = ("mse", "infonce")
REPORT_TO = ("auto", "tensorboard", "csv", "wandb", "mlflow", "none")


@dataclass
class RetrievalConfig:
    """Hyper-parameters and paths of a premise-retriever training run."""

    model_name: str = field(
        default="tiny",
        metadata={
            "help": "encoder: a registered name ('tiny'), a local HF model directory, or a saved retriever directory"
        },
    )
    output_dir: str = field(
        default="runs/retrieval", metadata={"help": "run directory (model, checkpoints, manifest)"}
    )
    data_path: str | None = field(
        default=None,
        metadata={
            "help": "an exported data directory (random/, novel_premises/, corpus.jsonl) to train on"
        },
    )
    database: str | None = field(
        default=None, metadata={"help": "SQLite database of traced repos (lifelong training)"}
    )
    repos: list[str] = field(
        default_factory=list,
        metadata={
            "help": "repo ids 'URL@COMMIT' for lifelong training, in order; repeat the flag (default: the database's curriculum)"
        },
    )
    split: str = field(
        default="random",
        metadata={
            "help": "which split of the export to train on",
            "choices": ("random", "novel_premises"),
        },
    )
    loss: str = field(
        default="mse",
        metadata={
            "help": "mse (ReProver: MSE of cosine similarities vs 0/1 labels) or infonce",
            "choices": LOSSES,
        },
    )
    temperature: float = field(
        default=0.05, metadata={"help": "softmax temperature of the InfoNCE loss"}
    )
    learning_rate: float = field(default=1e-4, metadata={"help": "peak learning rate of AdamW"})
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay"})
    warmup_steps: int = field(default=100, metadata={"help": "linear learning-rate warm-up steps"})
    batch_size: int = field(
        default=8, metadata={"help": "training contexts per batch (per device)"}
    )
    eval_batch_size: int = field(
        default=64, metadata={"help": "batch size when encoding the corpus and evaluating"}
    )
    num_negatives: int = field(
        default=3, metadata={"help": "negative premises per example (besides in-batch ones)"}
    )
    sample_by: str = field(
        default="pair",
        metadata={
            "help": "training items: pair (one per tactic and positive premise, ReProver) or "
            "tactic (one per tactic, a random positive each epoch: shorter epochs, tactics weigh the same)",
            "choices": ("pair", "tactic"),
        },
    )
    num_in_file_negatives: int = field(
        default=1,
        metadata={"help": "how many of the negatives come from the positive premise's own file"},
    )
    context_max_len: int = field(
        default=512, metadata={"help": "max tokens of a proof-state context"}
    )
    premise_max_len: int = field(default=512, metadata={"help": "max tokens of a premise"})
    context_format: str = field(
        default="goal_first",
        metadata={
            "help": "query text of a proof state: goal_first (the first goal's ⊢ line before its "
            "hypotheses, so truncation drops hypotheses, not the goal) or raw (as traced)",
            "choices": CONTEXT_FORMATS,
        },
    )
    ewc_lambda: float = field(
        default=0.0,
        metadata={"help": "EWC strength λ: loss += λ·Σ F(θ−θ*)² over earlier repos (0: off)"},
    )
    ewc_batches: int = field(
        default=16, metadata={"help": "training batches used to estimate the diagonal Fisher"}
    )
    ewc_gamma: float = field(
        default=1.0, metadata={"help": "decay of older repos' Fisher when adding a new one"}
    )
    evaluate_after_repo: bool = field(
        default=True,
        metadata={
            "help": "after each repo, score the best checkpoint and BM25 on the export's test splits (R@1, R@10, MRR)"
        },
    )
    trainer: dict[str, Any] = field(
        default_factory=dict,
        metadata={
            "help": "Lightning Trainer arguments (max_steps, max_epochs, devices, strategy, precision, "
            "val_check_interval, gradient_clip_val, accumulate_grad_batches, log_every_n_steps …); "
            "on the command line each is also a flag of its own: --max-steps 20 --devices 2"
        },
    )
    report_to: str = field(
        default="auto",
        metadata={
            "help": "where Lightning logs training: tensorboard / csv (under the run directory), "
            "wandb, mlflow, none, or auto (TensorBoard when installed, else CSV)"
        },
    )
    num_workers: int = field(default=0, metadata={"help": "DataLoader worker processes"})
    seed: int = field(
        default=42, metadata={"help": "random seed (negatives, initialisation, shuffling)"}
    )
    overwrite: bool = field(
        default=False,
        metadata={
            "help": "start over when the output directory holds an earlier run with another config (deletes that run; never other files)."
        },
    )
    tiny_d_model: int = field(default=64, metadata={"help": "hidden size of the 'tiny' encoder"})
    tiny_layers: int = field(default=2, metadata={"help": "layers of the 'tiny' encoder"})
    allow_code: bool = field(
        default=False,
        metadata={
            "help": "allow a 'module:attr' encoder builder that is not registered; like "
            "trust_remote_code, only for configs you trust (also: LEANTRAIN_ALLOW_CODE=1)"
        },
    )

    def __post_init__(self) -> None:
        check_choices(
            type(self),
            {
                "loss": self.loss,
                "split": self.split,
                "context_format": self.context_format,
                "sample_by": self.sample_by,
            },
            source="retrieval",
        )
        if self.num_in_file_negatives > self.num_negatives:
            raise ConfigError(
                f"num_in_file_negatives ({self.num_in_file_negatives}) > num_negatives ({self.num_negatives})",
                hint="in-file negatives are a part of the negatives",
            )
        for name in (
            "batch_size",
            "eval_batch_size",
            "context_max_len",
            "premise_max_len",
            "ewc_batches",
            "tiny_d_model",
            "tiny_layers",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"--{_flag(name)} must be at least 1, got {getattr(self, name)}")
        for name in (
            "num_negatives",
            "num_in_file_negatives",
            "ewc_lambda",
            "warmup_steps",
            "weight_decay",
            "num_workers",
        ):
            if getattr(self, name) < 0:
                raise ConfigError(
                    f"--{_flag(name)} must not be negative, got {getattr(self, name)}"
                )
        if not (self.learning_rate >= 0 and math.isfinite(self.learning_rate)):
            raise ConfigError(f"--learning-rate must be zero or more, got {self.learning_rate}")
        if not (self.temperature > 0 and math.isfinite(self.temperature)):
            raise ConfigError(f"--temperature must be a positive number, got {self.temperature}")
        if not 0 < self.ewc_gamma <= 1:
            raise ConfigError(f"--ewc-gamma must be in (0, 1], got {self.ewc_gamma}")
        if self.report_to not in REPORT_TO:
            raise ConfigError(
                f"unknown report_to '{self.report_to}'",
                hint=f"choose one of: {', '.join(REPORT_TO)}",
            )
        check_trainer_keys(self.trainer)
        check_trainer_values(self.trainer)
        if ":" in self.model_name and not Path(self.model_name).exists():
            from leantrain.core.registry import ENCODERS

            ENCODERS.check_code(self.model_name, allow_code=self.allow_code)


def _flag(name: str) -> str:
    return name.replace("_", "-")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


#: Lightning's precision values (``lightning.fabric.connector._PRECISION_INPUT``), as text.
PRECISIONS = (
    "32-true",
    "16-mixed",
    "bf16-mixed",
    "16-true",
    "bf16-true",
    "64-true",
    "transformer-engine",
    "transformer-engine-float16",
    "64",
    "32",
    "16",
    "bf16",
)


def check_trainer_values(trainer: dict[str, Any]) -> None:
    """The Lightning ``trainer:`` values that would crash (or loop forever) later: counts
    below their minimum, fractions outside [0, 1], a GPU accelerator without a GPU."""

    def bad(key: str, expected: str) -> ConfigError:
        return ConfigError(
            f"--{_flag(key)} (trainer.{key}) must be {expected}, got {trainer[key]!r}"
        )

    minimum = {  # key: (smallest allowed int, what the error says)
        "max_steps": (-1, "-1 (no limit) or a positive number of steps"),
        "max_epochs": (-1, "-1 (no limit) or a positive number of epochs"),
        "min_steps": (0, "a non-negative number of steps"),
        "min_epochs": (0, "a non-negative number of epochs"),
        "accumulate_grad_batches": (1, "a positive number of batches"),
        "log_every_n_steps": (1, "a positive number of steps"),
        "check_val_every_n_epoch": (1, "a positive number of epochs"),
        "num_sanity_val_steps": (-1, "-1 (all) or a non-negative number of batches"),
    }
    for key, (low, expected) in minimum.items():
        if key not in trainer or trainer[key] is None:
            continue
        value = trainer[key]
        if not _is_int(value) or value < low or (low == -1 and value == 0 and "max" in key):
            raise bad(key, expected)
    for key in ("limit_train_batches", "limit_val_batches", "limit_test_batches"):
        value = trainer.get(key)
        if value is None:
            continue
        if not _is_number(value) or value < 0 or (isinstance(value, float) and value > 1):
            raise bad(key, "a fraction in [0, 1] or a non-negative number of batches")
    if trainer.get("val_check_interval") is not None:
        value = trainer["val_check_interval"]
        if not _is_number(value) or value <= 0 or (isinstance(value, float) and value > 1):
            raise bad("val_check_interval", "a fraction in (0, 1] or a positive number of batches")
    if trainer.get("gradient_clip_val") is not None:
        value = trainer["gradient_clip_val"]
        if not _is_number(value) or value < 0:
            raise bad("gradient_clip_val", "a non-negative number")
    devices = trainer.get("devices")
    if (
        devices is not None
        and not isinstance(devices, (str, list))
        and (not _is_int(devices) or not (devices >= 1 or devices == -1))
    ):
        raise bad("devices", "a positive number of devices, -1 (all), 'auto' or a list of ids")
    precision = trainer.get("precision")
    if precision is not None and str(precision) not in PRECISIONS:
        raise bad("precision", f"one of {', '.join(PRECISIONS)}")
    strategy = trainer.get("strategy")
    if isinstance(strategy, str) and strategy != "auto":
        from lightning.pytorch.strategies import StrategyRegistry

        if strategy not in StrategyRegistry.available_strategies():
            raise bad("strategy", "'auto' or a Lightning strategy name (ddp, fsdp, deepspeed …)")
    accelerator = trainer.get("accelerator")
    if isinstance(accelerator, str) and accelerator.lower() in ("gpu", "cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ConfigError(
                f"--accelerator {accelerator}: no CUDA GPU is available on this machine",
                hint="use --accelerator cpu (or auto, which picks a GPU when there is one)",
            )


def check_trainer_keys(trainer: dict[str, Any]) -> None:
    """Every key of ``trainer:`` must be a keyword argument of ``lightning.Trainer``."""
    if not trainer:
        return
    import difflib
    import inspect

    import lightning as L

    valid = list(inspect.signature(L.Trainer).parameters)
    for key in trainer:
        if key not in valid:
            close = difflib.get_close_matches(key, valid, n=1)
            raise ConfigError(
                f"trainer: unknown Lightning Trainer argument '{key}'",
                hint=f"did you mean '{close[0]}'?"
                if close
                else "see lightning.Trainer's arguments",
            )
