"""Training on a CPU: freed tensor memory goes back to the OS (glibc's allocator).

On a CPU, PyTorch allocates tensors with ``malloc``. glibc serves a request of at least its
*mmap threshold* with a mapping of its own, unmapped when freed; smaller ones come from the heap,
which keeps freed memory in the process (it can only shrink from its top) for later requests that
fit. The threshold is dynamic: freeing a mapped block raises it to that block's size, up to
32 MiB. A training step frees its activations, so from the second step on every tensor below
32 MiB — a layer's hidden states at batch 8 x 1,024 x 576 fp32 are 18.9 MB — comes from the heap,
and what the backward pass frees there stays resident, fragmented, while the next forward
allocates more. On SmolLM2-135M (batch 8 x 1,024 tokens, fp32, 2 steps;
``tools/bench/sft_memory.py``) that retention was 3.2 GB of a 7.0 GB peak resident set.

:func:`return_freed_memory` fixes the threshold (which also stops its growth) and trims the heap's
top whenever it is free, for the whole process: tensors of 64 KiB and more are then mapped and
unmapped, and the resident set follows the memory the tensors actually hold. Where memory goes
does not change any arithmetic: the losses are bit-identical. The cost is a page fault per 4 KiB
page of every fresh tensor (the kernel zeroes them), which the benchmark measures as CPU time.

It is process-wide and lasts for the process (glibc cannot go back to the dynamic threshold), so
it applies only where the user has not chosen: not when ``MALLOC_MMAP_THRESHOLD_`` or
``MALLOC_TRIM_THRESHOLD_`` is set (glibc's own variables, read at start-up) nor when
``LEANTRAIN_CPU_MALLOC=default``; and only with glibc (not macOS, Windows or musl).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
from typing import Any

log = logging.getLogger("leantrain.llm")

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 64 * 1024
"""Allocations of at least this many bytes are mapped (every tensor but the smallest)."""

OPT_OUT = "LEANTRAIN_CPU_MALLOC"
_GLIBC_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")

_applied: bool | None = None  # None: not tried in this process


def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has ``mallopt`` and ``gnu_get_libc_version``)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    if not (hasattr(libc, "mallopt") and hasattr(libc, "gnu_get_libc_version")):
        return None
    return libc


def return_freed_memory() -> bool:
    """Make glibc hand freed tensor memory back to the OS for the rest of the process (see the
    module); ``True`` when it applies (now or earlier in the process)."""
    global _applied
    if _applied is not None:
        return _applied
    _applied = False
    if os.environ.get(OPT_OUT, "").strip().lower() == "default":
        return False
    if any(v in os.environ for v in _GLIBC_VARIABLES):
        return False  # the user tuned glibc: keep it
    libc = _glibc()
    if libc is None:
        return False
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.mallopt.restype = ctypes.c_int
    if libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) != 1:
        return False
    libc.mallopt(M_TRIM_THRESHOLD, 0)
    _applied = True
    log.debug(
        "glibc: blocks of >= %d bytes are mapped; freed memory returns to the OS", MMAP_THRESHOLD
    )
    return True


MIN_HIDDEN = 256
"""Models narrower than this keep glibc's defaults: their activations are small (the tiny test
models), as for ``CHECKPOINTING_MIN_HIDDEN``."""


def applies_to(device_type: str, model: Any) -> bool:
    """Whether training ``model`` on ``device_type`` returns freed memory to the OS: on a CPU,
    for a model at least :data:`MIN_HIDDEN` wide."""
    from leantrain.llm.model_loading import model_width

    return device_type == "cpu" and model_width(model) >= MIN_HIDDEN


def prepare_training(trainer: Any) -> bool:
    """Before a TRL ``trainer`` trains: :func:`return_freed_memory` where :func:`applies_to`
    its device and model; whether the process returns freed memory."""
    if not applies_to(trainer.args.device.type, trainer.model):
        return False
    return return_freed_memory()
