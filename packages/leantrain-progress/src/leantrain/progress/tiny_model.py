"""The ``tiny`` model: a small BERT regressor and a WordPiece tokenizer built offline.

Nothing is downloaded: the tokenizer is trained on the training texts with ``tokenizers`` and
saved as ``tokenizer.json`` (a ``PreTrainedTokenizerFast``), so ``AutoTokenizer`` reloads it
to identical ids whatever the model type is; the model is built from a ``BertConfig``.

By default (``pooling="mean"``) the regressor averages the encoder's outputs over the tokens
(:class:`~leantrain.progress.mean_pool.MeanPoolRegressor`, model type ``leantrain-progress-mean-pool``, registered with the
``Auto*`` classes when :mod:`leantrain.progress.mean_pool` is imported, so ``from_pretrained`` loads it without remote
code): every token — the summary line's counts, the tactic's first word — has a direct path to
the output, which a 2-layer model trained from scratch on a thousand rows finds far sooner than
through BERT's ``[CLS]`` pooler (``pooling="cls"``, ``BertForSequenceClassification``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

TINY_NAME = "tiny"
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def build_tiny_tokenizer(
    texts: Iterable[str], *, vocab_size: int = 2000, max_length: int = 512
) -> Any:
    """A WordPiece ``PreTrainedTokenizerFast`` learnt from ``texts`` (Unicode kept, NFC only),
    the same for the same texts in every process.

    The vocabulary is the special tokens, every character of the texts (alone and as a
    ``##`` continuation, so nothing is unknown), then the most frequent words (ties by the
    word) up to ``vocab_size``. (``tokenizers``' WordPiece trainer breaks ties between equally
    frequent pairs in hash-map order, which differs from one process to the next: the same
    data gave different vocabularies, hence different models, in different runs.)
    """
    from collections import Counter

    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )
    from transformers import PreTrainedTokenizerFast

    # No lower-casing or accent stripping: Lean identifiers and symbols (ℕ, ⊢, ↑) are case- and
    # mark-sensitive.
    normalizer = normalizers.NFC()
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    words: Counter[str] = Counter()
    for text in texts:
        words.update(w for w, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    alphabet = sorted({c for w in words for c in w})
    tokens = [*SPECIAL_TOKENS, *alphabet, *(f"##{c}" for c in alphabet)]
    room = max(0, vocab_size - len(tokens))
    frequent = [w for w, _ in sorted(words.items(), key=lambda kv: (-kv[1], kv[0])) if len(w) > 1]
    vocab = {t: i for i, t in enumerate(dict.fromkeys([*tokens, *frequent[:room]]))}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.WordPiece()
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=max_length,
    )


def build_tiny_model(
    tokenizer: Any,
    *,
    hidden_size: int = 64,
    num_layers: int = 2,
    max_length: int = 512,
    seed: int = 42,
    pooling: str = "mean",
) -> Any:
    """A randomly initialised BERT with one regression output, sized for CPU tests: mean-pooled
    (``MeanPoolRegressor``) or ``[CLS]``-pooled (``pooling="cls"``)."""
    import torch
    from transformers import AutoModelForSequenceClassification, BertConfig

    heads = max(1, hidden_size // 32)
    from leantrain.progress.mean_pool import MeanPoolConfig

    config_class = MeanPoolConfig if pooling == "mean" else BertConfig
    config = config_class(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=heads,
        intermediate_size=hidden_size * 2,
        max_position_embeddings=max(max_length, 8),
        num_labels=1,
        problem_type="regression",
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    return AutoModelForSequenceClassification.from_config(config)
