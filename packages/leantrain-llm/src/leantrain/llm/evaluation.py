"""Evaluation of a tactic generator: completion-only eval loss, and tactic accuracy (greedy
top-1 and beam top-k exact match against the reference, after whitespace normalisation).

Prompts are rendered with the tokenizer's chat template exactly as in training
(``add_generation_prompt=True``), so the model is asked the way it was taught.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from leantrain.core.lean_text import normalize_tactic

Messages = list[dict[str, str]]


def render_prompt(tokenizer: Any, messages: Messages) -> str:
    """The prompt text the model sees: chat template with the assistant turn opened."""
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def _device(model: Any) -> Any:
    return next(model.parameters()).device


def _generate(
    model: Any, tokenizer: Any, texts: list[str], k: int, max_new_tokens: int
) -> list[list[str]]:
    import torch

    enc = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(
        _device(model)
    )
    gen_kwargs: dict[str, Any] = {
        "max_new_tokens": max_new_tokens,
        "do_sample": False,
        "pad_token_id": tokenizer.pad_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }
    if k > 1:
        gen_kwargs.update(num_beams=k, num_return_sequences=k, early_stopping=True)
    with torch.no_grad():
        seqs = model.generate(**enc, **gen_kwargs)
    decoded = [
        t.strip()
        for t in tokenizer.batch_decode(
            seqs[:, enc["input_ids"].shape[1] :], skip_special_tokens=True
        )
    ]
    return [decoded[i * k : (i + 1) * k] for i in range(len(texts))]


def generate_tactics(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Messages],
    *,
    k: int = 1,
    max_new_tokens: int = 48,
    batch_size: int = 8,
) -> list[list[str]]:
    """Up to ``k`` distinct candidate tactics per prompt: the greedy one first, then the beams of a
    ``k``-beam search (deterministic). Greedy leads because beam scores favour short sequences
    that stop early, while greedy decoding is what top-1 accuracy measures."""
    model_was_training = model.training
    model.eval()
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"  # decoder-only generation continues from the right end
    out: list[list[str]] = []
    try:
        for start in range(0, len(prompts), batch_size):
            texts = [render_prompt(tokenizer, p) for p in prompts[start : start + batch_size]]
            greedy = _generate(model, tokenizer, texts, 1, max_new_tokens)
            beams = (
                _generate(model, tokenizer, texts, k, max_new_tokens)
                if k > 1
                else [[] for _ in texts]
            )
            for g, b in zip(greedy, beams):
                out.append(list(dict.fromkeys([*g, *(c for c in b if c)]))[:k])
    finally:
        tokenizer.padding_side = side
        model.train(model_was_training)
    return out


def tactic_accuracy(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[Messages, str]],
    *,
    k: int = 4,
    max_new_tokens: int = 48,
) -> dict[str, float]:
    """Exact-match accuracy of generated tactics against references (whitespace-normalised).

    Returns ``top1_accuracy`` (greedy), ``top{k}_accuracy`` (greedy or any of ``k`` beams) and
    ``num_examples``.
    """
    if not pairs:
        return {"top1_accuracy": 0.0, f"top{k}_accuracy": 0.0, "num_examples": 0}
    refs = [normalize_tactic(r) for _, r in pairs]
    cands = generate_tactics(
        model, tokenizer, [p for p, _ in pairs], k=k, max_new_tokens=max_new_tokens
    )
    top1 = sum(normalize_tactic(c[0]) == r for c, r in zip(cands, refs))
    topk = sum(any(normalize_tactic(x) == r for x in c) for c, r in zip(cands, refs))
    metrics: dict[str, float] = {"top1_accuracy": top1 / len(refs), "num_examples": len(refs)}
    if k > 1:
        metrics[f"top{k}_accuracy"] = topk / len(refs)
    return metrics


def completion_loss(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[Messages, str]],
    *,
    batch_size: int = 8,
    max_length: int = 2048,
) -> float:
    """Mean cross-entropy per completion token (the tactic and its end-of-turn), prompt masked."""
    import torch

    if not pairs:
        return math.nan
    model_was_training = model.training
    model.eval()
    total, count = 0.0, 0
    try:
        for start in range(0, len(pairs), batch_size):
            ids_list, labels_list = [], []
            for prompt, ref in pairs[start : start + batch_size]:
                p_ids = tokenizer(render_prompt(tokenizer, prompt), add_special_tokens=False)[
                    "input_ids"
                ]
                full = tokenizer.apply_chat_template(
                    [*prompt, {"role": "assistant", "content": ref}], tokenize=False
                )
                f_ids = tokenizer(full, add_special_tokens=False)["input_ids"][:max_length]
                labels = [-100] * min(len(p_ids), len(f_ids)) + f_ids[len(p_ids) :]
                ids_list.append(f_ids)
                labels_list.append(labels)
            width = max(len(x) for x in ids_list)
            pad = tokenizer.pad_token_id
            ids = torch.tensor([x + [pad] * (width - len(x)) for x in ids_list])
            labels = torch.tensor([x + [-100] * (width - len(x)) for x in labels_list])
            mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids_list])
            dev = _device(model)
            with torch.no_grad():
                logits = model(input_ids=ids.to(dev), attention_mask=mask.to(dev)).logits.float()
            shift_logits = logits[:, :-1].reshape(-1, logits.shape[-1])
            shift_labels = labels[:, 1:].reshape(-1).to(dev)
            loss = torch.nn.functional.cross_entropy(
                shift_logits, shift_labels, ignore_index=-100, reduction="sum"
            )
            total += loss.item()
            count += int((shift_labels != -100).sum())
    finally:
        model.train(model_was_training)
    return total / max(count, 1)


def evaluate_pairs(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[Messages, str]],
    *,
    k: int = 4,
    max_new_tokens: int = 48,
) -> dict[str, float]:
    """``eval_loss`` plus :func:`tactic_accuracy` on (prompt, reference) pairs."""
    metrics: dict[str, float] = {"eval_loss": completion_loss(model, tokenizer, pairs)}
    metrics.update(tactic_accuracy(model, tokenizer, pairs, k=k, max_new_tokens=max_new_tokens))
    return metrics
