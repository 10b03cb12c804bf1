"""The settings of the retriever, its data and a training run: each defined once, here.

Lightning's way is that the constructors are the config: :class:`RetrieverArgs` is what
:class:`~leantrain.retrieval.premise_retriever.PremiseRetriever` takes (the ``model:`` part,
recorded by ``save_hyperparameters``), :class:`DataArgs` what
:class:`~leantrain.retrieval.datamodule.RetrievalDataModule` takes (the ``data:`` part), and
``RetrievalConfig.trainer`` is passed to ``lightning.Trainer`` as given (the ``trainer:``
part; :mod:`leantrain.retrieval.trainer_args` checks it with Lightning's own types and
checks). :class:`RetrievalConfig` composes the first two with the run's own settings into the
one flat class that Python, a dict, YAML (``--config``) and CLI flags fill through
:mod:`leantrain.core.config`. Each field's default, help text, allowed values (``choices``)
and range (``range``, a rule of :func:`leantrain.core.config.check_numbers`) live once, in
its ``field``. Defaults follow ReProver (lr 1e-4 with warm-up, batch 8, 3 negatives of which
1 in-file).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from leantrain.core.config import check_choices, check_numbers, config_fields, unknown_key
from leantrain.core.errors import ConfigError
from leantrain.retrieval.context import CONTEXT_FORMATS

A = TypeVar("A")


def _help(text: str, **more: Any) -> dict[str, Any]:
    return {"help": text, **more}


def _keyword_errors(cls: type[A]) -> type[A]:
    """Make an unknown keyword of ``cls(...)`` (or ``dataclasses.replace``) the one-line
    :class:`ConfigError` that the same key gets from a dict or YAML (core's
    :func:`~leantrain.core.config.unknown_key`, with :func:`_moved_key` as the class's hook),
    instead of Python's ``TypeError``. ``inspect.signature`` still shows the fields."""
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        valid = config_fields(type(self))
        for key in kwargs:
            if key not in valid:
                raise unknown_key(type(self), key, kwargs[key], source="keyword arguments")
        init(self, *args, **kwargs)

    cls.__init__ = __init__  # type: ignore[method-assign]
    cls.moved_key = classmethod(_moved_key)  # type: ignore[attr-defined]
    return cls


def _moved_key(cls: type, key: str, value: Any) -> ConfigError | None:
    """A ``lightning.Trainer`` argument given beside the retrieval settings (``max_epochs``, or
    LeanDojo-v2's ``num_gpus`` for ``devices``): one line saying it goes in ``trainer``."""
    from leantrain.retrieval.trainer_args import LEANDOJO_V2_NAMES, trainer_parameters

    renamed = LEANDOJO_V2_NAMES.get(key)
    if renamed is None and ("trainer" not in config_fields(cls) or key not in trainer_parameters()):
        return None
    name = renamed or key
    return ConfigError(
        f"{cls.__name__}: '{key}' is Lightning's Trainer argument '{name}'"
        + (" (LeanDojo-v2's name)" if renamed else ""),
        hint=f"give trainer={{'{name}': {value!r}}} (YAML: trainer: {{{name}: …}}; "
        f"flag: --{name.replace('_', '-')})",
    )


def check_fields(cfg: Any) -> None:
    """Check every field of the dataclass ``cfg`` against its ``choices`` and ``range``."""
    fields = dataclasses.fields(cfg)
    check_choices(type(cfg), {f.name: getattr(cfg, f.name) for f in fields}, source="retrieval")
    rules = {f.name: f.metadata["range"] for f in fields if "range" in f.metadata}
    check_numbers(cfg, rules)


@_keyword_errors
@dataclass
class EncodingArgs:
    """How text becomes tokens: shared by the retriever (validation, evaluation, retrieval) and
    the data module (training batches), so that both read a proof state the same way."""

    context_max_len: int = field(
        default=512, metadata=_help("max tokens of a proof-state context", range=">=1")
    )
    premise_max_len: int = field(
        default=512, metadata=_help("max tokens of a premise", range=">=1")
    )
    context_format: str = field(
        default="goal_first",
        metadata=_help(
            "query text of a proof state: goal_first (the first goal's ⊢ line before its "
            "hypotheses, so truncation drops hypotheses, not the goal) or raw (as traced)",
            choices=CONTEXT_FORMATS,
        ),
    )
    eval_batch_size: int = field(
        default=64,
        metadata=_help("batch size when encoding the corpus and evaluating", range=">=1"),
    )

    def __post_init__(self) -> None:
        check_fields(self)


@_keyword_errors
@dataclass
class RetrieverArgs(EncodingArgs):
    """The hyper-parameters of :class:`~leantrain.retrieval.premise_retriever.PremiseRetriever`
    (its ``hparams``)."""

    loss: str = field(
        default="mse",
        metadata=_help(
            "mse (ReProver: MSE of cosine similarities vs 0/1 labels) or infonce",
            choices=("mse", "infonce"),
        ),
    )
    temperature: float = field(
        default=0.05, metadata=_help("softmax temperature of the InfoNCE loss", range=">0")
    )
    learning_rate: float = field(
        default=1e-4, metadata=_help("peak learning rate of AdamW", range=">=0")
    )
    weight_decay: float = field(default=0.0, metadata=_help("AdamW weight decay", range=">=0"))
    warmup_steps: int = field(
        default=100, metadata=_help("linear learning-rate warm-up steps", range=">=0")
    )
    ewc_lambda: float = field(
        default=0.0,
        metadata=_help(
            "EWC strength λ: loss += λ·Σ F(θ−θ*)² over earlier repos (0: off)", range=">=0"
        ),
    )


@_keyword_errors
@dataclass
class DataArgs(EncodingArgs):
    """What :class:`~leantrain.retrieval.datamodule.RetrievalDataModule` takes besides the
    data directory and the tokenizer."""

    split: str = field(
        default="random",
        metadata=_help(
            "which split of the export to train on", choices=("random", "novel_premises")
        ),
    )
    batch_size: int = field(
        default=8, metadata=_help("training contexts per batch (per device)", range=">=1")
    )
    num_negatives: int = field(
        default=3,
        metadata=_help("negative premises per example (besides in-batch ones)", range=">=0"),
    )
    num_in_file_negatives: int = field(
        default=1,
        metadata=_help(
            "how many of the negatives come from the positive premise's own file", range=">=0"
        ),
    )
    sample_by: str = field(
        default="pair",
        metadata=_help(
            "training items: pair (one per tactic and positive premise, ReProver) or "
            "tactic (one per tactic, a random positive each epoch: shorter epochs, tactics weigh the same)",
            choices=("pair", "tactic"),
        ),
    )
    num_workers: int = field(default=0, metadata=_help("DataLoader worker processes", range=">=0"))
    seed: int = field(
        default=42,
        metadata=_help("random seed (negatives, initialisation, shuffling)", range=">=0"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_in_file_negatives > self.num_negatives:
            raise ConfigError(
                f"num_in_file_negatives ({self.num_in_file_negatives}) > num_negatives ({self.num_negatives})",
                hint="in-file negatives are a part of the negatives",
            )


@_keyword_errors
@dataclass
class RetrievalConfig(RetrieverArgs, DataArgs):
    """A premise-retriever training run: the retriever's and the data's settings (flat, as
    users write them) plus the run's own and Lightning's ``trainer:`` section."""

    model_name: str = field(
        default="tiny",
        metadata=_help(
            "encoder: a registered name ('tiny'), a local HF model directory, or a saved retriever directory"
        ),
    )
    output_dir: str = field(
        default="runs/retrieval", metadata=_help("run directory (model, checkpoints, manifest)")
    )
    data_path: str | None = field(
        default=None,
        metadata=_help(
            "an exported data directory (random/, novel_premises/, corpus.jsonl) to train on"
        ),
    )
    database: str | None = field(
        default=None, metadata=_help("SQLite database of traced repos (lifelong training)")
    )
    repos: list[str] = field(
        default_factory=list,
        metadata=_help(
            "repo ids 'URL@COMMIT' for lifelong training, in order; repeat the flag (default: the database's curriculum)"
        ),
    )
    ewc_batches: int = field(
        default=16,
        metadata=_help("training batches used to estimate the diagonal Fisher", range=">=1"),
    )
    ewc_gamma: float = field(
        default=1.0,
        metadata=_help(
            "decay of older repos' Fisher when adding a new one (1: keep, 0: forget)",
            range="[0,1]",
        ),
    )
    evaluate_each_repo: bool = field(
        default=True,
        metadata=_help(
            "after each repo, score the best checkpoint and BM25 on the export's test splits (R@1, R@10, MRR)"
        ),
    )
    trainer: dict[str, Any] = field(
        default_factory=dict,
        metadata=_help(
            "Lightning Trainer arguments (max_steps, max_epochs, devices, strategy, precision, "
            "val_check_interval, gradient_clip_val, accumulate_grad_batches, log_every_n_steps …), "
            "checked by Lightning; on the command line each is also a flag of its own: "
            "--max-steps 20 --devices 2"
        ),
    )
    report_to: str = field(
        default="auto",
        metadata=_help(
            "where Lightning logs training: tensorboard / csv (under the run directory), "
            "wandb, mlflow, none, or auto (TensorBoard when installed, else CSV)",
            choices=("auto", "tensorboard", "csv", "wandb", "mlflow", "none"),
        ),
    )
    overwrite: bool = field(
        default=False,
        metadata=_help(
            "start over when the output directory holds an earlier run with another config (deletes that run; never other files)."
        ),
    )
    tiny_d_model: int = field(
        default=64, metadata=_help("hidden size of the 'tiny' encoder", range=">=1")
    )
    tiny_layers: int = field(default=2, metadata=_help("layers of the 'tiny' encoder", range=">=1"))
    allow_code: bool = field(
        default=False,
        metadata=_help(
            "allow a 'module:attr' encoder builder that is not registered; like "
            "trust_remote_code, only for configs you trust (also: LEANTRAIN_ALLOW_CODE=1)"
        ),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.trainer:
            from leantrain.retrieval.trainer_args import check_trainer_args

            self.trainer = check_trainer_args(self.trainer)
        if ":" in self.model_name and not Path(self.model_name).exists():
            from leantrain.core.registry import ENCODERS

            ENCODERS.check_code(self.model_name, allow_code=self.allow_code)

    @classmethod
    def flag_sections(cls) -> dict[str, tuple[str, ...]]:
        """Lightning ``Trainer`` arguments are flags of their own (``--max-steps 20``): they
        fill ``trainer:``, over the ``--config`` file's (core's hook)."""
        from leantrain.retrieval.trainer_args import trainer_parameters

        return {"trainer": trainer_parameters()}

    def part(self, cls: type[A]) -> A:
        """The ``cls`` part of this config (:class:`RetrieverArgs` for the model,
        :class:`DataArgs` for the data module), with this config's values."""
        return cls(**{name: getattr(self, name) for name in config_fields(cls)})
