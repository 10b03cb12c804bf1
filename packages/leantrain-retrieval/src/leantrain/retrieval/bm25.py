"""A BM25 baseline (``bm25s``) ranking the same accessible premises as the dense retriever."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from leantrain.retrieval.corpus import Corpus

_TOKEN = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)


def lean_tokens(text: str) -> list[str]:
    """Lower-cased words of Lean text; names split on ``.`` and ``_`` (``Nat.mul_comm`` → nat, mul, comm)."""
    return [t.lower() for t in _TOKEN.findall(text)]


class BM25Ranker:
    """BM25 over the serialized premises of a corpus."""

    def __init__(self, corpus: Corpus) -> None:
        import bm25s

        self.corpus = corpus
        docs = [lean_tokens(t) or ["_empty_"] for t in corpus.texts()]
        self.bm25 = bm25s.BM25()
        self.bm25.index(docs, show_progress=False)
        self.vocab = set(self.bm25.vocab_dict)

    def rank(
        self, query: str, file_path: str, k: int, position: Sequence[int] | None = None
    ) -> list[int]:
        """Indices of the top-``k`` premises accessible from ``file_path`` for ``query``."""
        tokens = [t for t in lean_tokens(query) if t in self.vocab]
        acc = self.corpus.accessible_ids(file_path, position)
        if not tokens:
            return acc[:k].tolist()
        scores = np.asarray(self.bm25.get_scores(tokens))[acc]
        top = np.argsort(-scores, kind="stable")[:k]
        return acc[top].tolist()
