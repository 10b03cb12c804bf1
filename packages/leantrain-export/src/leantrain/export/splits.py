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
  val / (val + test)``. Theorems without premises always train, as in LeanDojo (they cannot
  use a novel premise). The split is calibrated on what a retriever trains and is evaluated
  on, the *tactics with premises*: a theorem with ``k`` distinct premises is held out with
  probability ``1 - (1 - rate)^k``, and :func:`calibrate_rate` picks ``rate`` by bisection so
  that the expected fraction of tactics with premises in val/test, each theorem weighted by
  its number of tactics with premises, equals ``val + test`` (calibrating on theorem counts
  instead sent most tactics to val/test: theorems without tactics all train). The fractions
  are approximate (the expectation is matched exactly; a theorem with many tactics moves many
  at once). :meth:`~leantrain.export.Database.prepare_lifelong` calibrates the rate once on
  *all* its repositories and keeps it for every step, which keeps this split stable too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

_SCALE = float(1 << 64)


def unit_hasher(seed: int, salt: str) -> Callable[[str], float]:
    """``key -> unit_hash(seed, salt, key)``: BLAKE2b (8 bytes) of
    ``f"{seed}\\x1f{salt}\\x1f{key}"`` as a number in [0, 1). For many keys, call the returned
    function: the ``(seed, salt)`` prefix is hashed once and the state copied per key (~2x
    faster per call than hashing the whole text each time)."""
    base = hashlib.blake2b(f"{seed}\x1f{salt}\x1f".encode(), digest_size=8)

    def unit(key: str) -> float:
        h = base.copy()
        h.update(key.encode())
        return int.from_bytes(h.digest(), "big") / _SCALE

    return unit


def unit_hash(seed: int, salt: str, key: str) -> float:
    """A uniform number in [0, 1) determined by ``(seed, salt, key)`` (see :func:`unit_hasher`)."""
    return unit_hasher(seed, salt)(key)


def theorem_key(file_path: str, full_name: str, start: Sequence[int], end: Sequence[int]) -> str:
    """The string form of a theorem's identity ``(file_path, full_name, start, end)``."""
    return f"{file_path}\x1e{full_name}\x1e{start[0]}:{start[1]}\x1e{end[0]}:{end[1]}"


def _random_of(u: float, val: float, test: float) -> str:
    """The random split of a theorem whose hash is ``u``."""
    if u < val:
        return "val"
    if u < val + test:
        return "test"
    return "train"


def _novel_of(
    unit: Callable[[str], float], key: str, held_out: bool, val: float, test: float
) -> str:
    """The novel-premises split of theorem ``key`` (hashed by ``unit`` only when needed)."""
    if not held_out or val + test <= 0:
        return "train"
    return "val" if unit(key) < val / (val + test) else "test"


def random_split(seed: int, key: str, val: float, test: float) -> str:
    """``"train"``, ``"val"`` or ``"test"`` for a theorem key in the random split."""
    return _random_of(unit_hash(seed, "random", key), val, test)


def premise_held_out(seed: int, name: str, rate: float) -> bool:
    """Whether premise ``name`` is held out of training in the novel-premises split."""
    return unit_hash(seed, "premise", name) < rate


def novel_split(seed: int, key: str, held_out: bool, val: float, test: float) -> str:
    """The novel-premises split of a theorem that does (not) use a held-out premise."""
    return _novel_of(unit_hasher(seed, "novel"), key, held_out, val, test)


class Splitter:
    """:func:`random_split`, :func:`novel_split` and :func:`premise_held_out` for one ``seed``
    and fractions, with each salt's prefix hashed once (what an export of many theorems
    calls; the same values)."""

    def __init__(self, seed: int, val: float, test: float) -> None:
        self.val, self.test = val, test
        self._random = unit_hasher(seed, "random")
        self._novel = unit_hasher(seed, "novel")
        self._premise = unit_hasher(seed, "premise")

    def random(self, key: str) -> str:
        """:func:`random_split` of ``key``."""
        return _random_of(self._random(key), self.val, self.test)

    def novel(self, key: str, held_out: bool) -> str:
        """:func:`novel_split` of ``key``."""
        return _novel_of(self._novel, key, held_out, self.val, self.test)

    def premise_held_out(self, name: str, rate: float) -> bool:
        """:func:`premise_held_out` of ``name``."""
        return self._premise(name) < rate


def expected_held_out(rate: float, premise_counts: dict[int, int], total: int) -> float:
    """Expected held-out fraction when each premise is held out with probability ``rate``.

    ``premise_counts`` maps ``k`` (distinct premises of a theorem) to the weight of the
    theorems with ``k`` premises (the export weighs each by its tactics with premises);
    ``total`` is the weight of all of them (theorems without premises may add weight that is
    never held out).
    """
    if total == 0:
        return 0.0
    return sum(n * (1.0 - (1.0 - rate) ** k) for k, n in premise_counts.items() if k > 0) / total


def calibrate_rate(target: float, premise_counts: dict[int, int], total: int) -> float:
    """The premise hold-out rate whose expected held-out fraction (of :func:`expected_held_out`)
    is ``target``.

    Bisection on [0, 1] (the expectation is increasing in the rate); 1.0 when even holding
    out every premise cannot reach ``target``.
    """
    if target <= 0:
        return 0.0
    if expected_held_out(1.0, premise_counts, total) <= target:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if expected_held_out(mid, premise_counts, total) < target:
            lo = mid
        else:
            hi = mid
    return round(hi, 12)
