"""Supervised fine-tuning of a tactic generator on (proof state -> tactic) pairs, repo by repo."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from leantrain.core.errors import DataError
from leantrain.llm.lifelong import LifelongTrainer
from leantrain.llm.sft_config import SFTConfig


class SFTTrainer(LifelongTrainer):
    """Lifelong SFT on TRL's ``SFTTrainer`` (prompt/completion rows: loss on the tactic only).

    ::

        trainer = SFTTrainer(model_name="tiny", output_dir="runs/sft", max_steps=20)
        result = trainer.train("export_dir")              # or train(repos, database, data_path)
        trainer.evaluate("test"); trainer.suggest_tactics("⊢ 1 + 1 = 2", k=4)

    Seed arguments (``model_name, output_dir, epochs_per_repo, batch_size, lr, lora_config``)
    and any :class:`SFTConfig` key as keyword; or ``config=SFTConfig(...)`` / a dict.
    """

    kind: ClassVar[str] = "sft"
    config_class: ClassVar[type] = SFTConfig

    def _train_stage(
        self, data: Any, stage_dir: Path, resume: str | None, callback: Any
    ) -> dict[str, Any]:
        import trl
        from leantrain.llm.training_data import load_sft_dataset

        dataset = load_sft_dataset(
            data, self.config.train_split, self.config, max_samples=self.config.max_train_samples
        )
        if len(dataset) == 0:
            raise DataError(
                str(data), "no training examples", hint="check the split and the filters"
            )
        trainer = trl.SFTTrainer(
            model=self.model,
            args=self._stage_args(stage_dir),
            train_dataset=dataset,
            processing_class=self.tokenizer,
            callbacks=[callback, *self.callbacks],
        )
        output = trainer.train(resume_from_checkpoint=resume)
        self._model = (
            trainer.model if not hasattr(trainer.model, "module") else trainer.model.module
        )
        losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
        return {
            "train_loss": output.training_loss,
            "first_loss": losses[0] if losses else None,
            "last_loss": losses[-1] if losses else None,
            "global_step": trainer.state.global_step,
            "num_examples": len(dataset),
        }
