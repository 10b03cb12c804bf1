"""Retriever queries: encode 1,000 real proof states and return the top 10 accessible premises.

Same corpus, encoder and cut (256 tokens) as ``retrieval_index``; the index is built untimed.
Timed: the queries, 64 at a time, each asked from a file of the 50-file import chain (at its
end, so the file's own premises count): leantrain ``encode_contexts`` + ``PremiseIndex.search``;
LeanDojo-v2 ``PremiseRetriever.retrieve`` (its encode + ``get_nearest_premises``). Each side
formats the state as it does (leantrain: goal first). Items: queries answered.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

if __package__:
    from . import Benchmark
    from ._retrieval_data import prepare

K = 10
CHUNK = 64
END = (1_000_000, 1)  # a position after every premise of the file


def _queries(inputs: dict[str, Any]) -> list[dict[str, str]]:
    return json.loads(Path(inputs["queries"]).read_text(encoding="utf-8"))


def ours(inputs: dict[str, Any], timer: Any) -> int:
    from leantrain.retrieval import Corpus, PremiseRetriever

    model = PremiseRetriever.from_pretrained(
        inputs["model"], premise_max_len=inputs["max_len"], context_max_len=inputs["max_len"]
    )
    index = model.index_corpus(Corpus.from_jsonl(inputs["corpus"]), batch_size=inputs["batch_size"])
    queries = _queries(inputs)
    answered = 0
    with timer:
        for s in range(0, len(queries), CHUNK):
            chunk = queries[s : s + CHUNK]
            q = model.encode_contexts([c["state"] for c in chunk], batch_size=CHUNK)
            ids, _ = index.search(q, [c["path"] for c in chunk], K, [END] * len(chunk))
            answered += sum(len(row) == K for row in ids)
    return answered


def ld2(inputs: dict[str, Any], timer: Any) -> int:
    import _ld2_patches

    _ld2_patches.apply()
    import torch
    from lean_dojo_v2.lean_agent.retrieval.model import PremiseRetriever
    from lean_dojo_v2.lean_dojo import Pos

    model = PremiseRetriever.load_hf(inputs["model"], inputs["max_len"], "cpu")
    model.load_corpus(inputs["corpus"])
    model.reindex_corpus(batch_size=inputs["batch_size"])
    queries = _queries(inputs)
    answered = 0
    with timer, torch.no_grad():
        for s in range(0, len(queries), CHUNK):
            chunk = queries[s : s + CHUNK]
            premises, _ = model.retrieve(
                [c["state"] for c in chunk],
                [c["path"] for c in chunk],
                [f"Bench.q{s + i}" for i in range(len(chunk))],
                [Pos(*END)] * len(chunk),
                K,
            )
            answered += sum(len(row) == K for row in premises)
    return answered


if __package__:
    BENCH = Benchmark(
        name="query",
        title="retriever queries (encode + top-10), 1,000 states over 10k premises",
        unit="queries/s",
        prepare=prepare,
        script=Path(__file__),
        order=50,
        target=3.0,
    )

if __name__ == "__main__":
    import os

    os.environ.setdefault("LOGURU_LEVEL", "WARNING")
    from _side import main

    main({"ours": ours, "ld2": ld2})
    sys.exit(0)
