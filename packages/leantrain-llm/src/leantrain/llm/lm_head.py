"""The LM head on a CPU: project only the positions that have a label.

TRL 1.x trains through a fused LM head (``trl.trainer.utils.add_fused_lm_head``): the loss comes
from per-token log-probabilities computed in tiles, so the ``(batch, seq_len, vocab)`` logits
are never held at once. On Triton devices (CUDA, XPU) it projects only the positions whose
label is not ``-100``; elsewhere it projects *every* position, to keep tile shapes fixed for
graph compilers (e.g. Neuron), and zeroes the ignored ones afterwards. On a CPU there is no such
compiler, and for SFT on proof states the prompt is most of the sequence: on the LB4 head, 24 of
369 tokens per row on average are the tactic. Projecting the prompt too costs a 49k-vocabulary
matmul per prompt token, forward and backward, and tiles of up to 4,096 x 32,768 fp32 logits
with their softmax temporaries.

:func:`labelled_positions_only` makes TRL's head project only the labelled positions on a CPU
as well. The loss, its gradient and TRL's ``entropy`` / ``mean_token_accuracy`` metrics are the
same (the ignored positions were zeroed before), computed on ~15x fewer positions.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_COMPACT_DEVICES = ("cpu",)


def _trl_utils() -> Any:
    import trl.trainer.utils

    return trl.trainer.utils


def compaction_supported() -> bool:
    """True when the installed TRL has the fused LM head whose compaction this module extends."""
    utils = _trl_utils()
    return callable(getattr(utils, "_use_triton", None)) and hasattr(utils, "add_fused_lm_head")


@contextmanager
def labelled_positions_only() -> Iterator[bool]:
    """Within the block, TRL's fused LM head projects only labelled positions on a CPU too.

    Yields whether it applies (``False`` with a TRL without the fused head, where there is
    nothing to change). Elsewhere (CUDA, XPU, other devices) TRL's own choice stands.
    """
    if not compaction_supported():
        yield False
        return
    utils = _trl_utils()
    original = utils._use_triton

    def compact(device: Any) -> bool:
        return device.type in _COMPACT_DEVICES or bool(original(device))

    utils._use_triton = compact
    try:
        yield True
    finally:
        utils._use_triton = original
