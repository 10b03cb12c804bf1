"""Helpers of ``tools/bench/gpu.sh`` (see there): build the random-init models, run one
``leantrain`` command in-process while measuring it, and print the table.

* ``build-lm OUT --preset qwen0.5b|smoke`` — a Llama-architecture causal LM with the shape of
  Qwen2.5-0.5B (hidden 896, 24 layers, 14 heads / 2 KV heads, MLP 4864, 151,936-token vocabulary,
  tied embeddings: ~494M parameters), random init, with leantrain's ``tiny`` character-level
  tokenizer (built locally, no download; the rows are tokenized per character, so the same rows
  are ~3x more tokens than with a BPE tokenizer). Llama rather than Qwen2 for the reason
  ``leantrain.llm.tiny_model`` gives (transformers would swap the tokenizer of a ``qwen2`` dir).
* ``build-byt5 OUT --preset byt5-small|smoke`` — a ``T5EncoderModel`` with ByT5-small's encoder
  shape (d_model 1472, 12 layers, 6 heads, d_ff 3584, gated-gelu; ~218M parameters), random
  init, and ``ByT5Tokenizer()`` (no files needed).
* ``run --label L --stats FILE -- <leantrain argv>`` — runs ``leantrain.core.cli.main(argv)`` in
  this process (our CLI, config parsing and trainers, unchanged) and appends one JSON line to
  ``FILE``: wall time, optimizer steps and their times (a global optimizer step hook), tokens
  fed to the model's embedding under autograd (a forward pre-hook on ``nn.Embedding`` modules:
  training forwards only, not generation or evaluation), peak CUDA memory
  (``torch.cuda.max_memory_allocated``), and the command's JSON output.
* ``report FILE`` — the table: tokens/s and samples/s over the steps after the first (warm-up),
  MFU, peak memory, and the held-out metrics.

MFU = model FLOPs per second / the GPU's dense bf16 peak. Model FLOPs per trained token, per
PaLM (Chowdhery et al. 2022, app. B): forward ``2·N + 4·L·d·s`` (N parameters, L layers, d
width, s tokens per row: the attention scores), training = 3x forward for full training; 2x
forward for LoRA (no weight gradients for the frozen base). Activation recomputation is not
counted (MFU, not HFU). The peak is looked up from the device name (H100 SXM / H200: 989.4
TFLOP/s; H100 PCIe: 756; A100: 312; L40S: 362; L4: 121); override with ``GPU_PEAK_TFLOPS``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

PEAK_BF16_TFLOPS = (  # dense bf16 tensor-core peak, by a substring of the device name
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.0),
    ("H100", 989.4),
    ("H200", 989.4),
    ("GH200", 989.4),
    ("A100", 312.0),
    ("L40S", 362.0),
    ("L4", 121.0),
)

LM_PRESETS = {
    # Qwen2.5-0.5B's shape (its config.json), as a Llama
    "qwen0.5b": dict(hidden=896, layers=24, heads=14, kv=2, mlp=4864, vocab=151936),
    "smoke": dict(hidden=64, layers=2, heads=4, kv=2, mlp=128, vocab=2048),
}
BYT5_PRESETS = {
    # google/byt5-small's encoder (its config.json)
    "byt5-small": dict(d_model=1472, layers=12, heads=6, d_kv=64, d_ff=3584),
    "smoke": dict(d_model=64, layers=2, heads=4, d_kv=16, d_ff=128),
}


def build_lm(out: Path, preset: str) -> None:
    import torch
    from leantrain.llm.tiny_model import build_tiny_tokenizer
    from transformers import LlamaConfig, LlamaForCausalLM

    p = LM_PRESETS[preset]
    tok = build_tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=max(p["vocab"], len(tok)),
        hidden_size=p["hidden"],
        intermediate_size=p["mlp"],
        num_hidden_layers=p["layers"],
        num_attention_heads=p["heads"],
        num_key_value_heads=p["kv"],
        max_position_embeddings=4096,
        rope_theta=1e6,
        rms_norm_eps=1e-6,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    model.save_pretrained(out)
    tok.save_pretrained(out)
    n = sum(t.numel() for t in model.parameters())
    print(json.dumps({"model": str(out), "preset": preset, "parameters": n}))


def build_byt5(out: Path, preset: str) -> None:
    import torch
    from transformers import ByT5Tokenizer, T5Config, T5EncoderModel

    p = BYT5_PRESETS[preset]
    tok = ByT5Tokenizer()
    config = T5Config(
        vocab_size=384,  # ByT5's embedding rows (256 bytes + 3 specials, padded)
        d_model=p["d_model"],
        d_kv=p["d_kv"],
        num_heads=p["heads"],
        d_ff=p["d_ff"],
        num_layers=p["layers"],
        feed_forward_proj="gated-gelu",
        dropout_rate=0.1,
        is_encoder_decoder=False,
    )
    torch.manual_seed(0)
    model = T5EncoderModel(config)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    n = sum(t.numel() for t in model.parameters())
    print(json.dumps({"model": str(out), "preset": preset, "parameters": n}))


def gpu_peak_tflops() -> tuple[float | None, str]:
    """The dense bf16 peak assumed for MFU, and where it came from."""
    import torch

    if os.environ.get("GPU_PEAK_TFLOPS"):
        return float(os.environ["GPU_PEAK_TFLOPS"]), "GPU_PEAK_TFLOPS"
    if not torch.cuda.is_available():
        return None, "no GPU"
    name = torch.cuda.get_device_name(0)
    for key, tflops in PEAK_BF16_TFLOPS:
        if key in name:
            return tflops, f"{name}: {key} dense bf16"
    return None, f"{name}: unknown peak (set GPU_PEAK_TFLOPS)"


def _shape(model_dir: Path) -> dict[str, int]:
    """Parameters, layers, width of the model (or the adapter's base) in ``model_dir``."""
    from safetensors import safe_open

    cfg = json.loads((model_dir / "config.json").read_text())
    n = 0
    for f in model_dir.glob("*.safetensors"):
        with safe_open(str(f), framework="pt") as st:
            n += sum(_numel(st.get_slice(k).get_shape()) for k in st.keys())  # noqa: SIM118
    layers = cfg.get("num_hidden_layers") or cfg.get("num_layers") or 0
    width = cfg.get("hidden_size") or cfg.get("d_model") or 0
    return {"parameters": n, "layers": int(layers), "width": int(width)}


def _numel(shape: Any) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def run(label: str, stats: Path, argv: list[str], model_dir: str | None, lora: bool) -> int:
    import contextlib
    import io

    import torch
    from leantrain.core.cli import main

    cuda = torch.cuda.is_available()
    step_times: list[float] = []
    step_tokens: list[int] = []
    step_rows: list[int] = []
    seqlens: list[int] = []
    pending = {"tokens": 0, "rows": 0}

    def on_embed(module: Any, args: Any) -> None:
        if torch.is_grad_enabled() and module.training and args and torch.is_tensor(args[0]):
            ids = args[0]
            pending["tokens"] += ids.numel()
            pending["rows"] += ids.shape[0] if ids.dim() > 1 else 1
            seqlens.append(ids.shape[-1])

    def on_forward_pre(module: Any, args: Any) -> None:
        if isinstance(module, torch.nn.Embedding):
            on_embed(module, args)

    def on_step(optimizer: Any, args: Any, kwargs: Any) -> None:
        if cuda:
            torch.cuda.synchronize()
        step_times.append(time.perf_counter())
        step_tokens.append(pending["tokens"])
        step_rows.append(pending["rows"])
        pending["tokens"] = pending["rows"] = 0

    from torch.optim.optimizer import register_optimizer_step_post_hook

    h1 = torch.nn.modules.module.register_module_forward_pre_hook(on_forward_pre)
    h2 = register_optimizer_step_post_hook(on_step)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    out = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    wall = time.perf_counter() - t0
    h1.remove()
    h2.remove()
    text = out.getvalue()
    sys.stdout.write(text)
    try:
        result = json.loads(text[text.index("{") :]) if "{" in text else None
    except ValueError:
        result = None
    # steady state: from the end of the first optimizer step to the end of the last
    steady = {}
    if len(step_times) >= 2:
        dt = step_times[-1] - step_times[0]
        tokens, rows = sum(step_tokens[1:]), sum(step_rows[1:])
        steady = {
            "steady_steps": len(step_times) - 1,
            "steady_s": dt,
            "tokens_per_s": tokens / dt,
            "rows_per_s": rows / dt,
            "s_per_step": dt / (len(step_times) - 1),
        }
    record: dict[str, Any] = {
        "label": label,
        "exit": code,
        "wall_s": wall,
        "steps": len(step_times),
        "tokens": sum(step_tokens),
        "mean_seq_len": sum(seqlens) / len(seqlens) if seqlens else None,
        "peak_mem_gb": torch.cuda.max_memory_allocated() / 1e9 if cuda else None,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "lora": lora,
        **steady,
        "result": result,
    }
    if model_dir and steady and record["mean_seq_len"]:
        shape = _shape(Path(model_dir))
        fwd = (
            2 * shape["parameters"] + 4 * shape["layers"] * shape["width"] * record["mean_seq_len"]
        )
        per_token = (2 if lora else 3) * fwd
        record["model_flops_per_token"] = per_token
        peak, source = gpu_peak_tflops()
        record["peak_tflops"], record["peak_source"] = peak, source
        if peak:
            record["mfu"] = per_token * steady["tokens_per_s"] / (peak * 1e12)
    with stats.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record, default=str) + "\n")
    print(
        f"[gpu_bench] {label}: exit {code}, {record['steps']} steps in {wall:.1f} s"
        + (f", {steady['tokens_per_s']:.0f} tokens/s" if steady else "")
        + (f", MFU {record['mfu']:.1%}" if record.get("mfu") is not None else "")
        + (f", peak {record['peak_mem_gb']:.2f} GB" if cuda else ""),
        file=sys.stderr,
    )
    return code


def _fmt(v: Any, spec: str) -> str:
    return "—" if v is None else format(v, spec)


def _metrics(result: Any) -> dict[str, float]:
    """The numeric metrics of a command's JSON output (``llm eval``'s dict, or a training run's
    ``final``/``evals``), flattened one level."""
    if not isinstance(result, dict):
        return {}
    found: dict[str, float] = {}
    for key in ("final", "metrics"):
        if isinstance(result.get(key), dict):
            found.update({k: v for k, v in result[key].items() if isinstance(v, (int, float))})
    found.update({k: v for k, v in result.items() if isinstance(v, (int, float))})
    return found


def report(stats: Path) -> None:
    rows = [json.loads(x) for x in stats.read_text().splitlines() if x.strip()]
    by = {r["label"]: r for r in rows}
    device = next((r["device"] for r in rows), "?")
    peak = next((r.get("peak_source") for r in rows if r.get("peak_source")), None)
    print(f"\ndevice: {device}; MFU peak assumed: {peak or 'none (no GPU or unknown GPU)'}")
    print("\n| stage | steps | s/step | tokens/s | rows/s | MFU | peak mem GB | wall s | exit |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if r["label"].startswith("eval"):
            continue
        print(
            f"| {r['label']} | {r['steps']} | {_fmt(r.get('s_per_step'), '.3f')} | "
            f"{_fmt(r.get('tokens_per_s'), ',.0f')} | {_fmt(r.get('rows_per_s'), '.2f')} | "
            f"{_fmt(r.get('mfu'), '.1%')} | {_fmt(r.get('peak_mem_gb'), '.2f')} | "
            f"{r['wall_s']:.0f} | {r['exit']} |"
        )
    print("\nheld-out (random-init weights: this checks the pipeline, not model quality)")
    print("| what | before | after |")
    print("|---|---:|---:|")
    pairs = [
        (
            "SFT full: LB4 test eval_loss (nats/tactic token)",
            "eval-base",
            "eval-sft-full",
            "eval_loss",
        ),
        ("SFT LoRA: LB4 test eval_loss", "eval-base", "eval-sft-lora", "eval_loss"),
        ("GRPO (from SFT full): LB4 test eval_loss", "eval-sft-full", "eval-grpo", "eval_loss"),
        ("GRPO: LB4 test top-4 accuracy", "eval-sft-full", "eval-grpo", "top4_accuracy"),
    ]
    for name, a, b, key in pairs:
        va, vb = (
            _metrics(by.get(a, {}).get("result")).get(key),
            _metrics(by.get(b, {}).get("result")).get(key),
        )
        if va is not None or vb is not None:
            print(f"| {name} | {_fmt(va, '.4f')} | {_fmt(vb, '.4f')} |")
    grpo = _metrics(by.get("grpo", {}).get("result"))
    if "first_reward" in grpo:
        print(
            f"| GRPO: training reward, first / last step | {grpo['first_reward']:.4f} | "
            f"{grpo.get('last_reward', float('nan')):.4f} |"
        )
    retr = _metrics(by.get("retrieval", {}).get("result"))
    keys = ["test_R@1", "test_R@10", "test_MRR", "test_bm25_R@1", "test_bm25_R@10", "test_bm25_MRR"]
    if any(k in retr for k in keys):
        print("\nretriever after training, LB4 random test (BM25 for reference)")
        print("| " + " | ".join(keys) + " |")
        print("|" + "---:|" * len(keys))
        print("| " + " | ".join(_fmt(retr.get(k), ".4f") for k in keys) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, presets in (("build-lm", LM_PRESETS), ("build-byt5", BYT5_PRESETS)):
        p = sub.add_parser(name)
        p.add_argument("out", type=Path)
        p.add_argument("--preset", choices=sorted(presets), required=True)
    p = sub.add_parser("run")
    p.add_argument("--label", required=True)
    p.add_argument("--stats", type=Path, required=True)
    p.add_argument("--model-dir", default=None, help="for MFU: the model's dir (its shape)")
    p.add_argument("--lora", action="store_true", help="for MFU: 2x forward, not 3x")
    p.add_argument("argv", nargs=argparse.REMAINDER)
    p = sub.add_parser("report")
    p.add_argument("stats", type=Path)
    a = ap.parse_args()
    if a.cmd == "build-lm":
        build_lm(a.out, a.preset)
    elif a.cmd == "build-byt5":
        build_byt5(a.out, a.preset)
    elif a.cmd == "run":
        argv = a.argv[1:] if a.argv[:1] == ["--"] else a.argv
        sys.exit(run(a.label, a.stats, argv, a.model_dir, a.lora))
    else:
        report(a.stats)


if __name__ == "__main__":
    main()
