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
    a GPU that supports it, no gradient checkpointing, logs every 5 steps, no hub / reporting.
    """

    output_dir: str | None = field(
        default="runs/sft", metadata={"help": "Run directory (checkpoints, manifest, final model)."}
    )
    gradient_checkpointing: bool = field(
        default=False,
        metadata={"help": "Recompute activations in backward to save memory (slower)."},
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
    report_to: str | list[str] = field(
        default="none", metadata={"help": "Loggers: 'none', 'tensorboard', 'wandb' …"}
    )

    def __post_init__(self) -> None:
        self._check_common()
        self._resolve_precision()
        self.num_train_epochs = self.epochs_per_repo
        super().__post_init__()
