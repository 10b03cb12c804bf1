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

    _precision: str = "fp32"

    def _cpu_autocast(self, args: Any) -> bool:
        """bf16 autocast on a CPU per ``cpu_bf16``, where precision was left to leantrain."""
        import torch
        from leantrain.llm.model_loading import use_cpu_bf16

        if not getattr(args, "precision_auto", False) or torch.cuda.is_available():
            return False
        return use_cpu_bf16(args.cpu_bf16, self.model)

    def train_step(self, step: Any) -> dict[str, Any]:
        """:meth:`LLMTrainer.train_step`, plus the ``precision`` the step trained in."""
        return {**super().train_step(step), "precision": self._precision}

    def _dataset(self, data: Any) -> Any:
        from leantrain.llm.training_data import load_sft_dataset

        return load_sft_dataset(
            data, self.config.train_split, self.config, max_samples=self.config.max_train_samples
        )

    def _trl_trainer(self, dataset: Any, args: Any, callbacks: list[Any]) -> Any:
        import trl

        self._precision = "bf16" if args.bf16 else "fp16" if args.fp16 else "fp32"
        if self._cpu_autocast(args):
            # mixed precision as on a GPU: fp32 master weights, matmuls in bf16 (accelerate's
            # CPU autocast); TrainingArguments checked bf16 against the GPU at init, so set
            # what it derives from it here
            args.bf16, args.mixed_precision = True, "bf16"
            self._precision = "bf16-autocast"
        return trl.SFTTrainer(
            model=self.model,
            args=args,
            train_dataset=dataset,
            processing_class=self.tokenizer,
            callbacks=callbacks,
        )
