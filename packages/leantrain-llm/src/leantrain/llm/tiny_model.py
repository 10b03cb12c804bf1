"""The ``tiny`` model: a small random Llama-style causal LM with a locally built tokenizer.

For offline smoke runs and tests: nothing is downloaded. The tokenizer is a
:class:`~transformers.PreTrainedTokenizerFast` over a fixed character vocabulary (ASCII plus the
Unicode that Lean states use: ``⊢ ℕ ∀ → …``) with byte fallback, so *any* text round-trips and
the ids never depend on the data. It carries a ChatML chat template, the same one training and
:meth:`suggest_tactics` use.

A Llama config is used rather than Qwen2 on purpose: transformers 5 forces a ``Qwen2Tokenizer``
onto every ``qwen2`` checkpoint, which would rebuild a different vocabulary on reload; for
``llama`` it honours the ``TokenizersBackend`` class saved in ``tokenizer_config.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

TINY_MODEL_NAME = "tiny"

SPECIAL_TOKENS = ["<pad>", "<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# Lean's Unicode: logic, relations, sets, arrows, number systems, Greek, sub/superscripts, brackets.
_LEAN_CHARS = (
    "⊢ℕℤℚℝℂ∀∃∄→←↔↦⇒⇔∧∨¬≤≥≠≈≡∈∉⊆⊂⊇⊃∪∩∅⊤⊥×⋯…∘∑∏∫√∞‖⌊⌋⌈⌉⟨⟩⟪⟫⦃⦄·•↑↓⁻⁺∣∤≃≅≪≫⊓⊔⨅⨆∗⋆ᶜᵀᵒᵖ✝"
    "αβγδεζηθικλμνξοπρστυφχψωΓΔΘΛΞΠΣΦΨΩ𝓝𝓤"
    "₀₁₂₃₄₅₆₇₈₉ₐₑₒₓₙₘₖᵢⱼ⁰¹²³⁴⁵⁶⁷⁸⁹"
)

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""ChatML: the prompt rendered alone is a prefix of prompt + completion (TRL's completion mask
relies on that)."""


def tiny_vocabulary() -> dict[str, int]:
    """Token -> id: special tokens, the 256 byte-fallback tokens, then the characters."""
    tokens = [*SPECIAL_TOKENS, *(f"<0x{i:02X}>" for i in range(256))]
    tokens += [chr(i) for i in range(32, 127)] + ["\n", "\t"] + list(_LEAN_CHARS)
    return {tok: i for i, tok in enumerate(dict.fromkeys(tokens))}


def build_tiny_tokenizer() -> Any:
    """A character-level ``PreTrainedTokenizerFast`` with byte fallback and a ChatML template."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(
        models.BPE(
            vocab=tiny_vocabulary(),
            merges=[],
            unk_token="<unk>",
            byte_fallback=True,
            fuse_unk=False,
        )
    )
    backend.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
    backend.add_special_tokens(SPECIAL_TOKENS)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="<pad>",
        unk_token="<unk>",
        eos_token="<|im_end|>",
        model_max_length=4096,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_tiny_model(
    *,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    intermediate_size: int | None = None,
    max_position_embeddings: int = 4096,
    seed: int = 0,
    tokenizer: Any | None = None,
) -> tuple[Any, Any]:
    """A random ``LlamaForCausalLM`` and its tokenizer, built from a config (no download).

    The defaults give ~0.1M parameters; ``hidden_size=384, num_layers=8`` gives ~10.6M.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = tokenizer or build_tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size or 2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=max(1, num_heads // 2),
        max_position_embeddings=max_position_embeddings,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.config._name_or_path = TINY_MODEL_NAME  # adapters record "tiny" as their base model
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model, tokenizer


def save_tiny_model(path: str | Path, **kwargs: Any) -> Path:
    """Build the tiny model and save it (weights as safetensors, tokenizer.json) to ``path``."""
    model, tokenizer = build_tiny_model(**kwargs)
    path = Path(path)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
