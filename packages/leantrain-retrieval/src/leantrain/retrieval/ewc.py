"""Elastic weight consolidation that really constrains the next repository's training.

After a repository, :meth:`EWC.consolidate` estimates the diagonal Fisher information of the
encoder's parameters on that repository's training batches (mean squared gradient of the
retrieval loss) and keeps the parameters θ*. While training on later repositories the loss
gains ``λ·Σ F(θ−θ*)²``. Older repositories' Fisher is kept, decayed by ``gamma`` (online EWC),
so one pair of tensors covers the whole history. Both are stored as safetensors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch
from leantrain.core.errors import CheckpointError

FISHER_FILE = "fisher.safetensors"
PARAMS_FILE = "params.safetensors"


class EWC:
    """Diagonal Fisher ``F`` and anchor parameters ``θ*`` of the earlier repositories."""

    def __init__(
        self,
        fisher: dict[str, torch.Tensor] | None = None,
        params: dict[str, torch.Tensor] | None = None,
    ) -> None:
        self.fisher = fisher or {}
        self.params = params or {}

    @property
    def active(self) -> bool:
        """Whether a Fisher matrix has been computed (otherwise the penalty is 0)."""
        return bool(self.fisher)

    def penalty(self, model: torch.nn.Module) -> torch.Tensor:
        """``Σ F(θ−θ*)²`` over the model's parameters (a 0-d tensor; 0 when inactive)."""
        total: torch.Tensor | None = None
        for name, p in model.named_parameters():
            f = self.fisher.get(name)
            if f is None:
                continue
            f = f.to(p.device)
            term = (f * (p - self.params[name].to(p.device)) ** 2).sum()
            total = term if total is None else total + term
        if total is None:
            return torch.zeros((), device=next(model.parameters()).device)
        return total

    @staticmethod
    def estimate_fisher(
        model: torch.nn.Module,
        batches: Iterable[Any],
        loss_fn: Callable[[Any], torch.Tensor],
        max_batches: int,
    ) -> dict[str, torch.Tensor]:
        """Mean squared gradient of ``loss_fn(batch)`` per parameter over ``max_batches``."""
        was_training = model.training
        model.train()
        fisher = {
            n: torch.zeros_like(p, dtype=torch.float32)
            for n, p in model.named_parameters()
            if p.requires_grad
        }
        n = 0
        for batch in batches:
            if n >= max_batches:
                break
            model.zero_grad(set_to_none=True)
            loss_fn(batch).backward()
            for name, p in model.named_parameters():
                if p.grad is not None and name in fisher:
                    fisher[name] += p.grad.detach().float() ** 2
            n += 1
        model.zero_grad(set_to_none=True)
        model.train(was_training)
        if n == 0:
            raise ValueError("no batches to estimate the Fisher information from")
        return {k: (v / n).cpu() for k, v in fisher.items()}

    def consolidate(
        self, model: torch.nn.Module, fisher: dict[str, torch.Tensor], gamma: float = 1.0
    ) -> None:
        """Add a repository's Fisher (older ones decayed by ``gamma``) and anchor at θ now."""
        merged = {}
        for name, f in fisher.items():
            old = self.fisher.get(name)
            merged[name] = f if old is None else gamma * old + f
        self.fisher = merged
        self.params = {
            n: p.detach().float().cpu().clone() for n, p in model.named_parameters() if n in merged
        }

    # -- persistence --------------------------------------------------------------------------
    def save(self, directory: str | Path) -> None:
        """Write ``fisher.safetensors`` and ``params.safetensors`` (atomically)."""
        from leantrain.core.atomic import atomic_write_bytes
        from safetensors.torch import save

        directory = Path(directory)
        atomic_write_bytes(
            directory / FISHER_FILE, save({k: v.contiguous() for k, v in self.fisher.items()})
        )
        atomic_write_bytes(
            directory / PARAMS_FILE, save({k: v.contiguous() for k, v in self.params.items()})
        )

    @classmethod
    def load(cls, directory: str | Path) -> EWC:
        """Reload what :meth:`save` wrote; a missing directory gives an inactive EWC."""
        from safetensors.torch import load_file

        directory = Path(directory)
        if not (directory / FISHER_FILE).is_file():
            return cls()
        if not (directory / PARAMS_FILE).is_file():
            raise CheckpointError(
                f"{directory}: {FISHER_FILE} without {PARAMS_FILE}",
                hint="delete the ewc/ directory to start EWC afresh",
            )
        fisher = load_file(directory / FISHER_FILE)
        params = load_file(directory / PARAMS_FILE)
        if set(fisher) != set(params):
            raise CheckpointError(
                f"{directory}: Fisher and parameter names differ", hint="delete the ewc/ directory"
            )
        return cls(fisher, params)
