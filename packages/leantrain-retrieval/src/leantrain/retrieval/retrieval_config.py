"""The configuration of :class:`~leantrain.retrieval.retrieval_trainer.RetrievalTrainer`.

One dataclass, filled from Python, a dict, YAML (``--config``) or CLI flags through
:mod:`leantrain.core.config`. Each field's help text lives once, in its ``metadata``.
Defaults follow ReProver (lr 1e-4 with warm-up, batch 8, 3 negatives of which 1 in-file).
Lightning's own arguments live in one section, ``trainer:`` (LightningCLI's way), passed to
``lightning.Trainer`` as given; its keys are checked against ``Trainer``'s signature.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from leantrain.core.errors import ConfigError

LOSSES = ("mse", "infonce")
REPORT_TO = ("auto", "tensorboard", "csv", "none")


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
        metadata={"help": "which split of the export to train on: random or novel_premises"},
    )
    loss: str = field(
        default="mse",
        metadata={"help": "mse (ReProver: MSE of cosine similarities vs 0/1 labels) or infonce"},
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
    num_in_file_negatives: int = field(
        default=1,
        metadata={"help": "how many of the negatives come from the positive premise's own file"},
    )
    context_max_len: int = field(
        default=512, metadata={"help": "max tokens of a proof-state context"}
    )
    premise_max_len: int = field(default=512, metadata={"help": "max tokens of a premise"})
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
            "help": "training logs under the run directory: tensorboard, csv, none, or auto "
            "(TensorBoard when installed, else CSV)"
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

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ConfigError(
                f"unknown loss '{self.loss}'", hint=f"choose one of: {', '.join(LOSSES)}"
            )
        if self.split not in ("random", "novel_premises"):
            raise ConfigError(
                f"unknown split '{self.split}'", hint="choose random or novel_premises"
            )
        if self.num_in_file_negatives > self.num_negatives:
            raise ConfigError(
                f"num_in_file_negatives ({self.num_in_file_negatives}) > num_negatives ({self.num_negatives})",
                hint="in-file negatives are a part of the negatives",
            )
        for name in ("batch_size", "eval_batch_size", "context_max_len", "premise_max_len"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.num_negatives < 0 or self.ewc_lambda < 0:
            raise ConfigError("num_negatives and ewc_lambda must not be negative")
        if self.report_to not in REPORT_TO:
            raise ConfigError(
                f"unknown report_to '{self.report_to}'",
                hint=f"choose one of: {', '.join(REPORT_TO)}",
            )
        check_trainer_keys(self.trainer)


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
