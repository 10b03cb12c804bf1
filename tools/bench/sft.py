"""SFT throughput on real Mathlib states: padding-free (and packed) batches vs plain padding.

Prints tokens/s (non-padding tokens trained per second) for the tiny model and a ~10M-parameter
model, the ratios length-grouped / padded, padding-free / padded and packed / padded measured in
the same run (on CPU, without a varlen attention kernel, padding-free and packed rows attend
over the whole concatenated row and are slower; length grouping removes padding instead), and model-FLOPs utilisation
(6 × params × tokens/s) against a matmul peak measured in the same run.

    uv run python tools/bench/sft.py [--steps 20] [--batch 8]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

DATA = Path(__file__).resolve().parents[2] / "../shared/data/mathlib-sample/test.json"


def matmul_peak(n: int = 1024, reps: int = 10) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * n**3 * reps / (time.perf_counter() - t)


def bench(model_kwargs: dict, mode: str, steps: int, batch: int) -> tuple[float, int]:
    import trl
    from leantrain.llm import SFTConfig, build_tiny_model
    from leantrain.llm.training_data import load_sft_dataset

    model, tok = build_tiny_model(**model_kwargs)
    with tempfile.TemporaryDirectory() as out:
        # "padded" is the reference: random batches padded to their longest row (TRL's default);
        # "grouped" is leantrain's default: batches of similar length.
        extra: dict = {"train_sampling_strategy": "random"}
        if mode == "grouped":
            extra = {"train_sampling_strategy": "group_by_length"}
        if mode == "padding_free":
            extra = {"padding_free": True, "max_length": None, "train_sampling_strategy": "random"}
        if mode == "packed":
            extra = {
                "packing": True,
                "packing_strategy": "bfd",
                "max_length": 1024,
                "train_sampling_strategy": "random",
            }
        cfg = SFTConfig(
            output_dir=out,
            max_steps=steps,
            per_device_train_batch_size=batch,
            logging_steps=1000,
            save_strategy="no",
            report_to="none",
            eval_split="",
            **extra,
        )
        ds = load_sft_dataset(DATA.resolve(), "test", cfg)
        trainer = trl.SFTTrainer(model=model, args=cfg, train_dataset=ds, processing_class=tok)
        seen = sum(
            int(b["attention_mask"].sum()) if "attention_mask" in b else b["input_ids"].numel()
            for i, b in zip(range(steps), trainer.get_train_dataloader())
        )
        t = time.perf_counter()
        trainer.train()
        dt = time.perf_counter() - t
    params = sum(p.numel() for p in model.parameters())
    return seen / dt, params


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=8)
    args = ap.parse_args()
    torch.manual_seed(0)
    peak = matmul_peak()
    print(f"matmul peak: {peak / 1e9:.1f} GFLOP/s")
    for name, kw in [("tiny", {}), ("10M", {"hidden_size": 384, "num_layers": 8, "num_heads": 6})]:
        res = {}
        for mode in ("padded", "grouped", "padding_free", "packed"):
            tps, params = bench(kw, mode, args.steps, args.batch)
            res[mode] = tps
            mfu = 6 * params * tps / peak
            print(
                f"{name:5s} ({params / 1e6:.2f}M params) {mode:13s} {tps:9.0f} tok/s  MFU {mfu:.1%}"
            )
        print(
            f"{name:5s} grouped / padded = {res['grouped'] / res['padded']:.2f}x, "
            f"padding_free / padded = {res['padding_free'] / res['padded']:.2f}x, "
            f"packed / padded = {res['packed'] / res['padded']:.2f}x"
        )


if __name__ == "__main__":
    main()
