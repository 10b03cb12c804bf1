"""SFT throughput on real Mathlib states: batching modes and precisions, MFU vs a measured peak.

One full epoch of mathlib-sample (469 real tactics; a missing file is an error) per run, so a
length-grouped sampler is timed over all its batches, not the longest first. Modes:

* ``padded`` — random batches padded to their longest row (TRL's default; the reference);
* ``grouped`` — length-grouped batches (leantrain's default), fp32;
* ``grouped-bf16`` — the same with bf16 autocast (``cpu_bf16: on``), where the CPU has native
  bf16 (AVX512-BF16 / AMX);
* ``padding_free`` — TRL's ``padding_free`` (one concatenated row per batch).

Each run is its own process with one torch thread; modes are interleaved, ``--repeats`` times
(default 3), and medians compared. tokens/s counts non-padding tokens; ratios are throughput
ratios against ``padded`` (> 1 = faster). MFU = 6 × params × tokens/s against the matmul peak of
the precision the run used, measured on the same thread count: the best of 5 samples of at
least 0.5 s each. The comparison with LeanDojo-v2's trainer is ``anchor.py --sft``.

    uv run python tools/bench/sft.py [--model tiny|10M] [--repeats 3] [--batch 8]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = (Path(__file__).resolve().parents[2] / "../shared/data/mathlib-sample/test.json").resolve()
MODELS = {"tiny": {}, "10M": {"hidden_size": 384, "num_layers": 8, "num_heads": 6}}


def matmul_peak(dtype_name: str, n: int = 512, samples: int = 5, min_s: float = 0.5) -> float:
    """FLOP/s of an n×n matmul in ``dtype_name``: the best of ``samples`` windows of ≥ ``min_s``."""
    import torch

    dtype = getattr(torch, dtype_name)
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    for _ in range(3):
        a @ b
    best = 0.0
    for _ in range(samples):
        reps, t0 = 0, time.perf_counter()
        while (dt := time.perf_counter() - t0) < min_s:
            a @ b
            reps += 1
        best = max(best, 2 * n**3 * reps / dt)
    return best


def child(model: str, mode: str, batch: int, data: str) -> None:
    import torch

    torch.set_num_threads(1)
    import transformers
    from leantrain.llm import SFTTrainer
    from leantrain.llm.tiny_model import save_tiny_model

    transformers.logging.set_verbosity_error()
    extra: dict = {"train_sampling_strategy": "random", "cpu_bf16": "off"}
    if mode.startswith("grouped"):
        extra["train_sampling_strategy"] = "group_by_length"
    if mode == "grouped-bf16":
        extra["cpu_bf16"] = "on"
    if mode == "padding_free":
        extra.update(padding_free=True, max_length=None)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = save_tiny_model(Path(tmp) / "model", **MODELS[model])
        trainer = SFTTrainer(
            model_name=str(model_dir),
            output_dir=str(Path(tmp) / "run"),
            num_train_epochs=1,
            per_device_train_batch_size=batch,
            evaluate_each_repo=False,
            save_strategy="no",
            **extra,
        )
        from leantrain.llm.training_data import load_sft_dataset

        rows = load_sft_dataset(data, "train", trainer.config)
        tok = trainer.tokenizer
        tokens = 0
        for r in rows:  # prompt + completion as the chat template renders them
            text = tok.apply_chat_template(r["prompt"] + r["completion"], tokenize=False)
            tokens += len(tok(text, add_special_tokens=False)["input_ids"])
        params = sum(p.numel() for p in trainer.model.parameters())
        t0, c0 = time.perf_counter(), time.process_time()
        step = next(iter(trainer.train(data)["per_repo"].values()))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        json.dumps(
            {
                "tokens": tokens,
                "rows": len(rows),
                "wall_s": wall,
                "cpu_s": cpu,
                "params": params,
                "precision": step.get("precision", "fp32"),
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--model", choices=sorted(MODELS), default="tiny")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--data", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.model, args.child[1], args.batch, args.data)
    if not DATA.is_file():
        sys.exit(
            f"missing data file {DATA} (see ../shared/data/README.md); no synthetic substitute"
        )
    import torch
    from leantrain.llm.model_loading import cpu_bf16_supported

    torch.set_num_threads(1)
    peaks = {"fp32": matmul_peak("float32")}
    modes = ["padded", "grouped", "padding_free"]
    if cpu_bf16_supported():
        peaks["bf16-autocast"] = matmul_peak("bfloat16")
        modes.insert(2, "grouped-bf16")
    print(
        "matmul peak, 1 thread: "
        + ", ".join(f"{k} {v / 1e9:.1f} GFLOP/s" for k, v in peaks.items())
    )
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "export"
        (export / "random").mkdir(parents=True)
        (export / "random" / "train.json").write_bytes(DATA.read_bytes())
        load_before = Path("/proc/loadavg").read_text().split()[:3]
        runs: dict[str, list[dict]] = {m: [] for m in modes}
        for _rep in range(args.repeats):
            for mode in modes:
                proc = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--model",
                        args.model,
                        "--batch",
                        str(args.batch),
                        "--child",
                        args.model,
                        mode,
                        "--data",
                        str(export),
                    ],
                    capture_output=True,
                    text=True,
                    env={**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"},
                )
                if proc.returncode != 0:
                    sys.exit(f"{mode} failed:\n{proc.stderr[-3000:]}")
                runs[mode].append(json.loads(proc.stdout.strip().splitlines()[-1]))
        load_after = Path("/proc/loadavg").read_text().split()[:3]
    first = runs["padded"][0]
    print(
        f"{args.model}: {first['params'] / 1e6:.2f}M params, {first['rows']} rows, {first['tokens']} tokens, "
        f"batch {args.batch}, one epoch, {args.repeats} interleaved runs per mode; load "
        f"{' '.join(load_before)} -> {' '.join(load_after)}"
    )
    ref = statistics.median(r["wall_s"] for r in runs["padded"])
    ref_cpu = statistics.median(r["cpu_s"] for r in runs["padded"])
    for mode, rs in runs.items():
        wall = statistics.median(r["wall_s"] for r in rs)
        cpu = statistics.median(r["cpu_s"] for r in rs)
        tps = rs[0]["tokens"] / wall
        prec = rs[0]["precision"]
        mfu = 6 * rs[0]["params"] * (rs[0]["tokens"] / cpu) / peaks.get(prec, peaks["fp32"])
        print(
            f"  {mode:13s} {prec:14s} {tps:9.0f} tok/s (median wall {wall:6.2f} s, CPU {cpu:6.2f} s)  "
            f"× padded {ref / wall:.2f} (CPU time {ref_cpu / cpu:.2f})  MFU {mfu:.1%} of the {prec} peak"
        )


if __name__ == "__main__":
    main()
