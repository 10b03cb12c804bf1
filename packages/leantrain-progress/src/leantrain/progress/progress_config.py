"""``ProgressConfig``: transformers' ``TrainingArguments`` plus the progress model's groups
(the inherited fields' ranges and aliases, e.g. ``batch_size``: core's ``ENGINE_FIELDS``)."""

from __future__ import annotations

from dataclasses import dataclass

from leantrain.core.config import setting
from leantrain.progress.progress_arguments import (
    PRETRAINED_MAX_LENGTH,
    TINY_MAX_LENGTH,
    ProgressArguments,
)
from leantrain.progress.tiny_model import TINY_NAME
from transformers import TrainingArguments

TINY_LR, PRETRAINED_LR = 1e-3, 5e-5
TINY_EPOCHS, PRETRAINED_EPOCHS = 6.0, 3.0
"""Default learning rates and epochs: a model trained from scratch, a pretrained one fine-tuned."""


#: ``TrainingArguments`` fields whose default is the seed's (LeanDojo-v2's); help is transformers'.
SEED_DEFAULTS = {
    "warmup_steps": 0.1,  # a fraction of all steps
    "weight_decay": 0.01,
    "eval_strategy": "epoch",
    "save_strategy": "epoch",  # as eval_strategy, to keep the best
    "save_total_limit": 2,
    "load_best_model_at_end": True,
    "metric_for_best_model": "mae",  # validation MAE, in steps
    "greater_is_better": False,
    "logging_steps": 50,
    "train_sampling_strategy": "group_by_length",  # little padding
    "dataloader_pin_memory": False,
}


@dataclass
class ProgressConfig(ProgressArguments, TrainingArguments, defaults=SEED_DEFAULTS):
    """Every ``TrainingArguments`` option, plus the progress model's own
    (:class:`~leantrain.progress.progress_arguments.ProgressArguments`). Defaults are the seed's
    (LeanDojo-v2's, :data:`SEED_DEFAULTS`) except where its model collapsed to a constant on Lean
    data (``bert-base-uncased``, learning rate 1e-5, 3 epochs on raw steps): the ``tiny`` model,
    a log1p-standardised target, a Huber loss, a summary line of counts at the start of each
    input, and a learning rate, epochs and ``max_length`` that depend on the model."""

    output_dir: str | None = setting(
        "outputs", "Run directory: manifest, progress/NNN-<repo>/ models, exports."
    )
    learning_rate: float | None = setting(  # type: ignore[assignment]
        None,
        f"Peak learning rate (AdamW); default {TINY_LR:g} for 'tiny' (trained from scratch), "
        f"{PRETRAINED_LR:g} for a pretrained model.",
    )
    num_train_epochs: float | None = setting(  # type: ignore[assignment]
        None,
        f"Training epochs; default {TINY_EPOCHS:g} for 'tiny', {PRETRAINED_EPOCHS:g} for a "
        "pretrained model.",
    )
    bf16: bool | None = setting(
        None, "bf16 mixed precision; default: on only where a CUDA GPU supports it."
    )

    def __post_init__(self) -> None:
        if isinstance(self.split, str):  # a Python keyword split="test"
            self.split = [self.split]
        tiny = self.model_name == TINY_NAME
        if self.learning_rate is None:
            self.learning_rate = TINY_LR if tiny else PRETRAINED_LR
        if self.num_train_epochs is None:
            self.num_train_epochs = TINY_EPOCHS if tiny else PRETRAINED_EPOCHS
        if self.max_length is None:
            self.max_length = TINY_MAX_LENGTH if tiny else PRETRAINED_MAX_LENGTH
        if self.bf16 is None:
            import torch

            self.bf16 = bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
        super().__post_init__()
