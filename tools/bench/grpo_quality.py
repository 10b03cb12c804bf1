"""Does GRPO improve the tactic generator? Held-out rewards before and after, on a real LM.

Starts from the SmolLM2-135M model that ``sft_quality.py`` trained with ``leantrain sft``
(``<work>/sft-leantrain-s<seed>``; run that first) and trains it with ``leantrain grpo`` on the
LB4 head random train split with the rewards ``format``, ``no_sorry`` and ``reference_match``.
Before and after, on the first ``--eval`` prompts of the random *test* split: ``k`` completions
sampled at temperature 1 per prompt, the mean of each reward over them, their sum (what GRPO
maximises, all weights 1), and sampled top-k exact match; plus the training reward curve (TRL's
logged ``reward`` per step). Target: the held-out mean reward rises.

    uv run python tools/bench/grpo_quality.py [--steps 20] [--seed 0] [--eval 60] [--json f]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality import leantrain, load_state, log, machine
from sft_quality import TOP_K, sampled_candidates

REWARDS = ("format", "no_sorry", "reference_match")
BATCH, GENERATIONS, LR, MAX_COMPLETION = 8, 4, 5e-6, 48


def _held_out(data: Path, model: str, n: int) -> list[dict]:
    from leantrain.llm import GRPOConfig
    from leantrain.llm.training_data import load_rl_dataset

    cfg = GRPOConfig(model_name=model, data_path=str(data), reward_funcs=list(REWARDS))
    return list(load_rl_dataset(data, "test", cfg).select(range(n)))


def score(model_dir: Path, rows: list[dict], seed: int) -> dict:
    """Mean held-out reward per reward function over ``TOP_K`` samples per prompt."""
    from leantrain.core.lean_text import normalize_tactic
    from leantrain.llm.model_loading import load_model_and_tokenizer
    from leantrain.llm.rewards import build_reward_funcs

    t = time.perf_counter()
    model, tok = load_model_and_tokenizer(model_dir)
    samples = sampled_candidates(model, tok, [r["prompt"] for r in rows], TOP_K, seed)
    flat = [c for cs in samples for c in cs]
    columns = {k: [r[k] for r in rows for _ in range(TOP_K)] for k in rows[0] if k != "prompt"}
    prompts = [r["prompt"] for r in rows for _ in range(TOP_K)]
    funcs, _ = build_reward_funcs(list(REWARDS))
    out: dict = {}
    for name, fn in zip(REWARDS, funcs):
        values = [v for v in fn(prompts=prompts, completions=flat, **columns) if v is not None]
        out[name] = sum(values) / len(values)
    out["reward_sum"] = sum(out[n] for n in REWARDS)
    refs = [normalize_tactic(r["reference"]) for r in rows]
    hits = sum(any(normalize_tactic(c) == r for c in cs) for cs, r in zip(samples, refs))
    out[f"sampled_top{TOP_K}"] = hits / len(rows)
    out["count"] = len(rows)
    out["examples"] = [[r["reference"], cs[0]] for r, cs in list(zip(rows, samples))[:4]]
    out["score_s"] = round(time.perf_counter() - t, 1)
    return out


def run(work: Path, steps: int, seed: int, n_eval: int) -> dict:
    from leantrain.core.lifelong import final_checkpoint

    data = work / "lb4"
    sft = final_checkpoint(work / f"sft-leantrain-s{seed}")
    if sft is None:
        raise SystemExit(f"no SFT model in {work}/sft-leantrain-s{seed}: run sft_quality.py first")
    rows = _held_out(data, str(sft), n_eval)
    log(f"grpo: SFT model on {len(rows)} held-out prompts")
    before = score(sft, rows, seed)
    out = work / f"grpo-s{seed}"
    subprocess.run(["rm", "-rf", str(out)], check=True)
    t = time.perf_counter()
    args = ["grpo", "--model", str(sft), "--data", str(data), "--output_dir", str(out)]
    for r in REWARDS:
        args += ["--reward", r]
    leantrain(
        *args, "--max_steps", str(steps), "--per_device_train_batch_size", str(BATCH),
        "--num_generations", str(GENERATIONS), "--max_completion_length", str(MAX_COMPLETION),
        "--learning_rate", str(LR), "--seed", str(seed), "--evaluate_each_repo", "false",
        "--report_to", "none",
    )  # fmt: skip
    wall = round(time.perf_counter() - t, 1)
    logs = [
        json.loads(x) for f in out.glob("grpo/logs/*.jsonl") for x in f.read_text().splitlines()
    ]
    curve = [
        {"step": e["step"], "reward": round(e["reward"], 4)}
        | {n: round(e[f"rewards/{n}/mean"], 4) for n in REWARDS if f"rewards/{n}/mean" in e}
        for e in logs
        if "reward" in e
    ]
    after = score(final_checkpoint(out), rows, seed)
    return {
        "config": {"steps": steps, "batch": BATCH, "num_generations": GENERATIONS, "lr": LR,
                   "max_completion_length": MAX_COMPLETION, "eval": len(rows), "top_k": TOP_K,
                   "seed": seed, "rewards": list(REWARDS)},
        "before": before, "after": after, "curve": curve, "train_wall_s": wall,
    }  # fmt: skip


def render(g: dict) -> tuple[list[str], dict]:
    c, b, a = g["config"], g["before"], g["after"]
    keys = [*REWARDS, "reward_sum", f"sampled_top{c['top_k']}"]
    lines = [
        "### GRPO from the SFT model (LB4 head, random test)",
        "",
        f"{c['steps']} steps, batch {c['batch']} ({c['num_generations']} completions a prompt), "
        f"lr {c['lr']}, rewards {', '.join(c['rewards'])} (weights 1), seed {c['seed']}; "
        f"{c['eval']} held-out prompts, {c['top_k']} samples each at temperature 1. "
        f"Training took {g['train_wall_s']} s.",
        "",
        "| model | " + " | ".join(keys) + " |",
        "|---|" + "---:|" * len(keys),
        "| SFT (before) | " + " | ".join(f"{b[k]:.4f}" for k in keys) + " |",
        "| + GRPO (after) | " + " | ".join(f"{a[k]:.4f}" for k in keys) + " |",
        "| Δ | " + " | ".join(f"{a[k] - b[k]:+.4f}" for k in keys) + " |",
        "",
        "Training reward per step (TRL's `reward`, the weighted sum over the batch): "
        + ", ".join(f"{e['reward']:.3f}" for e in g["curve"]),
        "",
    ]
    zero = [n for n in REWARDS if b[n] == 0 and a[n] == 0]
    if zero:
        lines += [f"No signal on this model from: {', '.join(zero)} (0 before and after).", ""]
    rises = a["reward_sum"] > b["reward_sum"]
    return lines, {"GRPO raises the held-out mean reward": "met" if rises else "missed"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval", type=int, default=60)
    ap.add_argument("--work", default="/tmp/leantrain-quality")
    ap.add_argument("--json", default=None)
    ap.add_argument("--render", default=None, metavar="JSON")
    args = ap.parse_args()
    if args.render:
        res = json.loads(Path(args.render).read_text(encoding="utf-8"))
    else:
        import torch

        torch.set_num_threads(min(2, os.cpu_count() or 1))
        res = {"machine": machine(), "load_start": load_state()}
        res["grpo"] = run(Path(args.work), args.steps, args.seed, args.eval)
        res["load_end"] = load_state()
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    lines, targets = render(res["grpo"])
    print("\n".join(lines))
    for key, v in targets.items():
        print(f"  [{v}] {key}")


if __name__ == "__main__":
    main()
