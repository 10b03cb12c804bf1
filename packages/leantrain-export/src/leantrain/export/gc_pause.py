"""Automatic garbage collection paused around a bulk import or export.

CPython's cyclic collector runs a *full* collection once enough objects have survived two
younger collections, and a full collection walks every container object the process tracks:
in a process that has imported torch (the lifelong pipeline, a training script) that is
~170k objects before the import creates any, ~0.09 s per pass (measured with a
``gc.callbacks`` timer on the 32k-theorem import + export: 0.11 s of collections with torch
imported, 0.04 s without). The rows an import buffers and the records an export streams hold
strings, numbers and bytes and form no reference cycles, so collecting during them finds
nothing; reference counting frees them as before.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Disable automatic garbage collection inside the block and restore the state it found
    (also on an exception, and when nested). The pause is process-wide: keep it around bulk
    work that creates no reference cycles."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
