"""``ProgressConfig``: every option of :class:`~leantrain.progress.ProgressTrainer`, with help.

Filled from Python (``ProgressConfig(epochs=1)``), a dict (``config_from_dict``), YAML
(``config_from_yaml`` / ``--config``) or CLI flags (``parse_cli``) — see ``leantrain.core.config``.
The first nine fields and their defaults are the seed's (LeanDojo-v2's ``ProgressTrainer``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from leantrain.core.errors import ConfigError


@dataclass
class ProgressConfig:
    """Configuration of a progress-model training run."""

    data_path: str | None = field(
        default=None,
        metadata={
            "help": "Progress rows (.jsonl / .json) or traced theorems (split .json, export directory)."
        },
    )
    model_name: str = field(
        default="bert-base-uncased",
        metadata={
            "help": "Base model: a Hugging Face name or local directory, or 'tiny' (small BERT built offline)."
        },
    )
    output_dir: str = field(
        default="outputs",
        metadata={"help": "Directory of the trained model, checkpoints and manifest."},
    )
    max_length: int = field(default=512, metadata={"help": "Truncate inputs to this many tokens."})
    batch_size: int = field(default=8, metadata={"help": "Per-device train and eval batch size."})
    epochs: float = field(
        default=3.0, metadata={"help": "Training epochs (per repository when lifelong)."}
    )
    learning_rate: float = field(default=1e-5, metadata={"help": "Peak learning rate (AdamW)."})
    eval_ratio: float = field(
        default=0.2,
        metadata={
            "help": "Fraction of rows held out for evaluation (whole proofs when rows name their theorem)."
        },
    )
    seed: int = field(default=42, metadata={"help": "Random seed (split, init, shuffling)."})
    eval_data_path: str | None = field(
        default=None,
        metadata={
            "help": "Separate evaluation rows (e.g. the val split); when set, eval_ratio is not used."
        },
    )
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay."})
    padding: Literal["dynamic", "max_length"] = field(
        default="dynamic",
        metadata={
            "help": "'dynamic': pad each batch to its longest row; 'max_length': pad every row to max_length (the seed's way)."
        },
    )
    group_by_length: bool = field(
        default=True,
        metadata={
            "help": "Batch rows of similar length together (less padding with dynamic padding)."
        },
    )
    eval_strategy: Literal["epoch", "steps"] = field(
        default="epoch",
        metadata={"help": "When to evaluate and save: every 'epoch' or every eval_steps."},
    )
    eval_steps: int | None = field(
        default=None, metadata={"help": "Steps between evaluations when eval_strategy='steps'."}
    )
    max_steps: int = field(
        default=-1, metadata={"help": "Stop after this many optimizer steps (-1: run all epochs)."}
    )
    logging_steps: int = field(default=50, metadata={"help": "Steps between loss logs."})
    warmup_ratio: float = field(
        default=0.0, metadata={"help": "Fraction of steps of linear learning-rate warm-up."}
    )
    gradient_accumulation_steps: int = field(
        default=1, metadata={"help": "Batches per optimizer step."}
    )
    bf16: bool | None = field(
        default=None,
        metadata={"help": "bf16 mixed precision; default: on only where a CUDA GPU supports it."},
    )
    split: list[str] = field(
        default_factory=lambda: ["train"],
        metadata={
            "help": "Splits to read when data_path is traced data ('train', 'val', 'test' or 'all')."
        },
    )
    sorry_policy: Literal["drop_theorem", "drop_tactic"] = field(
        default="drop_theorem",
        metadata={
            "help": "Traced proofs using sorry: drop the theorem, or only its sorry tactics."
        },
    )
    tiny_hidden_size: int = field(default=64, metadata={"help": "Hidden size of the 'tiny' model."})
    tiny_layers: int = field(default=2, metadata={"help": "Layers of the 'tiny' model."})
    tiny_vocab_size: int = field(
        default=2000, metadata={"help": "WordPiece vocabulary size of the 'tiny' tokenizer."}
    )
    resume: bool = field(
        default=True,
        metadata={"help": "Continue a killed run from its last checkpoint in output_dir."},
    )

    def __post_init__(self) -> None:
        if self.max_length < 8:
            raise ConfigError(f"max_length must be at least 8, got {self.max_length}")
        if self.batch_size < 1:
            raise ConfigError(f"batch_size must be positive, got {self.batch_size}")
        if not 0 <= self.eval_ratio < 1:
            raise ConfigError(f"eval_ratio must be in [0, 1), got {self.eval_ratio}")
        if self.epochs <= 0 and self.max_steps <= 0:
            raise ConfigError("epochs must be positive (or set max_steps)")
        if self.learning_rate <= 0:
            raise ConfigError(f"learning_rate must be positive, got {self.learning_rate}")
        if self.eval_strategy == "steps" and not self.eval_steps:
            raise ConfigError(
                "eval_strategy='steps' needs eval_steps",
                hint="set --eval-steps N or use eval_strategy='epoch'",
            )
        if isinstance(self.split, str):
            self.split = [self.split]
