"""Supervised fine-tuning of a tactic generator on (proof state -> tactic) pairs, repo by repo."""

from __future__ import annotations

from typing import Any, ClassVar

from leantrain.llm.sft_config import SFTConfig
from leantrain.llm.trainer_base import LLMTrainer


class SFTTrainer(LLMTrainer):
    """Lifelong SFT on TRL's ``SFTTrainer`` (prompt/completion rows: loss on the tactic only).

    ::

        trainer = SFTTrainer(model_name="tiny", output_dir="runs/sft", max_steps=20)
        result = trainer.train("export_dir")              # or train(repos, database, data_path)
        trainer.evaluate("export_dir", "test"); trainer.suggest_tactics("⊢ 1 + 1 = 2", k=4)

    Seed arguments (``model_name, output_dir, epochs_per_repo, batch_size, lr, lora_config``)
    and any :class:`SFTConfig` key as keyword; or ``config=SFTConfig(...)`` / a dict.
    """

    name: ClassVar[str] = "sft"
    config_class: ClassVar[type] = SFTConfig

    def _dataset(self, data: Any) -> Any:
        from leantrain.llm.training_data import load_sft_dataset

        return load_sft_dataset(
            data, self.config.train_split, self.config, max_samples=self.config.max_train_samples
        )

    def _trl_trainer(self, dataset: Any, args: Any, callbacks: list[Any]) -> Any:
        import trl

        return trl.SFTTrainer(
            model=self.model,
            args=args,
            train_dataset=dataset,
            processing_class=self.tokenizer,
            callbacks=callbacks,
        )
