"""Supervised fine-tuning of a tactic generator on (proof state -> tactic) pairs, repo by repo."""

from __future__ import annotations

from typing import Any, ClassVar

import trl
from leantrain.llm.sampling import DEFAULT_WINDOW, LengthGroupedShuffledSampler, dataset_lengths
from leantrain.llm.sft_config import SFTConfig
from leantrain.llm.trainer_base import LLMTrainer
from transformers.trainer_utils import has_length


class _TRLSFTTrainer(trl.SFTTrainer):
    """TRL's ``SFTTrainer`` whose ``group_by_length`` sampler is leantrain's
    :class:`~leantrain.llm.sampling.LengthGroupedShuffledSampler` (length-grouped batches in
    random order) instead of transformers' ``LengthGroupedSampler``; other strategies as TRL's."""

    _grouped_sampler: LengthGroupedShuffledSampler | None = None

    def _get_train_sampler(self, train_dataset: Any = None) -> Any:
        dataset = train_dataset if train_dataset is not None else self.train_dataset
        if self.args.train_sampling_strategy != "group_by_length" or not has_length(dataset):
            return super()._get_train_sampler(train_dataset)  # an IterableDataset: HF warns
        names = getattr(self.processing_class, "model_input_names", None) or ["input_ids"]
        lengths = dataset_lengths(dataset, names[0], self.args.length_column_name)
        if lengths is None:
            raise ValueError(
                f"group_by_length needs a '{self.args.length_column_name}' or '{names[0]}' "
                "column in the training dataset"
            )
        seed = self.args.data_seed if self.args.data_seed is not None else self.args.seed
        self._grouped_sampler = LengthGroupedShuffledSampler(
            lengths,
            self._train_batch_size,  # the DataLoader's batch size: its batches are the groups
            window=getattr(self.args, "length_group_window", DEFAULT_WINDOW),
            seed=seed,
        )
        return self._grouped_sampler

    def _run_epoch(self, *args: Any, **kwargs: Any) -> Any:
        # the HF Trainer sets the epoch through accelerate's wrappers, which miss the sampler
        # of a multi-process run resumed mid-epoch (SkipBatchSampler(BatchSamplerShard(...))):
        # set it here too, so a resumed epoch draws its own order on every process
        if self._grouped_sampler is not None and "epoch" in kwargs:
            self._grouped_sampler.set_epoch(kwargs["epoch"])
        return super()._run_epoch(*args, **kwargs)


class SFTTrainer(LLMTrainer):
    """Lifelong SFT on TRL's ``SFTTrainer`` (prompt/completion rows: loss on the tactic only).

    ::

        trainer = SFTTrainer(model_name="tiny", output_dir="runs/sft", max_steps=20)
        result = trainer.train("export_dir")              # or train(repos, database, export_dir)
        trainer.evaluate("export_dir", "test"); trainer.suggest_tactics("⊢ 1 + 1 = 2", k=4)

    Seed arguments (``model_name, output_dir, epochs_per_repo, batch_size, lr, lora_config``)
    and any :class:`SFTConfig` key as keyword; or ``config=SFTConfig(...)`` / a dict.
    """

    name: ClassVar[str] = "sft"
    config_class: ClassVar[type] = SFTConfig

    _precision: str = "fp32"
    _checkpointing: bool = False

    def _cpu_autocast(self, args: Any) -> bool:
        """bf16 autocast on a CPU per ``cpu_bf16``, where precision was left to leantrain."""
        import torch
        from leantrain.llm.model_loading import use_cpu_bf16

        if not getattr(args, "precision_auto", False) or torch.cuda.is_available():
            return False
        return use_cpu_bf16(args.cpu_bf16, self.model)

    def train_step(self, step: Any) -> dict[str, Any]:
        """:meth:`LLMTrainer.train_step`, plus the ``precision`` the step trained in and whether
        it recomputed activations (``activation_checkpointing``)."""
        return {
            **super().train_step(step),
            "precision": self._precision,
            "activation_checkpointing": self._checkpointing,
        }

    def _dataset(self, data: Any) -> Any:
        from leantrain.llm.training_data import load_sft_dataset

        return load_sft_dataset(
            data,
            self.config.train_split,
            self.config,
            max_samples=self.config.max_train_samples,
            prompt=self.prompt,
        )

    def _trl_trainer(self, dataset: Any, args: Any, callbacks: list[Any]) -> Any:
        self._precision = "bf16" if args.bf16 else "fp16" if args.fp16 else "fp32"
        if self._cpu_autocast(args):
            # mixed precision as on a GPU: fp32 master weights, matmuls in bf16 (accelerate's
            # CPU autocast); TrainingArguments checked bf16 against the GPU at init, so set
            # what it derives from it here
            args.bf16, args.mixed_precision = True, "bf16"
            self._precision = "bf16-autocast"
        if getattr(args, "checkpointing_auto", False):
            from leantrain.llm.model_loading import CHECKPOINTING_MIN_HIDDEN, model_width

            on = model_width(self.model) >= CHECKPOINTING_MIN_HIDDEN
            args.activation_checkpointing = args.gradient_checkpointing = on
        self._checkpointing = bool(args.activation_checkpointing)
        return _TRLSFTTrainer(
            model=self.model,
            args=args,
            train_dataset=dataset,
            processing_class=self.tokenizer,
            callbacks=callbacks,
        )
