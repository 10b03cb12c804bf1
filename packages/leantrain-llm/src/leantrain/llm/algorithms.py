"""GRPO algorithm presets and advantage functions, chosen by name.

**Presets** (:data:`leantrain.core.registry.ALGORITHMS`) are dicts of TRL ``GRPOConfig``
field overrides that select the loss aggregation and reward scaling of a published method:

=========== ==================================================================================
``grpo``     DeepSeekMath (Shao et al. 2024, arXiv:2402.03300): per-sequence length-normalised
             loss (``loss_type="grpo"``), rewards scaled by the group std, symmetric clipping
             ε=0.2, KL to the reference policy with β=0.04 (the paper's value).
``dr_grpo``  Dr. GRPO (Liu et al. 2025, "Understanding R1-Zero-Like Training",
             arXiv:2503.20783): no std scaling (``scale_rewards="none"``, which biases towards
             easy/hard questions) and a constant normaliser (``loss_type="dr_grpo"``, no length
             bias); no KL term (β=0).
``dapo``     DAPO (Yu et al. 2025, arXiv:2503.14476): token-level loss over the batch
             (``loss_type="dapo"``), clip-higher ε_low=0.2 / ε_high=0.28, overlong filtering
             (``mask_truncated_completions=True``), no KL (β=0). Dynamic sampling is not a
             TRL option; zero-variance groups simply give zero advantages.
``bnpo``     BNPO (Xiao et al. 2025, arXiv:2506.02864) as TRL implements its normalisation:
             the loss normalised by the active tokens of the local batch
             (``loss_type="bnpo"``), group-std reward scaling, no KL (β=0).
=========== ==================================================================================

**Advantage functions** (:data:`leantrain.core.registry.ADVANTAGES`) map a flat batch of
rewards and the group (prompt) each belongs to, to advantages — the "custom core algorithm"
hook of VERL: ``fn(rewards: Tensor[N], group_ids: LongTensor[N]) -> Tensor[N]``. Built in:
``grpo`` (group mean/std normalisation), ``dr_grpo`` (group mean only) and ``rloo``
(leave-one-out baseline, Ahmadian et al. 2024, arXiv:2402.14740). Any ``module:function`` works too.
Groups with one member or with equal rewards get advantage 0, never NaN.

torch is imported only when an advantage function runs, so presets are cheap to read.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from leantrain.core.errors import ConfigError, LeanTrainError
from leantrain.core.registry import ADVANTAGES, ALGORITHMS

if TYPE_CHECKING:
    import torch

AdvantageFn = Callable[["torch.Tensor", "torch.Tensor"], "torch.Tensor"]

PRESETS: dict[str, dict[str, Any]] = {
    "grpo": {
        "loss_type": "grpo",
        "scale_rewards": "group",
        "beta": 0.04,
        "epsilon": 0.2,
        "epsilon_high": 0.2,
        "mask_truncated_completions": False,
    },
    "dr_grpo": {
        "loss_type": "dr_grpo",
        "scale_rewards": "none",
        "beta": 0.0,
        "epsilon": 0.2,
        "epsilon_high": 0.2,
        "mask_truncated_completions": False,
    },
    "dapo": {
        "loss_type": "dapo",
        "scale_rewards": "group",
        "beta": 0.0,
        "epsilon": 0.2,
        "epsilon_high": 0.28,
        "mask_truncated_completions": True,
    },
    "bnpo": {
        "loss_type": "bnpo",
        "scale_rewards": "group",
        "beta": 0.0,
        "epsilon": 0.2,
        "epsilon_high": 0.2,
        "mask_truncated_completions": False,
    },
}
"""The built-in presets (also registered in ``ALGORITHMS``); see the module docstring."""

PRESET_ADVANTAGES: dict[str, str] = {
    "grpo": "grpo",
    "dr_grpo": "dr_grpo",
    "dapo": "grpo",
    "bnpo": "grpo",
}
"""The advantage function matching each preset's ``scale_rewards`` (for custom loops)."""

for _name, _overrides in PRESETS.items():
    ALGORITHMS.add(_name, _overrides)


def algorithm_preset(name: str, *, allow_code: bool = False) -> dict[str, Any]:
    """The ``GRPOConfig`` overrides of algorithm ``name`` (a fresh copy, safe to modify).

    ``name`` is a registered preset, an entry point of group ``leantrain.algorithms``, or a
    ``module:attr`` naming a dict or a zero-argument callable returning one (only with
    ``allow_code`` or ``LEANTRAIN_ALLOW_CODE=1``).
    """
    obj = ALGORITHMS.get(name, allow_code=allow_code)
    if callable(obj) and not isinstance(obj, Mapping):
        obj = obj()
    if not isinstance(obj, Mapping):
        raise ConfigError(
            f"algorithm preset '{name}' is not a dict of GRPOConfig fields (got {type(obj).__name__})"
        )
    return copy.deepcopy(dict(obj))


# -- advantage functions ------------------------------------------------------------------
def _check_inputs(
    rewards: torch.Tensor, group_ids: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, int]:
    import torch

    rewards = torch.as_tensor(rewards)
    group_ids = torch.as_tensor(group_ids)
    if rewards.dim() != 1 or group_ids.shape != rewards.shape:
        raise LeanTrainError(
            f"advantages need 1-D rewards and group ids of the same shape, got {tuple(rewards.shape)} "
            f"and {tuple(group_ids.shape)}"
        )
    if not rewards.is_floating_point():
        rewards = rewards.float()
    # Group ids may be any integers; map them to 0..G-1.
    _, inverse = torch.unique(group_ids, return_inverse=True)
    n_groups = int(inverse.max().item()) + 1 if inverse.numel() else 0
    return rewards, inverse, n_groups


def _group_sums(values: torch.Tensor, inverse: torch.Tensor, n_groups: int) -> torch.Tensor:
    import torch

    return torch.zeros(n_groups, dtype=values.dtype, device=values.device).index_add_(
        0, inverse, values
    )


def _flat_groups(rewards: torch.Tensor, inverse: torch.Tensor, n_groups: int) -> torch.Tensor:
    """Per element: True when its group has one member or all-equal rewards (advantage 0)."""
    import torch

    hi = torch.full((n_groups,), -torch.inf, dtype=rewards.dtype).scatter_reduce(
        0, inverse, rewards, "amax"
    )
    lo = torch.full((n_groups,), torch.inf, dtype=rewards.dtype).scatter_reduce(
        0, inverse, rewards, "amin"
    )
    return (hi == lo)[inverse]


def group_normalized_advantages(
    rewards: torch.Tensor, group_ids: torch.Tensor, *, scale: bool = True, eps: float = 1e-4
) -> torch.Tensor:
    """``(r - mean_group) / (std_group + eps)`` — GRPO's advantage (``scale=False``: Dr. GRPO's).

    The std is the unbiased one, as TRL computes it. A group of one, or whose rewards are all
    equal, gets zeros.
    """
    import torch

    rewards, inverse, n_groups = _check_inputs(rewards, group_ids)
    if rewards.numel() == 0:
        return rewards.clone()
    counts = _group_sums(torch.ones_like(rewards), inverse, n_groups)
    mean = _group_sums(rewards, inverse, n_groups) / counts
    centered = rewards - mean[inverse]
    # Equal rewards can leave rounding noise in `centered` (0.1 * 3 / 3 != 0.1): force 0.
    flat = _flat_groups(rewards, inverse, n_groups)
    if not scale:
        return torch.where(flat, torch.zeros_like(centered), centered)
    sq = _group_sums(centered * centered, inverse, n_groups)
    var = sq / (counts - 1).clamp(min=1)
    std = var.sqrt()[inverse]
    return torch.where(flat, torch.zeros_like(centered), centered / (std + eps))


def rloo_advantages(rewards: torch.Tensor, group_ids: torch.Tensor) -> torch.Tensor:
    """REINFORCE leave-one-out: ``r_i - mean of the other rewards of its group`` (0 alone)."""
    import torch

    rewards, inverse, n_groups = _check_inputs(rewards, group_ids)
    if rewards.numel() == 0:
        return rewards.clone()
    counts = _group_sums(torch.ones_like(rewards), inverse, n_groups)[inverse]
    sums = _group_sums(rewards, inverse, n_groups)[inverse]
    baseline = (sums - rewards) / (counts - 1).clamp(min=1)
    flat = _flat_groups(rewards, inverse, n_groups)
    return torch.where(flat, torch.zeros_like(rewards), rewards - baseline)


ADVANTAGES.add("grpo", group_normalized_advantages)
ADVANTAGES.add("dr_grpo", functools.partial(group_normalized_advantages, scale=False))
ADVANTAGES.add("rloo", rloo_advantages)


def get_advantage_fn(name: str | AdvantageFn, *, allow_code: bool = False) -> AdvantageFn:
    """The advantage function called ``name`` (registered, entry point or — with ``allow_code``
    or ``LEANTRAIN_ALLOW_CODE=1`` — ``module:function``), wrapped so that a wrong shape or a
    NaN/inf in its output is a clear error."""
    fn = name if callable(name) else ADVANTAGES.get(name, allow_code=allow_code)
    label = name if isinstance(name, str) else getattr(name, "__name__", repr(name))
    if not callable(fn):
        raise ConfigError(f"advantage function '{label}' is not callable (got {type(fn).__name__})")

    def advantages(rewards: torch.Tensor, group_ids: torch.Tensor) -> torch.Tensor:
        import torch

        out = torch.as_tensor(fn(rewards, group_ids))
        if out.shape != torch.as_tensor(rewards).shape:
            raise LeanTrainError(
                f"advantage function '{label}' returned shape {tuple(out.shape)} for "
                f"{tuple(torch.as_tensor(rewards).shape)} rewards"
            )
        if out.is_floating_point() and not torch.isfinite(out).all():
            raise LeanTrainError(
                f"advantage function '{label}' returned NaN or infinite advantages"
            )
        return out

    advantages.__name__ = str(label).replace(":", ".")
    advantages.__wrapped__ = fn  # type: ignore[attr-defined]
    return advantages
