"""Progress-regressor training: leantrain's ``ProgressTrainer`` vs LeanDojo-v2's.

Inputs (both sides): the progress rows of mathlib-sample (469 real tactics, written by
``leantrain.progress.make_progress_data``) and one tiny BERT directory (2 layers, hidden 64,
a 2k WordPiece vocabulary of those rows), loaded by both through ``model_name=<dir>``. Both
train one epoch, batch 8, lr 1e-5, ``max_length`` 512, eval ratio 0.2 (evaluation and saving
as each trainer does by default). Timed: the ``train()`` call, imports excluded on both sides
(LeanDojo-v2 imports ``Trainer`` at module level; ours imports it inside ``train()``, so the
bench imports it first). Not equal, stated: our ``train()`` loads the model and tokenizer
(LeanDojo-v2's constructor does, untimed) and saves the final model with its manifest; our split
holds out whole proofs (365 training rows, theirs 375). Items: rows trained.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

if __package__:
    from . import MATHLIB, Benchmark, portable_tokenizer, require

COMMON = {"max_length": 512, "batch_size": 8, "epochs": 1.0, "learning_rate": 1e-5}
EVAL_RATIO = 0.2


def prepare(work: Path, args: Any) -> dict[str, Any]:
    from leantrain.progress import ProgressDataset, make_progress_data
    from leantrain.progress.tiny_model import build_tiny_tokenizer
    from transformers import BertConfig, BertForSequenceClassification

    rows = work / "rows.jsonl"
    make_progress_data(require(MATHLIB), rows)
    model_dir = work / "tiny-bert"
    # a plain BERT regressor both transformers versions load (not leantrain's own tiny class)
    tokenizer = build_tiny_tokenizer(ProgressDataset(str(rows)).texts(), vocab_size=2000)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=256,
        max_position_embeddings=512,
        num_labels=1,
        problem_type="regression",
        pad_token_id=tokenizer.pad_token_id,
    )
    import torch

    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    portable_tokenizer(model_dir)
    return {"rows": str(rows), "model": str(model_dir), "out": str(work / "out")}


def ours(inputs: dict[str, Any], timer: Any) -> int:
    import shutil

    import transformers
    from leantrain.progress import ProgressTrainer

    # train() imports Trainer lazily; LeanDojo-v2 imports it at module level (untimed)
    from transformers import Trainer  # noqa: F401

    transformers.logging.set_verbosity_error()
    shutil.rmtree(inputs["out"] + "-ours", ignore_errors=True)
    trainer = ProgressTrainer(
        inputs["rows"],
        model_name=inputs["model"],
        output_dir=inputs["out"] + "-ours",
        eval_ratio=EVAL_RATIO,
        **COMMON,
    )
    with timer:
        result = trainer.train()
    step = next(iter(result["per_repo"].values()))
    return int(step["train_rows"] * COMMON["epochs"])


def ld2(inputs: dict[str, Any], timer: Any) -> int:
    import shutil

    import _ld2_patches

    _ld2_patches.apply()
    import transformers
    from lean_dojo_v2.trainer.progress_trainer import ProgressTrainer

    transformers.logging.set_verbosity_error()
    shutil.rmtree(inputs["out"] + "-ld2", ignore_errors=True)
    trainer = ProgressTrainer(
        data_path=inputs["rows"],
        model_name=inputs["model"],
        output_dir=inputs["out"] + "-ld2",
        eval_ratio=EVAL_RATIO,
        **COMMON,
    )
    lines = Path(inputs["rows"]).read_text(encoding="utf-8").splitlines()
    n = sum(1 for line in lines if line.strip())
    with timer:
        trainer.train()
    return int((n - math.ceil(EVAL_RATIO * n)) * COMMON["epochs"])


if __package__:
    BENCH = Benchmark(
        name="progress",
        title="progress training, 1 epoch of mathlib-sample rows (tiny BERT)",
        unit="samples/s",
        prepare=prepare,
        script=Path(__file__),
        order=20,
        target=1.7,
    )

if __name__ == "__main__":
    from _side import main

    main({"ours": ours, "ld2": ld2})
    sys.exit(0)
