"""Benchmark: progress-model training with dynamic padding vs padding every row to max_length.

Rows come from real proof states (``../shared/data/mathlib-sample/test.json``, 469 tactics; a
missing file is an error). A tiny BERT (2 layers, hidden 64) with a 2k WordPiece tokenizer
trained on the rows is fine-tuned on CPU, one torch thread, for the same rows, steps and seed
in both modes, each run in its own process (for a clean peak RSS), interleaved
reference/leantrain after one warm-up pair, ``--repeats`` times (default 3); medians of wall
and CPU time are compared, with the load average before and after:

* reference — the seed's way: every row padded to ``max_length=512``, random batches;
* leantrain — dynamic padding (``DataCollatorWithPadding``) and length-grouped batches.

Prints training samples/s of both (median), their throughput ratio by wall and by CPU time, the
ideal gain from removing padding (``max_length / mean tokenized length``), the share of the
ideal reached, and peak RSS. The comparison with LeanDojo-v2's own trainer is
``tools/bench/anchor.py --progress``.
Usage: ``uv run python tools/bench/progress.py [epochs] [--repeats=N]``.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
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

    if not SAMPLE.is_file():
        sys.exit(
            f"missing data file {SAMPLE} (see ../shared/data/README.md); no synthetic substitute"
        )
    out = tmp / "rows.jsonl"
    make_progress_data(SAMPLE, out)
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
    t0, c0 = time.perf_counter(), time.process_time()
    fit = trainer.train()["final"]
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "mode": mode,
                "rows": len(texts),
                "samples_per_s": fit["train_samples_per_second"],
                "train_runtime_s": fit["train_runtime"],
                "wall_s": wall,
                "cpu_s": cpu,
                "steps": fit["global_step"],
                "mean_len": sum(lengths) / len(lengths),
                "peak_rss_mib": peak_mib,
                "train_loss": fit["train_loss"],
            }
        )
    )


def _run(mode: str, rows: Path, out: Path, epochs: float) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(rows), str(out), str(epochs)],
        capture_output=True,
        text=True,
        env={**os.environ, "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"},
    )
    if proc.returncode != 0:
        sys.exit(f"{mode} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--repeats")]
    repeats = 3
    for a in sys.argv[1:]:
        if a.startswith("--repeats="):
            repeats = int(a.split("=", 1)[1])
    epochs = float(args[0]) if args else 1.0
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        rows = rows_file(tmp)
        runs: dict[str, list[dict]] = {"reference": [], "dynamic": []}
        for rep in range(-1, repeats):  # one warm-up pair, then interleaved timed pairs
            for mode in ("reference", "dynamic"):
                r = _run(mode, rows, tmp / f"{mode}{rep}", epochs)
                if rep >= 0:
                    runs[mode].append(r)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    med = {
        m: {k: statistics.median(r[k] for r in rs) for k in ("wall_s", "cpu_s", "samples_per_s")}
        for m, rs in runs.items()
    }
    ref, dyn = runs["reference"][0], runs["dynamic"][0]
    ideal = MAX_LENGTH / dyn["mean_len"]
    gain = (
        med["reference"]["wall_s"] / med["dynamic"]["wall_s"]
    )  # same rows: time ratio = throughput ratio
    gain_cpu = med["reference"]["cpu_s"] / med["dynamic"]["cpu_s"]
    print(
        f"data: {ref['rows']} rows from mathlib-sample, mean tokenized length {dyn['mean_len']:.1f} "
        f"(max_length {MAX_LENGTH}), {dyn['steps']} steps of 8; {repeats} interleaved runs per mode "
        f"after a warm-up pair; load {' '.join(load_before)} -> {' '.join(load_after)}"
    )
    for mode, rs in runs.items():
        walls = [r["wall_s"] for r in rs]
        cpus = [r["cpu_s"] for r in rs]
        print(
            f"{mode:>9}: {med[mode]['samples_per_s']:8.2f} samples/s (median)  wall min/median "
            f"{min(walls):6.2f}/{statistics.median(walls):6.2f} s  CPU min/median {min(cpus):6.2f}/"
            f"{statistics.median(cpus):6.2f} s  peak RSS {rs[0]['peak_rss_mib']:7.1f} MiB  loss {rs[0]['train_loss']:.3f}"
        )
    print(
        f"throughput dynamic/reference: {gain:.2f}x by wall time, {gain_cpu:.2f}x by CPU time; "
        f"ideal max_length/mean_len: {ideal:.2f}x; reached {100 * gain_cpu / ideal:.0f}% of ideal "
        "by CPU time (target >= 90%)"
    )
    print(f"peak RSS ratio dynamic/reference: {dyn['peak_rss_mib'] / ref['peak_rss_mib']:.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
    else:
        main()
