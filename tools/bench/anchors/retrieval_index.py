"""Retriever indexing: encode a 10k-premise corpus of real Lean text (``_retrieval_data``).

Both sides load the same tiny ByT5-style encoder directory (d_model 64, 2 layers), premises
cut at 1,024 tokens, batches of 64, then — timed — load ``corpus.jsonl`` and index it:
leantrain ``Corpus.from_jsonl`` + ``PremiseRetriever.index_corpus``; LeanDojo-v2
``PremiseRetriever.load_corpus`` + ``reindex_corpus`` (its own corpus, DAG and encoding loop).
Items: premises indexed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if __package__:
    from . import Benchmark
    from ._retrieval_data import prepare


def ours(inputs: dict[str, Any], timer: Any) -> int:
    from leantrain.retrieval import Corpus, PremiseRetriever

    model = PremiseRetriever.from_pretrained(
        inputs["model"], premise_max_len=inputs["max_len"], context_max_len=inputs["max_len"]
    )
    with timer:
        corpus = Corpus.from_jsonl(inputs["corpus"])
        index = model.index_corpus(corpus, batch_size=inputs["batch_size"])
    return int(index.embeddings.shape[0])


def ld2(inputs: dict[str, Any], timer: Any) -> int:
    import _ld2_patches

    _ld2_patches.apply()
    from lean_dojo_v2.lean_agent.retrieval.model import PremiseRetriever

    model = PremiseRetriever.load_hf(inputs["model"], inputs["max_len"], "cpu")
    with timer:
        model.load_corpus(inputs["corpus"])
        model.reindex_corpus(batch_size=inputs["batch_size"])
    return int(model.corpus_embeddings.shape[0])


if __package__:
    BENCH = Benchmark(
        name="index",
        title="retriever indexing, 10k premises of real Lean text",
        unit="premises/s",
        prepare=prepare,
        script=Path(__file__),
        order=40,
        target=3.0,
    )

if __name__ == "__main__":
    import os

    os.environ.setdefault("LOGURU_LEVEL", "WARNING")
    from _side import main

    main({"ours": ours, "ld2": ld2})
    sys.exit(0)
