"""The setting groups of ``leantrain progress make-data|train|evaluate|predict``, without
transformers (``progress train`` checks :class:`ProgressArguments` and the data before
:class:`~leantrain.progress.progress_config.ProgressConfig` loads); each setting declared once."""

from __future__ import annotations

from dataclasses import MISSING, dataclass
from typing import Annotated, Literal

from annotated_types import Ge, Lt
from leantrain.core.config import AtLeast1, Positive, setting
from leantrain.core.errors import ConfigError
from leantrain.core.groups import DataArgs, Group, LifelongData, RunSwitches, Seed

TINY_MAX_LENGTH, PRETRAINED_MAX_LENGTH = 40, 512
"""Default input tokens. ``tiny``'s 40 hold the summary line, the candidate tactic and the start
of the conclusion (more of the goal made validation and test MAE worse, see CHANGELOG.md)."""


@dataclass
class RowsArgs(DataArgs):
    """Which progress rows the data gives: a rows file as it is, traced theorems labelled."""

    split: list[Literal["train", "val", "test", "all"]] = setting(
        ["train"], "Splits to read when the data is traced theorems (repeatable; 'all')."
    )
    split_strategy: Literal["random", "novel_premises"] = setting(
        "random", "Split strategy directory of an export dir.", aliases=("strategy",)
    )
    sorry_policy: Literal["drop_theorem", "drop_tactic"] = setting(
        "drop_theorem", "Traced proofs using sorry: drop the theorem, or only its sorry tactics."
    )


@dataclass
class GivenRows(RowsArgs, defaults={"data_path": MISSING}):
    """Required data: progress rows (.jsonl / .json) or traced theorems (a split, an export dir)."""

    def check_group(self) -> None:
        """An empty path is no data (it would read the working directory)."""
        if not (self.data_path or "").strip():
            raise ConfigError("--data is empty", hint="give a rows .jsonl or an export dir")


@dataclass
class ModelArgs(Group):
    """The model and how long its inputs are."""

    model_name: str | None = setting(
        "tiny",
        "train: the base model, 'tiny' (a small BERT with a WordPiece vocabulary learnt from the "
        "training data, offline), a local model directory or a Hugging Face name; evaluate, "
        "predict: the trained progress model or run directory (default: $LEANPROGRESS_MODEL).",
        aliases=("model",),
    )
    max_length: Annotated[int, Ge(8)] | None = setting(
        None,
        f"Truncate inputs to this many tokens; default: training 'tiny' {TINY_MAX_LENGTH}, a "
        f"pretrained model {PRETRAINED_MAX_LENGTH}; a trained model its own (at most 512).",
    )


@dataclass
class PredictorArgs(ModelArgs, defaults={"model_name": None}):
    """A trained progress model (``None``: ``$LEANPROGRESS_MODEL``) and its batches."""

    batch_size: AtLeast1 = setting(32, "Rows per forward pass.")


@dataclass
class MakeDataArgs(GivenRows, Seed, defaults={"seed": 42}):
    """``leantrain progress make-data``: progress rows from traced theorems."""

    out: str = setting(help="Output JSONL of progress rows (written atomically).")
    rebalance: bool = setting(False, "Oversample rows of long proofs (LeanProgress).")
    max_oversample: Annotated[float, Ge(1)] = setting(
        4.0, "Most copies of a proof-length bin when rebalancing."
    )


@dataclass
class EvaluateArgs(PredictorArgs, GivenRows, defaults={"split": ["test"]}):
    """``leantrain progress evaluate``: a trained model scored on progress rows (traced
    theorems: the test split unless ``--split`` says otherwise)."""


@dataclass
class PredictArgs(PredictorArgs):
    """``leantrain progress predict``: steps remaining after candidate tactics."""

    goal: str = setting(help="The proof state (a literal \\n is a newline).")
    prefix: str = setting("", "Tactics already applied, newline-separated.")
    tactic: list[str] = setting(help="Candidate tactic (repeat to rank several).")

    def check_group(self) -> None:
        """A goal and at least one tactic."""
        if not self.goal or not self.tactic:
            raise ConfigError(
                "predict needs --goal and at least one --tactic",
                hint='--goal "n : ℕ\\n⊢ n + 0 = n" --tactic simp',
            )


@dataclass
class ProgressArguments(ModelArgs, RowsArgs, LifelongData, RunSwitches):
    """The progress model's own settings (``TrainingArguments`` has the rest)."""

    eval_ratio: Annotated[float, Ge(0), Lt(1)] = setting(
        0.2, "Fraction of rows held out for evaluation (whole proofs when rows name their theorem)."
    )
    eval_data_path: str | None = setting(
        None, "Separate evaluation rows (e.g. the val split); when set, eval_ratio is not used."
    )
    eval_split: Literal["val", "none"] = setting(
        "val",
        "When the data is an export dir with a val split and eval_data_path is not set: 'val' "
        "evaluates (and picks the best checkpoint) on it and trains on every training row; "
        "'none' holds out eval_ratio of the training rows.",
    )
    padding: Literal["dynamic", "max_length"] = setting(
        "dynamic",
        "'dynamic': pad each batch to its longest row; 'max_length': pad every row to "
        "max_length (the seed's way).",
    )
    target_transform: Literal["log1p", "none"] = setting(
        "log1p",
        "Train on log1p(steps remaining) ('none': raw steps, the seed's); predictions are "
        "mapped back to steps.",
    )
    standardize_target: bool = setting(
        True,
        "Standardise the (transformed) target with the mean/std of the training rows, saved in "
        "the model's config.json.",
    )
    input_summary: bool = setting(
        True,
        "Start each input with a summary line (first word of the tactic; tactics so far, goals, "
        "hypotheses, goal size, bucketed), recorded in the model's config.json; off: the seed's "
        "text only.",
    )
    loss: Literal["huber", "l1", "mse"] = setting(
        "huber",
        "Training loss on the transformed target: 'huber' (L1 beyond huber_delta: aims at the "
        "median, so at MAE), 'l1', or 'mse' (the seed's).",
    )
    huber_delta: Positive = setting(
        0.5, "Where the 'huber' loss turns from quadratic to linear (target units)."
    )
    tiny_hidden_size: AtLeast1 = setting(64, "Hidden size of the 'tiny' model.")
    tiny_layers: AtLeast1 = setting(2, "Layers of the 'tiny' model.")
    tiny_pooling: Literal["mean", "cls"] = setting(
        "mean",
        "How the 'tiny' model pools its tokens: 'mean' (every token reaches the output "
        "directly) or 'cls' (BERT's [CLS] pooler).",
    )
    tiny_vocab_size: AtLeast1 = setting(2000, "WordPiece vocabulary size of the 'tiny' tokenizer.")

    def check_group(self) -> None:
        """Training needs a base model (evaluate and predict default to $LEANPROGRESS_MODEL)."""
        if self.model_name is None:
            raise ConfigError(
                "key 'model_name' (--model) has no value: training needs a base model",
                hint="give 'tiny', a local model directory or a Hugging Face name",
            )
