"""SFT, one epoch of mathlib-sample: leantrain's ``SFTTrainer`` vs LeanDojo-v2's.

Inputs (both sides): an export directory whose ``random/train.json`` is mathlib-sample's 100
theorems (469 real tactics), and one tiny random causal LM directory (leantrain's ``tiny``
Llama-style model, hidden 128, 4 layers, its character-level tokenizer with a ChatML
template) that both load with ``from_pretrained``. Both train one epoch, batch 8, lr 2e-5, as
each trainer formats rows: LeanDojo-v2 as ``messages`` (its system prompt + state + tactic),
leantrain as prompt/completion (loss on the tactic only). LeanDojo-v2 as shipped loads the
weights in bf16; its ``bf16=True`` default (mixed precision) is turned off, since transformers
refuses it without a GPU (BENCHMARKS.md). leantrain runs with its defaults (length-grouped
batches; bf16 autocast where the CPU has bf16 instructions, fp32 master weights).
Timed: the ``train()`` call (for LeanDojo-v2 that includes its ``export_merged_data`` call,
a no-op stub here, since the export exists). Items: training rows (one per tactic).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if __package__:
    from . import MATHLIB, Benchmark, portable_tokenizer, require

BATCH = 8
LR = 2e-5
MODEL = {"hidden_size": 64, "num_layers": 2, "num_heads": 4}


def prepare(work: Path, args: Any) -> dict[str, Any]:
    import shutil

    from leantrain.llm.tiny_model import save_tiny_model

    export = work / "export"
    (export / "random").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(require(MATHLIB), export / "random" / "train.json")
    model_dir = save_tiny_model(work / "tiny-lm", **MODEL)
    portable_tokenizer(model_dir)
    return {"data": str(export), "model": str(model_dir), "out": str(work / "out")}


def ours(inputs: dict[str, Any], timer: Any) -> int:
    import shutil

    import transformers
    from leantrain.llm import SFTTrainer

    transformers.logging.set_verbosity_error()
    out = inputs["out"] + "-ours"
    shutil.rmtree(out, ignore_errors=True)
    trainer = SFTTrainer(
        model_name=inputs["model"],
        output_dir=out,
        num_train_epochs=1,
        per_device_train_batch_size=BATCH,
        learning_rate=LR,
        evaluate_each_repo=False,
        **inputs.get("ours_options", {}),
    )
    with timer:
        result = trainer.train(inputs["data"])
    step = next(iter(result["per_repo"].values()))
    timer.extra = {k: step[k] for k in ("train_rows", "precision") if k in step}
    return int(step.get("train_rows") or _count_rows(inputs["data"]))


def _count_rows(export: str) -> int:
    import json

    with open(Path(export) / "random" / "train.json", encoding="utf-8") as f:
        return sum(len(t["traced_tactics"]) for t in json.load(f))


def ld2(inputs: dict[str, Any], timer: Any) -> int:
    import shutil

    import _ld2_patches

    _ld2_patches.apply()
    import transformers
    from lean_dojo_v2.trainer.sft_trainer import SFTDataset, SFTTrainer

    transformers.logging.set_verbosity_error()
    out = inputs["out"] + "-ld2"
    shutil.rmtree(out, ignore_errors=True)
    _ld2_patches.sft_bf16_off()
    trainer = SFTTrainer(
        model_name=inputs["model"], output_dir=out, epochs_per_repo=1, batch_size=BATCH, lr=LR
    )
    rows = len(SFTDataset(str(Path(inputs["data"]) / "random" / "train.json")).data)
    with timer:
        trainer.train(["bench"], _ld2_patches.ExportedDatabase(), Path(inputs["data"]))
    return rows


if __package__:
    BENCH = Benchmark(
        name="sft",
        title="SFT, one epoch of mathlib-sample (tiny LM)",
        unit="samples/s",
        prepare=prepare,
        script=Path(__file__),
        order=30,
        target=1.5,
    )

if __name__ == "__main__":
    from _side import main

    main({"ours": ours, "ld2": ld2})
    sys.exit(0)
