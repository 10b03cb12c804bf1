"""Retrieval metrics exactly as ReProver defines them.

Per tactic with at least one positive premise: R@k = (positives in the top k) / (number of
positives), MRR = 1 / rank of the first positive (0 when none is retrieved); each averaged
over those tactics. Tactics without positives are left out, not counted as zeros.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence


def recall_at_k(retrieved: Sequence[Hashable], positives: Iterable[Hashable], k: int) -> float:
    """Fraction of ``positives`` among the first ``k`` of ``retrieved``."""
    pos = set(positives)
    if not pos:
        raise ValueError("recall is undefined without positive premises")
    return len(pos.intersection(retrieved[:k])) / len(pos)


def reciprocal_rank(retrieved: Sequence[Hashable], positives: Iterable[Hashable]) -> float:
    """1 / (1-based rank of the first positive in ``retrieved``), or 0 when there is none."""
    pos = set(positives)
    for rank, item in enumerate(retrieved, start=1):
        if item in pos:
            return 1.0 / rank
    return 0.0


def retrieval_metrics(
    rankings: Iterable[tuple[Sequence[Hashable], Iterable[Hashable]]], ks: Sequence[int] = (1, 10)
) -> dict[str, float]:
    """Average ``R@k`` for each k and ``MRR`` over ``(ranking, positives)`` pairs.

    Pairs with no positives are skipped (as in ReProver); ``count`` says how many were scored.
    """
    totals = {f"R@{k}": 0.0 for k in ks}
    rr = 0.0
    n = 0
    for retrieved, positives in rankings:
        pos = set(positives)
        if not pos:
            continue
        retrieved = list(retrieved)
        for k in ks:
            totals[f"R@{k}"] += recall_at_k(retrieved, pos, k)
        rr += reciprocal_rank(retrieved, pos)
        n += 1
    out = {name: (v / n if n else 0.0) for name, v in totals.items()}
    out["MRR"] = rr / n if n else 0.0
    out["count"] = n
    return out
