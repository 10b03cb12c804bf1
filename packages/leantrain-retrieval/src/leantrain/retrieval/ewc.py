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


def _key(kind: str, name: str) -> str:
    return f"{kind}__{name.replace('.', '__')}"  # buffer names cannot hold dots


class EWC(torch.nn.Module):
    """Diagonal Fisher ``F`` and anchor parameters ``θ*`` of the earlier repositories.

    Both are (non-persistent) buffers, so they move with the model that holds this module once,
    instead of being copied to the device at every step.
    """

    def __init__(
        self,
        fisher: dict[str, torch.Tensor] | None = None,
        params: dict[str, torch.Tensor] | None = None,
    ) -> None:
        super().__init__()
        self.names: list[str] = []
        self._set(fisher or {}, params or {})

    def _set(self, fisher: dict[str, torch.Tensor], params: dict[str, torch.Tensor]) -> None:
        for name in self.names:
            del self._buffers[_key("fisher", name)], self._buffers[_key("params", name)]
        self.names = sorted(fisher)
        for name in self.names:
            self.register_buffer(_key("fisher", name), fisher[name].float(), persistent=False)
            self.register_buffer(_key("params", name), params[name].float(), persistent=False)

    @property
    def fisher(self) -> dict[str, torch.Tensor]:
        return {n: self.get_buffer(_key("fisher", n)) for n in self.names}

    @property
    def params(self) -> dict[str, torch.Tensor]:
        return {n: self.get_buffer(_key("params", n)) for n in self.names}

    @property
    def active(self) -> bool:
        """Whether a Fisher matrix has been computed (otherwise the penalty is 0)."""
        return bool(self.names)

    def penalty(self, model: torch.nn.Module) -> torch.Tensor:
        """``Σ F(θ−θ*)²`` over the model's parameters (a 0-d tensor; 0 when inactive)."""
        names = set(self.names)
        terms = [
            (
                self.get_buffer(_key("fisher", n)) * (p - self.get_buffer(_key("params", n))) ** 2
            ).sum()
            for n, p in model.named_parameters()
            if n in names
        ]
        if not terms:
            return torch.zeros((), device=next(model.parameters()).device)
        return torch.stack(terms).sum()

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
        old = self.fisher
        merged = {
            n: f.cpu() if n not in old else gamma * old[n].cpu() + f.cpu()
            for n, f in fisher.items()
        }
        params = {n: p.detach().float().cpu().clone() for n, p in model.named_parameters()}
        self._set(merged, {n: params[n] for n in merged})

    # -- persistence --------------------------------------------------------------------------
    def save(self, directory: str | Path) -> None:
        """Write ``fisher.safetensors`` and ``params.safetensors`` (atomically)."""
        from leantrain.core.atomic import atomic_write_bytes
        from safetensors.torch import save

        directory = Path(directory)
        atomic_write_bytes(
            directory / FISHER_FILE, save({k: v.cpu().contiguous() for k, v in self.fisher.items()})
        )
        atomic_write_bytes(
            directory / PARAMS_FILE, save({k: v.cpu().contiguous() for k, v in self.params.items()})
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
