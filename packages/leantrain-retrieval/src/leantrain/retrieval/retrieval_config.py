"""The settings of the retriever, its data and its commands: small groups, each setting once.

The constructors are the config (Lightning's way): :class:`RetrieverArgs` is what
``PremiseRetriever`` takes, :class:`DataModuleArgs` what ``RetrievalDataModule`` takes, and
``RetrievalConfig.trainer`` goes to ``lightning.Trainer`` (:mod:`.trainer_args`). ``evaluate``,
``index`` and ``retrieve`` share :class:`ModelArgs` and :class:`ExportArgs`. Defaults follow
ReProver.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from annotated_types import Ge
from leantrain.core.config import (
    AtLeast1,
    Fraction,
    NonNegative,
    Positive,
    check_keys,
    config_fields,
    setting,
)
from leantrain.core.errors import ConfigError
from leantrain.core.groups import AllowCode, DataArgs, Group, LifelongData, RunArgs, Seed

A = TypeVar("A")
Count = Annotated[int, Ge(0)]


class Settings(Group):
    """Base of retrieval's groups: an unknown Python keyword (``RetrievalConfig(lr=…)``, also
    through ``dataclasses.replace``) is the one line an unknown dict key gets."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        check_keys(cls, kwargs, source="keyword arguments")
        return super().__new__(cls)


@dataclass
class EncodeArgs(Settings):
    """How many texts the encoder reads at once (every subcommand)."""

    eval_batch_size: AtLeast1 = setting(
        64, "Texts encoded at once (indexing, validation, evaluation).", aliases=("batch_size",)
    )


@dataclass
class EncodingArgs(EncodeArgs):
    """How text becomes tokens: shared by the retriever (validation, evaluation, retrieval) and
    the data module (training batches), so that both read a proof state the same way."""

    context_max_len: AtLeast1 = setting(512, "Max tokens of a proof-state context.")
    premise_max_len: AtLeast1 = setting(512, "Max tokens of a premise.")
    context_format: Literal["goal_first", "raw"] = setting(
        "goal_first",
        "Query text of a proof state: goal_first (the first goal's ⊢ line before its "
        "hypotheses, so truncation drops hypotheses, not the goal) or raw (as traced).",
    )


@dataclass
class RetrieverArgs(EncodingArgs):
    """The hyper-parameters (``hparams``) of :class:`~.premise_retriever.PremiseRetriever`."""

    loss: Literal["mse", "infonce"] = setting(
        "mse", "mse (ReProver: MSE of cosine similarities vs 0/1 labels) or infonce."
    )
    temperature: Positive = setting(0.05, "Softmax temperature of the InfoNCE loss.")
    learning_rate: NonNegative = setting(1e-4, "Peak learning rate of AdamW.", aliases=("lr",))
    weight_decay: NonNegative = setting(0.0, "AdamW weight decay.")
    warmup_steps: Count = setting(100, "Linear learning-rate warm-up steps.")
    ewc_lambda: NonNegative = setting(
        0.0, "EWC strength λ: loss += λ·Σ F(θ−θ*)² over earlier repos (0: off)."
    )


@dataclass
class DataModuleArgs(EncodingArgs, Seed, defaults={"seed": 42}):
    """What :class:`~leantrain.retrieval.datamodule.RetrievalDataModule` takes besides the
    data directory and the tokenizer (``seed``: negatives, initialisation, shuffling)."""

    split: Literal["random", "novel_premises"] = setting("random", "Which split to train on.")
    batch_size: AtLeast1 = setting(8, "Training contexts per batch (per device).")
    num_negatives: Count = setting(3, "Negative premises per example (besides in-batch ones).")
    num_in_file_negatives: Count = setting(1, "Negatives from the positive premise's own file.")
    sample_by: Literal["pair", "tactic"] = setting(
        "pair",
        "Training items: pair (one per tactic and positive premise, ReProver) or tactic (one "
        "per tactic, a random positive each epoch: shorter epochs, tactics weigh the same).",
    )
    num_workers: Count = setting(0, "DataLoader worker processes.")

    def check_group(self) -> None:
        """In-file negatives are a part of the negatives."""
        if self.num_in_file_negatives > self.num_negatives:
            raise ConfigError(
                f"num_in_file_negatives ({self.num_in_file_negatives}) > num_negatives "
                f"({self.num_negatives})",
                hint="in-file negatives are a part of the negatives",
            )


@dataclass
class ModelArgs(EncodeArgs, AllowCode):
    """The retriever a command loads, and whether code named by it may run."""

    model_name: str = setting(
        help="A saved retriever, a run directory (its newest retriever), a local Hugging Face "
        "model directory, or a registered encoder name ('tiny').",
        aliases=("model",),
    )

    def check_group(self) -> None:
        """A ``module:attr`` encoder builder needs the opt-in (before anything loads)."""
        if ":" in self.model_name and not Path(self.model_name).exists():
            from leantrain.core.registry import ENCODERS

            ENCODERS.check_code(self.model_name, allow_code=self.allow_code)


@dataclass
class TrainArgs(
    DataModuleArgs,
    ModelArgs,
    RunArgs,
    defaults={"model_name": "tiny", "output_dir": "runs/retrieval"},
):
    """``retrieval train``'s model, run and data module (so ``--batch-size`` is the training
    batch, as in the full config): read with the data before Lightning loads."""


@dataclass
class ExportArgs(DataArgs, defaults={"data_path": dataclasses.MISSING}):
    """The export directory a command reads (random/, novel_premises/, corpus.jsonl)."""


@dataclass
class RankArgs(Settings):
    """How many premises are ranked, and the premise index to rank with."""

    k: AtLeast1 = setting(10, "How many premises: the k of R@k (evaluate), the list (retrieve).")
    index: str | None = setting(
        None,
        "Premise index directory (from 'leantrain retrieval index'; evaluate: built there when "
        "missing or stale).",
    )


@dataclass
class EvaluateArgs(RankArgs):
    """What ``retrieval evaluate`` scores."""

    split_file: str = setting("test.json", "Which file of each split to score.")
    no_bm25: bool = setting(False, "Skip the BM25 baseline.")


@dataclass
class QueryArgs(RankArgs):
    """The proof state ``retrieval retrieve`` ranks premises for."""

    state: str = setting(help="The proof state (state_before).")
    file: str = setting(help="The Lean file the theorem is in (for accessibility).")


@dataclass
class IndexOutput(Settings):
    """Where ``retrieval index`` writes."""

    output: str = setting(help="New directory for index.safetensors + index.json.")


@dataclass
class RetrievalConfig(RetrieverArgs, TrainArgs, LifelongData):
    """A premise-retriever training run: the retriever's and the data's settings (flat, as
    users write them) plus the run's own and Lightning's ``trainer:`` section."""

    ewc_batches: AtLeast1 = setting(16, "Training batches used to estimate the diagonal Fisher.")
    ewc_gamma: Fraction = setting(
        1.0, "Decay of older repos' Fisher when adding a new one (1: keep, 0: forget)."
    )
    trainer: dict[str, Any] = setting(
        {},
        "Lightning Trainer arguments (max_steps, max_epochs, devices, strategy, precision …), "
        "checked by Lightning; each is also a flag of its own: --max-steps 20 --devices 2.",
    )
    report_to: Literal["auto", "tensorboard", "csv", "wandb", "mlflow", "none"] = setting(
        "auto",
        "Where Lightning logs training: tensorboard / csv (under the run directory), wandb, "
        "mlflow, none, or auto (TensorBoard when installed, else CSV).",
    )
    tiny_d_model: AtLeast1 = setting(64, "Hidden size of the 'tiny' encoder.")
    tiny_layers: AtLeast1 = setting(2, "Layers of the 'tiny' encoder.")

    @classmethod
    def moved_key(cls, key: str, value: Any) -> ConfigError | None:
        """A Lightning ``Trainer`` argument (or LeanDojo-v2's ``num_gpus``) beside the settings:
        one line naming the ``trainer`` entry (core's hook for dicts, YAML and flags)."""
        from leantrain.retrieval.trainer_args import LEANDOJO_V2_NAMES, trainer_parameters

        name = LEANDOJO_V2_NAMES.get(key, key)
        if name not in trainer_parameters():
            return None
        return ConfigError(
            f"{cls.__name__}: '{key}' is Lightning's Trainer argument '{name}'"
            + (" (LeanDojo-v2's name)" if name != key else ""),
            hint=f"give trainer={{'{name}': {value!r}}} (YAML: trainer: {{{name}: …}}; "
            f"flag: --{name.replace('_', '-')})",
        )

    def check_group(self) -> None:
        """The ``trainer:`` section, typed and accepted by Lightning."""
        if self.trainer:
            from leantrain.retrieval.trainer_args import check_trainer_args

            self.trainer = check_trainer_args(self.trainer)

    @classmethod
    def flag_sections(cls) -> dict[str, tuple[str, ...]]:
        """Lightning ``Trainer`` arguments are flags of their own (``--max-steps 20``): they
        fill ``trainer:``, over the ``--config`` file's (core's hook)."""
        from leantrain.retrieval.trainer_args import trainer_parameters

        return {"trainer": trainer_parameters()}

    def part(self, cls: type[A]) -> A:
        """The ``cls`` part of this config (:class:`RetrieverArgs` for the model,
        :class:`DataModuleArgs` for the data module), with this config's values."""
        return cls(**{name: getattr(self, name) for name in config_fields(cls)})
