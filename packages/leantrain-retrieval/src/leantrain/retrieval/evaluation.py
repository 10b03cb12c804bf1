"""Evaluate a retriever on an export's test splits: R@1, R@10, MRR, beside BM25's.

Both rank only the premises accessible from the theorem (:meth:`Corpus.accessible_ids`), so a
positive premise outside that set can never be retrieved. Each split's result therefore also
carries ``reachable_fraction``: the fraction of positive premises (summed over the scored
tactics) that are accessible at all — R@k cannot exceed it. A low value means the corpus's
accessibility is wrong (e.g. imports taken as empty), not that the retriever is weak.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError
from leantrain.retrieval.bm25 import BM25Ranker
from leantrain.retrieval.corpus import Corpus
from leantrain.retrieval.examples import RetrievalExample, load_examples
from leantrain.retrieval.index import PremiseIndex
from leantrain.retrieval.metrics import retrieval_metrics

log = logging.getLogger("leantrain.retrieval")

SPLITS = ("random", "novel_premises")


def rank_examples(
    index: PremiseIndex, examples: list[RetrievalExample], k: int, batch_size: int = 64
) -> list[list[int]]:
    """The dense retriever's top-``k`` accessible premises for each example."""
    retriever = index.retriever
    out: list[list[int]] = []
    for s in range(0, len(examples), batch_size):
        chunk = examples[s : s + batch_size]
        q = retriever.encode_contexts([e.context for e in chunk], batch_size=batch_size)
        ids, _ = index.search(q, [e.file_path for e in chunk], k, [e.theorem_pos for e in chunk])
        out.extend(ids)
    return out


def reachable_positives(corpus: Corpus, examples: list[RetrievalExample]) -> tuple[int, int]:
    """``(positives accessible from their theorem, all positives)`` over ``examples``."""
    reachable = total = 0
    for e in examples:
        total += len(e.positives)
        reachable += sum(corpus.is_accessible(p, e.file_path, e.theorem_pos) for p in e.positives)
    return reachable, total


def evaluate_retriever(
    retriever: Any,
    data_dir: str | Path,
    *,
    splits: tuple[str, ...] = SPLITS,
    split_file: str = "test.json",
    k: int = 10,
    bm25: bool = True,
    corpus: Corpus | None = None,
    index_dir: str | Path | None = None,
    strict: bool = True,
) -> dict[str, dict[str, dict[str, float]]]:
    """``{split: {"retriever": {R@1, R@10, MRR, count, reachable_fraction}, "bm25": {...}}}`` on
    each test split.

    ReProver's definitions (see :mod:`leantrain.retrieval.metrics`); tactics without a positive
    premise are skipped. ``reachable_fraction`` (the same for both methods) is the fraction of
    positives accessible from their theorem (:func:`reachable_positives`); a split whose value
    is below 0.99 is logged as a warning. The corpus is indexed once (reused from ``index_dir`` when unchanged).
    """
    data_dir = Path(data_dir)
    corpus = corpus or Corpus.from_export(data_dir)
    index = retriever.index_corpus(corpus, cache_dir=index_dir)
    ranker = BM25Ranker(corpus) if bm25 else None
    results: dict[str, dict[str, dict[str, float]]] = {}
    targets = {split: data_dir / split / split_file for split in splits}
    if not any(p.is_file() for p in targets.values()):
        # a benchmark-style directory of bare split files (e.g. test_head.json): score each
        targets = {p.stem: p for p in sorted(data_dir.glob("*.json")) if p.name != "metadata.json"}
    for split, path in targets.items():
        if not path.is_file():
            log.info("no %s: skipping that split", path)
            continue
        examples = load_examples(path, corpus, strict=strict)
        positives = [e.positives for e in examples]
        dense = rank_examples(index, examples, k, retriever.args.eval_batch_size)
        reachable, total = reachable_positives(corpus, examples)
        fraction = reachable / total if total else 1.0
        if fraction < 0.99:
            log.warning(
                "%s: only %d of %d positive premises (%.1f%%) are accessible from their theorem; "
                "R@k cannot exceed that (are the corpus's imports right?)",
                path,
                reachable,
                total,
                100 * fraction,
            )
        results[split] = {"retriever": retrieval_metrics(zip(dense, positives), ks=(1, k))}
        if ranker is not None:
            sparse = [ranker.rank(e.context, e.file_path, k, e.theorem_pos) for e in examples]
            results[split]["bm25"] = retrieval_metrics(zip(sparse, positives), ks=(1, k))
        for metrics in results[split].values():
            metrics["reachable_fraction"] = fraction
    if not results:
        raise DataError(
            data_dir,
            f"no split with a {split_file} ({', '.join(splits)})",
            hint="point --data at an export directory",
        )
    return results


def format_table(results: dict[str, dict[str, dict[str, float]]]) -> str:
    """A plain-text table: one row per (split, method), with the reachable-positive fraction."""
    lines = [
        f"{'split':<16}{'method':<11}{'R@1':>8}{'R@10':>8}{'MRR':>8}{'tactics':>9}{'reachable':>11}"
    ]
    for split, methods in results.items():
        for method, m in methods.items():
            r10 = next((v for key, v in m.items() if key.startswith("R@") and key != "R@1"), 0.0)
            reach = m.get("reachable_fraction", float("nan"))
            lines.append(
                f"{split:<16}{method:<11}{m['R@1']:>8.4f}{r10:>8.4f}{m['MRR']:>8.4f}"
                f"{int(m['count']):>9}{reach:>11.4f}"
            )
    return "\n".join(lines)
