"""SDPA for T5-family encoders (ByT5, ReProver's retriever) without the per-layer mask rebuild.

transformers 5's ``sdpa`` attention gives SDPA one float mask per layer: T5's relative position
bias ``[1, H, L, L]`` merged with the padding mask into ``[B, H, L, L]`` by a ``torch.where``
over a *non-contiguous* bias, then copied to make it contiguous. At d_model 64 and 256 tokens
that rebuild (a ``B·H·L²`` write, twice) costs more than the attention itself: 55 % of a padded
encoder forward on one CPU thread. Every layer of a T5 stack receives the same bias tensor and
the same mask, so the merged mask is the same for all of them.

:data:`T5_SDPA` is ``sdpa`` with that merge done once per forward (when no gradient flows
through it, i.e. under ``no_grad`` / ``inference_mode``: encoding an index or queries), from a
contiguous bias, giving bit-identical outputs. In training the merge is still made per layer
(the autograd graph keeps both uses) but without the copy. Masks without padding, models
without a position bias and everything else go to transformers' own ``sdpa`` unchanged.
:func:`use_t5_sdpa` switches a model to it; the config is not changed, so a saved model
reloads anywhere as before.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

T5_SDPA = "leantrain_t5_sdpa"
_CACHE = "_leantrain_position_bias_mask"  # attribute of the bool mask: (position_bias, merged)


def _merged_mask(attention_mask: torch.Tensor, position_bias: torch.Tensor, dtype: Any) -> Any:
    """``where(mask, bias, min)`` as transformers builds it, reused by every layer that gets the
    same ``attention_mask`` and ``position_bias`` objects (only when no gradient is recorded:
    a cached tensor with a graph would tie the mask to it)."""
    cached = getattr(attention_mask, _CACHE, None)
    if cached is not None and cached[0] is position_bias:
        return cached[1]
    merged = torch.where(attention_mask, position_bias.contiguous(), torch.finfo(dtype).min)
    if not merged.requires_grad:
        setattr(attention_mask, _CACHE, (position_bias, merged))
    return merged


def t5_sdpa_attention_forward(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    position_bias: torch.Tensor | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """transformers' ``sdpa_attention_forward`` with the bias-and-padding mask of a T5 stack
    merged once (see the module doc)."""
    if (
        position_bias is not None
        and attention_mask is not None
        and attention_mask.dtype == torch.bool
        and kwargs.get("cache") is None
    ):
        attention_mask = _merged_mask(attention_mask, position_bias, key.dtype)
        position_bias = None  # merged: sdpa_attention_forward uses the mask as given
    return sdpa_attention_forward(
        module, query, key, value, attention_mask, position_bias=position_bias, **kwargs
    )


AttentionInterface.register(T5_SDPA, t5_sdpa_attention_forward)
ALL_MASK_ATTENTION_FUNCTIONS.register(T5_SDPA, sdpa_mask)


def use_t5_sdpa(model: Any) -> bool:
    """Switch a T5-family model that runs transformers' ``sdpa`` to :data:`T5_SDPA`, in place;
    returns whether it did (other models and attention implementations are left alone)."""
    config = getattr(model, "config", None)
    if getattr(config, "model_type", None) not in ("t5", "mt5", "umt5"):
        return False
    if getattr(config, "_attn_implementation", None) != "sdpa":
        return config is not None and config._attn_implementation == T5_SDPA
    model.set_attn_implementation(T5_SDPA)
    return True
