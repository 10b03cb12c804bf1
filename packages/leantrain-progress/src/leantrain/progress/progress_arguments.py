"""The progress model's own settings (data, model, target, loss, ``tiny``), without
transformers: :class:`~leantrain.progress.progress_config.ProgressConfig` adds them to
``TrainingArguments``, and ``leantrain progress train`` reads and checks them (and the data)
before transformers is imported."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from leantrain.core.config import check_numbers
from leantrain.core.errors import ConfigError

TINY_MAX_LENGTH, PRETRAINED_MAX_LENGTH = 40, 512
"""Default input tokens. 40 for ``tiny``: the summary line, the candidate tactic and the start of
the conclusion. On the LB4 head + mathlib-sample random split (Huber loss, summary line, 6
epochs) more of the goal let the model learn the training proofs' text instead of what
generalises: best validation MAE 5.35 at 40 tokens, 5.40 at 64, 5.55 at 128; test MAE / MSE
4.15 / 46.5 at 40 and 4.83 / 68.7 at 64 (median predictor 5.26 / 64.6)."""

OWN_NUMBER_RULES: dict[str, str] = {
    "huber_delta": ">0",
    "tiny_hidden_size": ">=1",
    "tiny_layers": ">=1",
    "tiny_vocab_size": ">=1",
}
"""Ranges of the progress model's own numeric settings; an error names the flag."""


@dataclass
class ProgressArguments:
    """The progress model's own fields (help texts here, once)."""

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
    max_length: int | None = field(  # type: ignore[assignment]
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
    evaluate_each_repo: bool = field(
        default=True,
        metadata={
            "help": "After each repo (lifelong, or one export directory), score the model on every repo's test split so far."
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

    def check(self) -> None:
        """Raise one :class:`ConfigError` for the first of these settings out of its range."""
        check_numbers(self, OWN_NUMBER_RULES)
        if self.max_length is not None and self.max_length < 8:
            raise ConfigError(f"max_length must be at least 8, got {self.max_length}")
        if not 0 <= self.eval_ratio < 1:
            raise ConfigError(f"eval_ratio must be in [0, 1), got {self.eval_ratio}")
