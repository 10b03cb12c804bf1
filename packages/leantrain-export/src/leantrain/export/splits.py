"""Split assignment that is deterministic for a seed and stable as repositories are added.

LeanDojo-v2 shuffles all theorems again at every lifelong step, so a theorem held out for
testing after repository 1 can land in training after repository 2. Here nothing depends on
which other theorems are exported:

* ``random``: a theorem's split comes from ``u = H(seed, "random", key)`` (uniform in [0, 1)
  from BLAKE2b of its key ``(file_path, full_name, start, end)``): ``u < val`` → val,
  ``u < val + test`` → test, else train. The fractions hold in expectation (binomial noise of
  about ``sqrt(f (1 - f) / n)``).
* ``novel_premises``: each *premise* (by full name) is held out when
  ``H(seed, "premise", name) < rate``. A theorem goes to val/test iff one of its premises (in
  its exported tactics) is held out, so no val/test theorem's held-out premise ever occurs in
  train — the premises really are novel. Val vs test is ``H(seed, "novel", key) <
  val / (val + test)``. With ``k`` distinct premises a theorem is held out with probability
  ``1 - (1 - rate)^k``; :func:`calibrate_rate` picks ``rate`` by bisection so that the mean
  of that over the exported theorems equals ``val + test``. Theorems without premises always
  train. The fractions are therefore approximate (the expectation is matched exactly, the
  realised counts vary, and they can fall short when too few theorems use premises).
  :meth:`~leantrain.export.Database.prepare_lifelong` calibrates the rate once on *all* its
  repositories and keeps it for every step, which keeps this split stable too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

_SCALE = float(1 << 64)


def unit_hash(seed: int, salt: str, key: str) -> float:
    """A uniform number in [0, 1) determined by ``(seed, salt, key)``."""
    digest = hashlib.blake2b(f"{seed}\x1f{salt}\x1f{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / _SCALE


def theorem_key(file_path: str, full_name: str, start: Iterable[int], end: Iterable[int]) -> str:
    """The string form of a theorem's identity ``(file_path, full_name, start, end)``."""
    s, e = list(start), list(end)
    return f"{file_path}\x1e{full_name}\x1e{s[0]}:{s[1]}\x1e{e[0]}:{e[1]}"


def random_split(seed: int, key: str, val: float, test: float) -> str:
    """``"train"``, ``"val"`` or ``"test"`` for a theorem key in the random split."""
    u = unit_hash(seed, "random", key)
    if u < val:
        return "val"
    if u < val + test:
        return "test"
    return "train"


def premise_held_out(seed: int, name: str, rate: float) -> bool:
    """Whether premise ``name`` is held out of training in the novel-premises split."""
    return unit_hash(seed, "premise", name) < rate


def novel_split(seed: int, key: str, held_out: bool, val: float, test: float) -> str:
    """The novel-premises split of a theorem that does (not) use a held-out premise."""
    if not held_out or val + test <= 0:
        return "train"
    return "val" if unit_hash(seed, "novel", key) < val / (val + test) else "test"


def expected_held_out(rate: float, premise_counts: dict[int, int], num_theorems: int) -> float:
    """Expected fraction of theorems held out when each premise is held out with ``rate``.

    ``premise_counts`` maps ``k`` (distinct premises of a theorem) to how many theorems have it.
    """
    if num_theorems == 0:
        return 0.0
    return (
        sum(n * (1.0 - (1.0 - rate) ** k) for k, n in premise_counts.items() if k > 0)
        / num_theorems
    )


def calibrate_rate(target: float, premise_counts: dict[int, int], num_theorems: int) -> float:
    """The premise hold-out rate whose expected theorem hold-out fraction is ``target``.

    Bisection on [0, 1] (the expectation is increasing in the rate); 1.0 when even holding
    out every premise cannot reach ``target``.
    """
    if target <= 0:
        return 0.0
    if expected_held_out(1.0, premise_counts, num_theorems) <= target:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if expected_held_out(mid, premise_counts, num_theorems) < target:
            lo = mid
        else:
            hi = mid
    return round(hi, 12)
