"""Configuration of :class:`~leantrain.llm.SFTTrainer`: TRL's ``SFTConfig`` plus leantrain's groups."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import trl
from leantrain.core.config import AtLeast1, setting
from leantrain.llm.common_config import LeanTrainArguments


@dataclass
class SFTConfig(
    LeanTrainArguments,
    trl.SFTConfig,
    defaults={"logging_steps": 5, "save_steps": 50, "save_total_limit": 2, "max_length": 1024},
):
    """Every ``trl.SFTConfig`` / ``TrainingArguments`` option, plus leantrain's groups
    (:class:`~leantrain.llm.common_config.LeanTrainArguments`). Defaults differ from TRL's where
    TRL's fail or waste time on small CPU runs (``bf16`` only on a GPU that supports it)."""

    output_dir: str | None = setting(
        "runs/sft", "Run directory (manifest, one model per repo, logs)."
    )
    activation_checkpointing: bool | None = setting(
        None,
        "Recompute activations in backward to save memory (slower). Unset: on for models with "
        "hidden size >= 256 (TRL's default), off for narrower (tiny) ones.",
    )
    # 1.5-1.6x the tokens/s of random batches on CPU (BENCHMARKS.md), where padding_free/packing
    # is slower without a varlen attention kernel (on a GPU with flash attention, padding_free=True
    # is faster). Not transformers' LengthGroupedSampler: see leantrain.llm.sampling.
    train_sampling_strategy: str = setting(
        "group_by_length",
        "Training sampler: 'group_by_length' (default: batches of rows of similar length, the "
        "batches in random order, so every prefix of a run is a fair sample; little padding), "
        "'random', 'sequential' or 'batch_rebalance'.",
    )
    length_group_window: AtLeast1 = setting(
        8,
        "group_by_length: sort rows by length within random windows of this many batches "
        "(larger pads less, but each batch is a narrower length band).",
    )
    cpu_bf16: Literal["auto", "on", "off"] = setting(
        "auto",
        "bf16 autocast (fp32 master weights) when training on a CPU: 'auto' (a CPU with "
        "AVX512-BF16/AMX and a model with hidden size >= 256), 'on' or 'off'. Not used on a GPU "
        "or where bf16/fp16 is set explicitly.",
    )

    def __post_init__(self) -> None:
        self._resolve_precision()
        # unset: chosen by the model's width when training starts (transformers makes it False)
        self.checkpointing_auto = (
            self.activation_checkpointing is None and self.gradient_checkpointing is None
        )
        super().__post_init__()
