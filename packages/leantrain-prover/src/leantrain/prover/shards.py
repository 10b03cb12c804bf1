"""Stable hashes of theorem ids: which shard a theorem belongs to, and each attempt's seed.

Both are SHA-256 of the text (never Python's ``hash()``, which is salted per process), so a
shard holds the same theorems on every machine and an attempt draws the same seed in a
resumed run as in an unbroken one.
"""

from __future__ import annotations

import hashlib


def _stable(*parts: object) -> int:
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def attempt_seed(seed: int, theorem_id: str, attempt: int) -> int:
    """The sampling seed of ``attempt`` (0, 1, …) on ``theorem_id`` in a run seeded ``seed``."""
    return _stable("attempt", seed, theorem_id, attempt) % (2**63)


def shard_index(theorem_id: str, count: int) -> int:
    """The shard (0 … ``count`` − 1) ``theorem_id`` belongs to."""
    return _stable("shard", theorem_id) % count


def in_shard(theorem_id: str, shard: str | None) -> bool:
    """Whether ``theorem_id`` is proved by ``shard`` (``"i/n"``; ``None``: every theorem)."""
    if shard is None:
        return True
    index, count = map(int, shard.split("/"))
    return shard_index(theorem_id, count) == index
