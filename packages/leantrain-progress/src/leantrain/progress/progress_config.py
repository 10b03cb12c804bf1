"""``ProgressConfig``: transformers' ``TrainingArguments`` plus the progress model's own fields.

Filled from Python (``ProgressConfig(model_name="tiny")``), a dict (``config_from_dict``), YAML
(``config_from_yaml`` / ``--config``) or CLI flags (``parse_cli``) — see ``leantrain.core.config``,
whose alias table maps the seed's ``batch_size`` / ``epochs`` to ``per_device_train_batch_size``
/ ``num_train_epochs``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from leantrain.core.config import TRAINING_ARGUMENT_RULES, check_numbers
from leantrain.core.errors import ConfigError
from leantrain.progress.tiny_model import TINY_NAME
from transformers import TrainingArguments

TINY_LR, PRETRAINED_LR = 1e-3, 5e-5
"""Default learning rates: a model trained from scratch, a pretrained one fine-tuned."""
TINY_EPOCHS, PRETRAINED_EPOCHS = 6.0, 3.0
"""Default epochs."""
TINY_MAX_LENGTH, PRETRAINED_MAX_LENGTH = 40, 512
"""Default input tokens. 40 for ``tiny``: the summary line, the candidate tactic and the start of
the conclusion. On the LB4 head + mathlib-sample random split (Huber loss, summary line, 6
epochs) more of the goal let the model learn the training proofs' text instead of what
generalises: best validation MAE 5.35 at 40 tokens, 5.40 at 64, 5.55 at 128; test MAE / MSE
4.15 / 46.5 at 40 and 4.83 / 68.7 at 64 (median predictor 5.26 / 64.6)."""


NUMBER_RULES: dict[str, str] = {
    **TRAINING_ARGUMENT_RULES,
    "huber_delta": ">0",
    "tiny_hidden_size": ">=1",
    "tiny_layers": ">=1",
    "tiny_vocab_size": ">=1",
}
"""Ranges of the numeric settings checked when the config is built; an error names the flag."""


@dataclass
class ProgressConfig(TrainingArguments):
    """Every ``TrainingArguments`` option, plus the progress model's data, model and ``tiny``
    fields. Defaults differ from transformers' where the seed's (LeanDojo-v2's) did: evaluate
    and save every epoch, keep the lowest-MAE checkpoint, weight decay 0.01, length-grouped
    batches; ``bf16`` only where a CUDA GPU supports it. Unlike the seed (``bert-base-uncased``,
    learning rate 1e-5, 3 epochs on raw steps, which collapsed to a constant on Lean data): the
    ``tiny`` model, a log1p-standardised target, 10 % warm-up, and a learning rate and epochs
    that depend on the model (``tiny``: 1e-3, 6 epochs, 40 tokens; pretrained: 5e-5, 3 epochs,
    512 tokens); a Huber loss (aims at the median, hence MAE) and a summary line of counts at
    the start of each input (:mod:`leantrain.progress.summary`)."""

    data_path: str | None = field(
        default=None,
        metadata={
            "help": "Progress rows (.jsonl / .json) or traced theorems (split .json, export directory)."
        },
    )
    model_name: str = field(
        default="tiny",
        metadata={
            "help": "Base model: 'tiny' (a small BERT with a WordPiece vocabulary learnt from the training data, offline) or a Hugging Face name or local directory."
        },
    )
    max_length: int = field(  # type: ignore[assignment]
        default=None,
        metadata={
            "help": f"Truncate inputs to this many tokens; default {TINY_MAX_LENGTH} for 'tiny', {PRETRAINED_MAX_LENGTH} for a pretrained model."
        },
    )
    eval_ratio: float = field(
        default=0.2,
        metadata={
            "help": "Fraction of rows held out for evaluation (whole proofs when rows name their theorem)."
        },
    )
    eval_data_path: str | None = field(
        default=None,
        metadata={
            "help": "Separate evaluation rows (e.g. the val split); when set, eval_ratio is not used."
        },
    )
    eval_split: Literal["val", "none"] = field(
        default="val",
        metadata={
            "help": "When data_path is an export directory with a val split and eval_data_path is not set: 'val' evaluates (and picks the best checkpoint) on it and trains on every training row; 'none' holds out eval_ratio of the training rows."
        },
    )
    padding: Literal["dynamic", "max_length"] = field(
        default="dynamic",
        metadata={
            "help": "'dynamic': pad each batch to its longest row; 'max_length': pad every row to max_length (the seed's way)."
        },
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
    overwrite: bool = field(
        default=False,
        metadata={
            "help": "Start over when the output directory holds an earlier run with another config (deletes that run; never other files)."
        },
    )
    target_transform: Literal["log1p", "none"] = field(
        default="log1p",
        metadata={
            "help": "Train on log1p(steps remaining) ('none': raw steps, the seed's); predictions are mapped back to steps."
        },
    )
    standardize_target: bool = field(
        default=True,
        metadata={
            "help": "Standardise the (transformed) target with the mean/std of the training rows, saved in the model's config.json."
        },
    )
    input_summary: bool = field(
        default=True,
        metadata={
            "help": "Start each input with a summary line (first word of the tactic; tactics so far, goals, hypotheses, goal size, bucketed), recorded in the model's config.json; off: the seed's text only."
        },
    )
    loss: Literal["huber", "l1", "mse"] = field(
        default="huber",
        metadata={
            "help": "Training loss on the transformed target: 'huber' (L1 beyond huber_delta: aims at the median, so at MAE), 'l1', or 'mse' (the seed's)."
        },
    )
    huber_delta: float = field(
        default=0.5,
        metadata={"help": "Where the 'huber' loss turns from quadratic to linear (target units)."},
    )
    tiny_hidden_size: int = field(default=64, metadata={"help": "Hidden size of the 'tiny' model."})
    tiny_layers: int = field(default=2, metadata={"help": "Layers of the 'tiny' model."})
    tiny_pooling: Literal["mean", "cls"] = field(
        default="mean",
        metadata={
            "help": "How the 'tiny' model pools its tokens: 'mean' (every token reaches the output directly) or 'cls' (BERT's [CLS] pooler)."
        },
    )
    tiny_vocab_size: int = field(
        default=2000, metadata={"help": "WordPiece vocabulary size of the 'tiny' tokenizer."}
    )
    # -- TrainingArguments fields with the seed's defaults ------------------------------------
    output_dir: str | None = field(
        default="outputs",
        metadata={"help": "Run directory: manifest, progress/NNN-<repo>/ models, exports."},
    )
    learning_rate: float = field(  # type: ignore[assignment]
        default=None,
        metadata={
            "help": f"Peak learning rate (AdamW); default {TINY_LR:g} for 'tiny' (trained from scratch), {PRETRAINED_LR:g} for a pretrained model."
        },
    )
    num_train_epochs: float = field(  # type: ignore[assignment]
        default=None,
        metadata={
            "help": f"Training epochs; default {TINY_EPOCHS:g} for 'tiny', {PRETRAINED_EPOCHS:g} for a pretrained model."
        },
    )
    warmup_steps: float = field(
        default=0.1,
        metadata={
            "help": "Linear warm-up: steps (an integer) or a fraction of all steps (a float below 1)."
        },
    )
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay."})
    eval_strategy: str = field(
        default="epoch",
        metadata={"help": "When to evaluate: 'epoch', 'steps' (every eval_steps) or 'no'."},
    )
    save_strategy: str = field(
        default="epoch",
        metadata={
            "help": "When to save a resumable checkpoint (as eval_strategy to keep the best)."
        },
    )
    save_total_limit: int | None = field(
        default=2, metadata={"help": "Keep at most N resumable checkpoints."}
    )
    load_best_model_at_end: bool = field(
        default=True, metadata={"help": "Keep the checkpoint with the best metric_for_best_model."}
    )
    metric_for_best_model: str | None = field(
        default="mae",
        metadata={"help": "Metric of the best checkpoint (validation MAE, in steps)."},
    )
    greater_is_better: bool | None = field(
        default=False, metadata={"help": "Whether a higher metric_for_best_model is better."}
    )
    logging_steps: float = field(default=50, metadata={"help": "Steps between loss logs."})
    train_sampling_strategy: str = field(
        default="group_by_length",
        metadata={"help": "'group_by_length' (little padding), 'random' or 'sequential'."},
    )
    dataloader_pin_memory: bool = field(
        default=False, metadata={"help": "Pin batches in memory (faster host-to-GPU copies)."}
    )
    bf16: bool | None = field(
        default=None,
        metadata={"help": "bf16 mixed precision; default: on only where a CUDA GPU supports it."},
    )

    def __post_init__(self) -> None:
        tiny = self.model_name == TINY_NAME
        if self.learning_rate is None:
            self.learning_rate = TINY_LR if tiny else PRETRAINED_LR
        if self.num_train_epochs is None:
            self.num_train_epochs = TINY_EPOCHS if tiny else PRETRAINED_EPOCHS
        if self.max_length is None:
            self.max_length = TINY_MAX_LENGTH if tiny else PRETRAINED_MAX_LENGTH
        check_numbers(self, NUMBER_RULES)
        if self.max_length < 8:
            raise ConfigError(f"max_length must be at least 8, got {self.max_length}")
        if not 0 <= self.eval_ratio < 1:
            raise ConfigError(f"eval_ratio must be in [0, 1), got {self.eval_ratio}")
        if isinstance(self.split, str):
            self.split = [self.split]
        if self.bf16 is None:
            import torch

            self.bf16 = bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
        super().__post_init__()
