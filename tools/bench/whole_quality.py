"""Whole-proof SFT on the LB4 head: held-out proof loss and replay pass@k, untrained vs trained.

LeanDojo Benchmark 4 ships no statement text, so its theorems are stated by their name and traced
initial proof state (``leantrain.tactics.whole_proof``, form ``state``) and their whole proofs
are the traced tactics joined as a ``by`` block (origin ``tactics``). On the LB4 head export
(``quality.py``'s ``lb4/``, made with ``leantrain export import`` / ``export merge``):

1. ``leantrain llm eval --mode whole`` of the untrained SmolLM2-135M-Instruct on the random
   test split: proof loss (teacher-forced NLL per proof token, prompt masked);
2. ``leantrain sft --mode whole`` on the random train split (``--steps`` of ``--batch``);
3. the same ``llm eval`` of the trained model;
4. ``leantrain prove --mode whole --backend replay --attempts k`` of both models on the first
   ``--theorems`` test theorems that have a traced proof: replay pass@1 … pass@k, a lower bound
   (only the traced proof, whitespace normalised, counts).

Every step is the CLI as a subprocess, so the figure measures the code of the tree.

    uv run python tools/bench/whole_quality.py --smollm2 DIR [--steps 40] [--batch 4]
        [--theorems 20] [--attempts 4] [--work /tmp/leantrain-whole] [--json results.json]
    uv run python tools/bench/whole_quality.py --render results.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality import fetch_smollm2, leantrain, load_state, log, machine, make_exports

LR, SEED = 5e-5, 0
EVAL_TOKENS = 1
"""``llm eval``'s greedy generation is cut to one token: its exact-match figure is not used (the
sampled proofs of step 4 are), and greedy proofs of 64 test theorems took CPU-minutes."""


def eval_loss(model: Path, data: Path, n_eval: int | None) -> dict:
    """``llm eval --mode whole`` on the random test split: proof loss and greedy exact proof."""
    args = ["llm", "eval", "--model", str(model), "--mode", "whole", "--data", str(data)]
    args += ["--split", "test", "--eval-k", "1", "--eval-max-new-tokens", str(EVAL_TOKENS)]
    args += ["--max-eval-samples", str(n_eval if n_eval is not None else 10**6)]
    t = time.perf_counter()
    out = leantrain(*args)
    metrics = json.loads(out[out.index("{") :])
    return {**metrics, "seconds": round(time.perf_counter() - t, 1)}


def test_theorems(data: Path, n: int) -> list[str]:
    """The first ``n`` random-test theorems with a traced proof (what replay can accept)."""
    records = json.loads((data / "random" / "test.json").read_text(encoding="utf-8"))
    return [r["full_name"] for r in records if r.get("traced_tactics")][:n]


ENGINE = ["--engine", "hf"]
"""``prove``'s engine flags (``--engine ct2``: CTranslate2 at float32, the candidates of ``hf``)."""


def prove(model: Path, data: Path, names: list[str], attempts: int, tokens: int, out: Path) -> dict:
    """``prove --mode whole --backend replay``: its summary (pass@k, tokens, cut-offs)."""
    args = ["prove", "--mode", "whole", "--generator", str(model), "--data", str(data), *ENGINE]
    args += ["--split", "test", "--backend", "replay", "--attempts", str(attempts)]
    args += ["--max-proof-tokens", str(tokens), "--output-dir", str(out), "--seed", str(SEED)]
    for name in names:
        args += ["--theorems", name]
    t = time.perf_counter()
    leantrain(*args)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    keep = ("proved", "attempted", "tokens", "proofs_cut_off", "generator_time_s")
    row = {k: summary[k] for k in keep}
    row.update({k: v for k, v in summary.items() if k.startswith("replay_pass@")})
    return {**row, "seconds": round(time.perf_counter() - t, 1)}


def train(base: Path, data: Path, out: Path, steps: int, batch: int, max_length: int) -> dict:
    """``sft --mode whole`` on the random train split; the checkpoint and the loss curve."""
    from leantrain.core.lifelong import final_checkpoint

    t = time.perf_counter()
    leantrain(
        "sft", "--mode", "whole", "--model", str(base), "--data", str(data),
        "--output_dir", str(out), "--max_steps", str(steps),
        "--per_device_train_batch_size", str(batch), "--learning_rate", str(LR),
        "--max_length", str(max_length), "--seed", str(SEED),
        "--evaluate_each_repo", "false", "--report_to", "none",
    )  # fmt: skip
    logs = [json.loads(x) for x in next(out.glob("sft/logs/*.jsonl")).read_text().splitlines()]
    losses = [e["loss"] for e in logs if "loss" in e]
    return {
        "model": str(final_checkpoint(out)),
        "losses": losses,
        "seconds": round(time.perf_counter() - t, 1),
    }


def render(res: dict) -> str:
    """The QUALITY.md table of a result."""
    k = res["settings"]["attempts"]
    n = res["settings"]["theorems"]
    lines = [
        f"| model | test proof loss ({res['untrained']['eval']['num_examples']} proofs) "
        f"| replay pass@1 ({n} theorems) | replay pass@{k} | proofs cut off |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in ("untrained", "trained"):
        r = res[name]
        e, p = r["eval"], r["prove"]
        label = (
            "SmolLM2-135M, untrained"
            if name == "untrained"
            else (f"SmolLM2-135M, whole-proof SFT, {res['settings']['steps']} steps")
        )
        lines.append(
            f"| {label} | {e['eval_loss']:.3f} "
            f"| {p['replay_pass@1']:.3f} | {p[f'replay_pass@{k}']:.3f} "
            f"| {p['proofs_cut_off']} / {n * k} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smollm2", default=None, help="converted SmolLM2 directory (else fetched)")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--max-length", type=int, default=1024, help="SFT's max_length (tokens)")
    ap.add_argument("--theorems", type=int, default=20)
    ap.add_argument("--attempts", type=int, default=4)
    ap.add_argument("--proof-tokens", type=int, default=128)
    ap.add_argument("--eval", type=int, default=None, help="test proofs scored (default: all)")
    ap.add_argument("--work", default="/tmp/leantrain-whole")
    ap.add_argument("--json", default=None)
    ap.add_argument("--render", default=None, metavar="JSON")
    ap.add_argument("--engine", choices=("hf", "ct2"), default="hf", help="prove's engine")
    args = ap.parse_args()
    if args.engine == "ct2":
        ENGINE[:] = ["--engine", "ct2", "--ct2-compute-type", "float32"]
    if args.render:
        print(render(json.loads(Path(args.render).read_text(encoding="utf-8"))))
        return
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    data = make_exports(work)["lb4"]
    base = Path(args.smollm2) if args.smollm2 else fetch_smollm2(work)
    names = test_theorems(data, args.theorems)
    res: dict = {
        "machine": machine(),
        "load_start": load_state(),
        "started": time.strftime("%F %T %Z"),
        "settings": {
            "steps": args.steps, "batch": args.batch, "lr": LR, "max_length": args.max_length,
            "seed": SEED, "theorems": len(names), "attempts": args.attempts,
            "proof_tokens": args.proof_tokens, "eval_tokens": EVAL_TOKENS, "names": names,
            "engine": args.engine,
        },
    }  # fmt: skip

    def save() -> None:
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")

    k, tokens = args.attempts, args.proof_tokens
    res["untrained"] = {"eval": eval_loss(base, data, args.eval)}
    save()
    res["untrained"]["prove"] = prove(base, data, names, k, tokens, work / "prove-untrained")
    save()
    res["training"] = train(base, data, work / "sft-whole", args.steps, args.batch, args.max_length)
    save()
    model = Path(res["training"]["model"])
    res["trained"] = {"eval": eval_loss(model, data, args.eval)}
    res["trained"]["prove"] = prove(model, data, names, k, tokens, work / "prove-trained")
    res["load_end"] = load_state()
    res["finished"] = time.strftime("%F %T %Z")
    save()
    log("done")
    print(render(res))


if __name__ == "__main__":
    main()
