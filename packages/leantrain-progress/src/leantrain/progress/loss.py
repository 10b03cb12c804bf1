"""Training losses of the progress regressor, on the (transformed) target.

The benchmark the model must beat is the median predictor, and the median is what minimises
the absolute error: a loss close to L1 makes the model predict a *conditional median*. Since
``log1p`` and standardising are monotone, the median in the transformed space maps back to the
median in steps, so an L1-like loss on the training target aims at MAE in steps directly. MSE
in the log space predicts a conditional geometric mean instead, and on a long-tailed target
(most rows 1-5 steps, some proofs 90) it pulls every prediction towards the long proofs of
the training split.

* ``huber`` (the default): quadratic within ``huber_delta`` of the label, linear beyond — an
  L1 that stays smooth near its minimum, so small models train stably;
* ``l1``: the absolute error (pinball loss at 0.5);
* ``mse``: the squared error (transformers' loss for ``problem_type="regression"``; the seed's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

LossName = Literal["huber", "l1", "mse"]
LOSSES: tuple[str, ...] = ("huber", "l1", "mse")


def make_loss(name: LossName, huber_delta: float = 0.5) -> Callable[..., Any]:
    """A ``compute_loss_func`` for transformers' ``Trainer``: ``(outputs, labels,
    num_items_in_batch=None) -> loss``. The loss is summed over the rows and divided by
    ``num_items_in_batch`` when the Trainer gives it (the rows of all gradient-accumulation
    micro-batches, so accumulation averages exactly), else averaged over the batch."""
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; choose one of {', '.join(LOSSES)}")

    def compute_loss(outputs: Any, labels: Any, num_items_in_batch: Any = None) -> Any:
        import torch.nn.functional as F

        logits = outputs["logits"] if isinstance(outputs, dict) else outputs[0]
        preds = logits.reshape(-1).float()
        target = labels.reshape(-1).to(preds.dtype)
        if name == "huber":
            per_row = F.huber_loss(preds, target, reduction="none", delta=huber_delta)
        elif name == "l1":
            per_row = (preds - target).abs()
        else:
            per_row = (preds - target) ** 2
        if num_items_in_batch is None:
            return per_row.mean()
        return per_row.sum() / num_items_in_batch

    return compute_loss
