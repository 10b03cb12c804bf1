"""Fast batched encoding of texts for indexing and queries.

What makes encoding a corpus fast on a CPU (and costs nothing on a GPU):

* **length-sorted batches** under a token budget: rows of similar length share a batch (little
  padding, and attention is quadratic in the padded length), and short rows go in larger
  batches, so the per-call overhead is paid fewer times; rows cut at the maximum length (most
  proof states at 256 bytes) are batched apart, without padding, so without an attention mask;
* for T5-family encoders, the relative-position bias and padding mask merged once per forward
  instead of once per layer (:mod:`leantrain.retrieval.attention`);
* **tokenizing once**, up front, without per-batch tokenizer calls; for a ByT5 tokenizer the ids
  are the UTF-8 bytes + 3 (what ``ByT5Tokenizer`` computes, one Python call per character),
  built with numpy — a text that holds a special token's string goes through the tokenizer;
* ``torch.inference_mode`` (no autograd bookkeeping) and the encoder in eval mode;
* **bf16 autocast** on a CUDA GPU with bf16 (``"auto"``, the default), with the pooled
  embeddings returned in float32. On a CPU ``"auto"`` stays fp32, so that an index, an
  evaluation and the validation during training (fp32) rank with the same embeddings; on a
  CPU with AVX512-BF16 / AMX, ``"bf16"`` is opt-in (about 8 % less CPU time at d_model 64).
  ``precision`` forces it: ``"auto"``, ``"bf16"`` or ``"fp32"``; the environment variable
  ``LEANTRAIN_ENCODE_PRECISION`` sets the default.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

PRECISIONS = ("auto", "bf16", "fp32")
_BYT5_OFFSET = 3  # ByT5: ids 0-2 are <pad>, </s>, <unk>; byte b is id b + 3


@functools.cache
def use_bf16(device: torch.device, precision: str | None = None) -> bool:
    """Whether to autocast to bf16 on ``device`` for ``precision`` (see the module doc)."""
    precision = precision or os.environ.get("LEANTRAIN_ENCODE_PRECISION", "auto")
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    if precision != "auto":
        return precision == "bf16"
    return device.type == "cuda" and bool(torch.cuda.is_bf16_supported())


def _byt5_ids(tokenizer: Any) -> Callable[[str, int], np.ndarray] | None:
    """A numpy ByT5 tokenizer equal to ``tokenizer`` (ids + ``</s>``), or ``None`` if it is
    not a plain ``ByT5Tokenizer``."""
    if type(tokenizer).__name__ != "ByT5Tokenizer" or getattr(tokenizer, "eos_token_id", None) != 1:
        return None
    specials = [str(t) for t in tokenizer.all_special_tokens] + [
        str(t) for t in getattr(tokenizer, "added_tokens_encoder", {})
    ]
    specials = [s for s in dict.fromkeys(specials) if s]

    def ids(text: str, max_len: int) -> np.ndarray:
        if "<" in text and any(s in text for s in specials):
            out = tokenizer(text, truncation=True, max_length=max_len)["input_ids"]
            return np.asarray(out, dtype=np.int64)
        raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)[: max_len - 1]
        row = np.empty(len(raw) + 1, dtype=np.int64)
        row[:-1] = raw
        row[:-1] += _BYT5_OFFSET
        row[-1] = 1  # </s>
        return row

    return ids


def tokenize_all(tokenizer: Any, texts: Sequence[str], max_len: int) -> list[np.ndarray]:
    """Token ids of every text, truncated to ``max_len`` (special tokens included)."""
    fast = _byt5_ids(tokenizer)
    if fast is not None:
        return [fast(t, max_len) for t in texts]
    enc = tokenizer(list(texts), truncation=True, max_length=max_len)["input_ids"]
    return [np.asarray(row, dtype=np.int64) for row in enc]


def length_batches(
    lengths: Sequence[int],
    batch_size: int,
    max_rows: int | None = None,
    full: int | None = None,
) -> list[np.ndarray]:
    """Indices sorted by length, cut into batches under a token budget of ``batch_size`` rows
    of the longest length: every batch has at least ``batch_size`` rows (but the last, and the
    last one shorter than ``full``), and short rows travel in larger ones (at most ``max_rows``,
    default ``8 * batch_size``). Rows of length ``full`` or more (cut at the maximum length)
    never share a batch with shorter ones: such batches have no padding, hence no mask."""
    lengths = np.asarray(lengths)
    order = np.argsort(lengths, kind="stable")
    if not len(order):
        return []
    budget = batch_size * max(int(lengths[order[-1]]), 1)
    cap = max_rows or 8 * batch_size
    sorted_len = lengths[order]
    batches: list[np.ndarray] = []
    start, n = 0, len(order)
    while start < n:
        end = start + 1  # rows are sorted: a batch's last row is its longest
        while (
            end < n
            and end - start < cap
            and (end + 1 - start) * int(sorted_len[end]) <= budget
            and not (full is not None and sorted_len[start] < full <= sorted_len[end])
        ):
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


def encode(
    model: Any,
    texts: Sequence[str],
    *,
    max_len: int,
    batch_size: int,
    precision: str | None = None,
) -> torch.Tensor:
    """Embeddings of ``texts`` (float32, CPU, in input order) from ``model(ids, mask)``, which
    pools its hidden states (``PremiseRetriever.forward``; ``model.embedding_dim`` wide)."""
    if not texts:
        return torch.zeros(0, int(model.embedding_dim))
    tokenizer = model.tokenizer
    device = model.device
    pad_id = int(tokenizer.pad_token_id or 0)
    rows = tokenize_all(tokenizer, texts, max_len)
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    bf16 = use_bf16(torch.device(device), precision)
    out = torch.empty(len(texts), int(model.embedding_dim), dtype=torch.float32)
    was_training = model.training
    model.eval()
    try:
        with (
            torch.inference_mode(),
            torch.autocast(
                device_type=torch.device(device).type, dtype=torch.bfloat16, enabled=bf16
            ),
        ):
            for idx in length_batches(lengths, batch_size, full=max_len):
                width = int(lengths[idx].max())
                ids = np.full((len(idx), width), pad_id, dtype=np.int64)
                mask = np.zeros((len(idx), width), dtype=np.int64)
                for j, i in enumerate(idx):
                    ids[j, : lengths[i]] = rows[i]
                    mask[j, : lengths[i]] = 1
                emb = model(torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device))
                out[torch.from_numpy(idx)] = (
                    emb.float().cpu()
                )  # a normal tensor, not an inference one
    finally:
        model.train(was_training)
    return out
