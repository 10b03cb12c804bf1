"""Configuration of :class:`~leantrain.llm.SFTTrainer`: TRL's ``SFTConfig`` plus leantrain's fields."""

from __future__ import annotations

from dataclasses import dataclass, field

import trl
from leantrain.llm.common_config import LeanTrainArguments


@dataclass
class SFTConfig(LeanTrainArguments, trl.SFTConfig):
    """Every ``trl.SFTConfig`` / ``TrainingArguments`` option, plus the model, data, lifelong,
    LoRA and evaluation fields of :class:`~leantrain.llm.common_config.LeanTrainArguments`.

    Defaults differ from TRL's where TRL's fail or waste time on small CPU runs: ``bf16`` only on
    a GPU that supports it, activation checkpointing only for models at least 256 wide, logs
    every 5 steps, no hub,
    and length-grouped batches.
    """

    output_dir: str | None = field(
        default="runs/sft", metadata={"help": "Run directory (manifest, one model per repo, logs)."}
    )
    gradient_checkpointing: bool | None = field(
        default=None,
        metadata={"help": "Deprecated name of activation_checkpointing (transformers 5)."},
    )
    activation_checkpointing: bool | None = field(
        default=None,
        metadata={
            "help": "Recompute activations in backward to save memory (slower). Unset: on for "
            "models with hidden size >= 256 (TRL's default), off for narrower (tiny) ones."
        },
    )
    logging_steps: float = field(default=5, metadata={"help": "Log every N optimizer steps."})
    save_steps: float = field(
        default=50, metadata={"help": "Save a resumable checkpoint every N steps."}
    )
    save_total_limit: int | None = field(
        default=2, metadata={"help": "Keep at most N checkpoints per repo."}
    )
    max_length: int | None = field(
        default=1024, metadata={"help": "Truncate tokenized examples to this length."}
    )
    # Batches of similar length waste little on padding: 1.5-1.6x the tokens/s of random
    # batches on CPU (BENCHMARKS.md), where padding_free/packing is slower without a varlen
    # attention kernel. With flash attention on a GPU, padding_free=True is the faster choice.
    # leantrain's group_by_length is not transformers' LengthGroupedSampler (longest rows of
    # 50-batch megabatches first, so a short max_steps run trained on the longest rows of one
    # sample): rows are length-sorted within windows of length_group_window batches, then the
    # batches dealt in random order, so every prefix of a run is a fair sample
    # (leantrain.llm.sampling).
    train_sampling_strategy: str = field(
        default="group_by_length",
        metadata={
            "help": "Training sampler: 'group_by_length' (default: batches of rows of similar "
            "length, the batches in random order, so every prefix of a run is a fair sample; "
            "little padding), 'random', 'sequential' or 'batch_rebalance'."
        },
    )
    length_group_window: int = field(
        default=8,
        metadata={
            "help": "group_by_length: sort rows by length within random windows of this many "
            "batches (larger pads less, but each batch is a narrower length band)."
        },
    )

    cpu_bf16: str = field(
        default="auto",
        metadata={
            "help": "bf16 autocast (fp32 master weights) when training on a CPU: 'auto' (a CPU "
            "with AVX512-BF16/AMX and a model with hidden size >= 256), 'on' or 'off'. Not used "
            "on a GPU or where bf16/fp16 is set explicitly.",
            "choices": ("auto", "on", "off"),
        },
    )

    def __post_init__(self) -> None:
        self._check_common()
        from leantrain.core.config import check_choices, check_numbers

        check_numbers(self, {"length_group_window": ">=1"})
        check_choices(type(self), {"cpu_bf16": self.cpu_bf16}, source=type(self).__name__)
        self._resolve_precision()
        # unset: chosen by the model's width when training starts (transformers makes it False)
        self.checkpointing_auto = (
            self.activation_checkpointing is None and self.gradient_checkpointing is None
        )
        super().__post_init__()
