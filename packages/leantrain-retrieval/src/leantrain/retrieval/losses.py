"""Retrieval losses over a batch's similarity matrix (contexts × premises)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def mse_similarity_loss(similarity: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
    """ReProver's loss: MSE between cosine similarities and 0/1 positive labels."""
    return F.mse_loss(similarity, label)


def info_nce_loss(
    similarity: torch.Tensor, label: torch.Tensor, temperature: float = 0.05
) -> torch.Tensor:
    """InfoNCE: each context's own positive (column ``i``) against the premises that are not
    its positives; its other positives are masked out rather than pushed away."""
    b = similarity.shape[0]
    logits = similarity / temperature
    own = torch.zeros_like(label, dtype=torch.bool)
    own[torch.arange(b), torch.arange(b)] = True
    logits = logits.masked_fill((label > 0) & ~own, float("-inf"))
    return F.cross_entropy(logits, torch.arange(b, device=similarity.device))
