"""Benchmark: progress-model training with dynamic padding vs padding every row to max_length.

Rows come from real proof states (``../shared/data/mathlib-sample/test.json``, 469 tactics;
synthetic states when it is absent). A tiny BERT (2 layers, hidden 64) with a 2k WordPiece
tokenizer trained on the rows is fine-tuned on CPU for the same rows, steps and seed twice,
each in its own process (for a clean peak RSS):

* reference — the seed's way: every row padded to ``max_length=512``, random batches;
* leantrain — dynamic padding (``DataCollatorWithPadding``) and length-grouped batches.

Prints training samples/s of both, their ratio, the ideal gain from removing padding
(``max_length / mean tokenized length``), the share of the ideal reached, and peak RSS.
Usage: ``uv run python tools/bench/progress.py [epochs]``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (ROOT / "../shared/data/mathlib-sample/test.json").resolve()
MAX_LENGTH = 512


def rows_file(tmp: Path) -> Path:
    from leantrain.progress import make_progress_data

    out = tmp / "rows.jsonl"
    if SAMPLE.is_file():
        make_progress_data(SAMPLE, out)
    else:  # synthetic states of mixed lengths
        import random

        rng = random.Random(0)
        lines = []
        for i in range(400):
            goal = (
                " ".join(f"h{j} : x{j} + {j} ≤ y{j}" for j in range(rng.randint(1, 40)))
                + " ⊢ x = y"
            )
            lines.append(
                json.dumps(
                    {"goal": goal, "prefix": "", "tactic": "simp", "steps_remaining": 1 + i % 5}
                )
            )
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def child(mode: str, rows: str, out_dir: str, epochs: float) -> None:
    import torch

    torch.set_num_threads(1)  # same compute budget for both runs on a shared CPU
    import transformers

    transformers.logging.set_verbosity_error()
    from leantrain.progress import ProgressDataset, ProgressTrainer

    opts = dict(
        model_name="tiny",
        tiny_hidden_size=64,
        tiny_layers=2,
        tiny_vocab_size=2000,
        max_length=MAX_LENGTH,
        batch_size=8,
        epochs=epochs,
        learning_rate=1e-4,
        eval_ratio=0.0,
        logging_steps=10_000,
    )
    if mode == "reference":
        opts.update(padding="max_length", train_sampling_strategy="random")
    trainer = ProgressTrainer(rows, output_dir=out_dir, **opts)
    texts = ProgressDataset(rows).texts()
    trainer._ensure_model(texts)
    lengths = [
        min(len(ids), MAX_LENGTH)
        for ids in trainer.tokenizer(texts, truncation=True, max_length=MAX_LENGTH)["input_ids"]
    ]
    t0 = time.perf_counter()
    fit = trainer.train()["final"]
    wall = time.perf_counter() - t0
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "mode": mode,
                "rows": len(texts),
                "samples_per_s": fit["train_samples_per_second"],
                "train_runtime_s": fit["train_runtime"],
                "wall_s": wall,
                "steps": fit["global_step"],
                "mean_len": sum(lengths) / len(lengths),
                "peak_rss_mib": peak_mib,
                "train_loss": fit["train_loss"],
            }
        )
    )


def main() -> None:
    epochs = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        rows = rows_file(tmp)
        results = {}
        for mode in ("reference", "dynamic"):
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    mode,
                    str(rows),
                    str(tmp / mode),
                    str(epochs),
                ],
                capture_output=True,
                text=True,
                env={**os.environ, "TOKENIZERS_PARALLELISM": "false"},
            )
            if proc.returncode != 0:
                sys.exit(f"{mode} run failed:\n{proc.stderr[-3000:]}")
            results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    ref, dyn = results["reference"], results["dynamic"]
    ideal = MAX_LENGTH / dyn["mean_len"]
    gain = dyn["samples_per_s"] / ref["samples_per_s"]
    print(
        f"data: {ref['rows']} rows from {'mathlib-sample' if SAMPLE.is_file() else 'synthetic states'}, "
        f"mean tokenized length {dyn['mean_len']:.1f} (max_length {MAX_LENGTH}), {dyn['steps']} steps of 8"
    )
    for r in (ref, dyn):
        print(
            f"{r['mode']:>9}: {r['samples_per_s']:8.2f} samples/s  train {r['train_runtime_s']:6.2f} s  "
            f"peak RSS {r['peak_rss_mib']:7.1f} MiB  loss {r['train_loss']:.3f}"
        )
    print(
        f"speed-up dynamic/reference: {gain:.2f}x; ideal max_length/mean_len: {ideal:.2f}x; "
        f"reached {100 * gain / ideal:.0f}% of ideal (target >= 90%)"
    )
    print(f"peak RSS ratio dynamic/reference: {dyn['peak_rss_mib'] / ref['peak_rss_mib']:.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
    else:
        main()
