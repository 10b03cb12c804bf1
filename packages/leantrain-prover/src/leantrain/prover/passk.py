"""pass@k: the chance that at least one of k attempts proves a theorem.

With ``n`` attempts per theorem of which ``c`` succeeded, the unbiased estimator of pass@k
(Chen et al., 2021, "Evaluating Large Language Models Trained on Code") is
``1 - C(n - c, k) / C(n, k)``, averaged over theorems. With ``k == n`` it is the plain share
of theorems proved at least once; with ``k < n`` it uses every attempt rather than the first
``k`` only, so it has less variance than re-running with ``k`` attempts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from math import comb


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one theorem with ``c`` successes out of ``n`` attempts."""
    if not 0 <= c <= n:
        raise ValueError(f"pass_at_k: need 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"pass_at_k: need 1 <= k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_at_k_table(
    attempts: Mapping[str, Sequence[bool]] | Iterable[tuple[str, Sequence[bool]]],
    ks: Iterable[int] | None = None,
) -> dict[str, float]:
    """``{"pass@1": …, "pass@k": …}`` averaged over theorems, from each theorem's attempt outcomes.

    Every theorem must have the same number of attempts ``n`` (a run with a theorem cut short
    would otherwise mix estimators); ``ks`` defaults to 1, 2, 4, … up to and including ``n``.
    """
    items = list(attempts.items() if isinstance(attempts, Mapping) else attempts)
    if not items:
        return {}
    sizes = {len(outcomes) for _, outcomes in items}
    if len(sizes) != 1:
        raise ValueError(f"pass_at_k_table: theorems have different attempt counts {sorted(sizes)}")
    (n,) = sizes
    if ks is None:
        ks = sorted({1 << i for i in range(n.bit_length()) if 1 << i <= n} | {n})
    table = {}
    for k in ks:
        values = [pass_at_k(n, sum(map(bool, outcomes)), k) for _, outcomes in items]
        table[f"pass@{k}"] = sum(values) / len(values)
    return table
