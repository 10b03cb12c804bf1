"""SDPA for T5-family encoders (ByT5, ReProver's retriever) without the per-layer mask rebuild.

transformers 5's ``sdpa`` attention gives SDPA one float mask per layer: T5's relative position
bias ``[1, H, L, L]`` merged with the padding mask into ``[B, H, L, L]`` by a ``torch.where``
over a *non-contiguous* bias, then copied to make it contiguous. At d_model 64 and 256 tokens
that rebuild (a ``B·H·L²`` write, twice) costs more than the attention itself: 55 % of a padded
encoder forward on one CPU thread. Every layer of a T5 stack receives the same bias tensor and
the same mask, so the merged mask is the same for all of them.

:data:`T5_SDPA` is ``sdpa`` with that merge done once per forward of the stack, from a
contiguous bias, giving bit-identical outputs, in inference and in training alike (autograd
sums the gradients of the layers that share the merged mask). The merged mask is kept in a
scope that the stack's forward hooks open and close (:func:`use_t5_sdpa` installs them), so
nothing outlives the forward but what the autograd graph holds. Masks without padding, models
without a position bias and everything else go to transformers' own ``sdpa`` unchanged. The
config is not changed, so a saved model reloads anywhere as before.
"""

from __future__ import annotations

import contextvars
from typing import Any

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

T5_SDPA = "leantrain_t5_sdpa"
_CACHE = "_leantrain_position_bias_mask"  # attribute of the bool mask: (position_bias, merged)
_SCOPE_TOKEN = "_leantrain_mask_scope"  # attribute of a stack: the token of its open scope

# Merged masks of the stack forward running in this thread: {(id(mask), id(bias)): (mask,
# bias, merged)}; None outside one.
_FORWARD: contextvars.ContextVar[dict[tuple[int, int], tuple[Any, Any, Any]] | None] = (
    contextvars.ContextVar("leantrain_t5_forward_masks", default=None)
)


def _merged_mask(attention_mask: torch.Tensor, position_bias: torch.Tensor, dtype: Any) -> Any:
    """``where(mask, bias, min)`` as transformers builds it, reused by every layer that gets the
    same ``attention_mask`` and ``position_bias`` objects: within the stack's forward scope
    (dropped when it ends), or else, only when no gradient is recorded, on the mask itself (a
    tensor with a graph kept there would tie the mask to it)."""
    scope = _FORWARD.get()
    if scope is not None:
        key = (id(attention_mask), id(position_bias))
        hit = scope.get(key)
        if hit is not None and hit[0] is attention_mask and hit[1] is position_bias:
            return hit[2]
        merged = torch.where(attention_mask, position_bias.contiguous(), torch.finfo(dtype).min)
        scope[key] = (attention_mask, position_bias, merged)
        return merged
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


def _open_scope(stack: torch.nn.Module, args: Any) -> None:
    setattr(stack, _SCOPE_TOKEN, _FORWARD.set({}))


def _close_scope(stack: torch.nn.Module, args: Any, output: Any) -> None:
    token = stack.__dict__.pop(_SCOPE_TOKEN, None)
    if token is not None:
        _FORWARD.reset(token)


def _add_scopes(model: torch.nn.Module) -> None:
    """Forward hooks that open and close the merged-mask scope around each T5 stack."""
    for module in model.modules():
        if type(module).__name__.endswith("Stack") and not getattr(
            module, "_leantrain_mask_scopes", False
        ):
            module.register_forward_pre_hook(_open_scope)
            module.register_forward_hook(_close_scope, always_call=True)
            module._leantrain_mask_scopes = True


def use_t5_sdpa(model: Any) -> bool:
    """Switch a T5-family model that runs transformers' ``sdpa`` to :data:`T5_SDPA`, in place;
    returns whether it did (other models and attention implementations are left alone)."""
    config = getattr(model, "config", None)
    if getattr(config, "model_type", None) not in ("t5", "mt5", "umt5"):
        return False
    if getattr(config, "_attn_implementation", None) != "sdpa":
        return config is not None and config._attn_implementation == T5_SDPA
    model.set_attn_implementation(T5_SDPA)
    _add_scopes(model)
    return True
