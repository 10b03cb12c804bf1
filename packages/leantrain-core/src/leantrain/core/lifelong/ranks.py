"""Rank coordination of a distributed run (torchrun, Lightning DDP): rank 0 exports, saves and
records; the other ranks train alongside and wait for its files."""

from __future__ import annotations

import os
import time
from pathlib import Path

from leantrain.core.errors import CheckpointError


def is_main_process() -> bool:
    """Global rank 0 (or not distributed): the one process that exports, saves and records."""
    env = os.environ
    return (
        int(env.get("RANK", env.get("LOCAL_RANK", "0"))) == 0
        and int(env.get("NODE_RANK", "0")) == 0
    )


def wait_for(path: Path, timeout: float = 3600.0) -> None:
    """Other ranks wait for rank 0 to write ``path`` (an export or a checkpoint)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise CheckpointError(f"{path}: rank 0 did not write it within {timeout:.0f} s")
        time.sleep(0.5)
