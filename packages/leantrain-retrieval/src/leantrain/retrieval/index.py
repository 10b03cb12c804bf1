"""A premise index: the corpus's embeddings, saved as safetensors + JSON, searched exactly.

The index records a fingerprint of the encoder's weights and of the corpus; an index on disk
is reused only when both match, so a changed encoder re-encodes and a stale index is never
searched by accident. Search is an exact top-k in torch restricted to the premises accessible
from the query's file; ``use_faiss=True`` searches with a flat faiss index instead (extra
``leantrain-retrieval[faiss]``), for corpora where a dense matmul per query is too slow.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from leantrain.core.errors import CheckpointError, require_package
from leantrain.core.schemas import read_json
from leantrain.retrieval.corpus import Corpus, PremiseEntry

log = logging.getLogger("leantrain.retrieval")

INDEX_TENSORS = "index.safetensors"
INDEX_JSON = "index.json"
_QUERY_CHUNK = 256  # queries scored at once: bounds the (queries × premises) score matrix
_MASK_CACHE = 4096  # accessibility masks kept (one per file and position seen)


def encoder_fingerprint(retriever: Any) -> str:
    """SHA-256 of the encoder's weights, tokenizer class, max premise length and pooling."""
    h = hashlib.sha256()
    h.update(f"{type(retriever.tokenizer).__name__}|{retriever.args.premise_max_len}".encode())
    pooling = (getattr(retriever, "pooling", "mean"), getattr(retriever, "normalize", True))
    if pooling != ("mean", True):  # the default adds nothing: indexes saved before stay valid
        h.update(f"|{pooling[0]}|{pooling[1]}".encode())
    for name, t in sorted(retriever.encoder.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def corpus_fingerprint(corpus: Corpus) -> str:
    """SHA-256 of the corpus's premises (path, name, positions, code)."""
    return hashlib.sha256(corpus.fingerprint_text().encode("utf-8")).hexdigest()


class PremiseIndex:
    """Embeddings of every corpus premise plus the retriever that encodes queries."""

    def __init__(
        self,
        embeddings: torch.Tensor,
        corpus: Corpus,
        fingerprint: dict[str, str],
        retriever: Any = None,
        *,
        use_faiss: bool = False,
    ) -> None:
        if embeddings.shape[0] != len(corpus):
            raise CheckpointError(
                f"the index holds {embeddings.shape[0]} embeddings but the corpus has {len(corpus)} premises",
                hint="rebuild the index for this corpus (leantrain retrieval index)",
            )
        self.embeddings = embeddings.float().contiguous()
        self.corpus = corpus
        self.fingerprint = fingerprint
        self.retriever = retriever
        self._faiss: Any = None
        self._masks: dict[tuple[str, tuple[int, ...] | None], torch.Tensor | None] = {}
        if use_faiss:
            self.enable_faiss()

    # -- building / persistence ---------------------------------------------------------------
    @classmethod
    def build(
        cls,
        retriever: Any,
        corpus: Corpus,
        *,
        cache_dir: str | Path | None = None,
        batch_size: int | None = None,
    ) -> PremiseIndex:
        """Encode ``corpus``, or reuse ``cache_dir``'s index when its fingerprint matches."""
        fp = {"encoder": encoder_fingerprint(retriever), "corpus": corpus_fingerprint(corpus)}
        if cache_dir is not None and (Path(cache_dir) / INDEX_JSON).is_file():
            meta = read_json(Path(cache_dir) / INDEX_JSON)
            if meta.get("fingerprint") == fp:
                log.info("premise index in %s is up to date: not re-encoding", cache_dir)
                return cls.load(cache_dir, corpus, retriever)
            log.info(
                "premise index in %s is stale (encoder or corpus changed): re-encoding", cache_dir
            )
        emb = retriever.encode_texts(
            corpus.texts(), max_len=retriever.args.premise_max_len, batch_size=batch_size
        )
        index = cls(emb, corpus, fp, retriever)
        if cache_dir is not None:
            index.save(cache_dir)
        return index

    def save(self, directory: str | Path) -> Path:
        """Write ``index.safetensors`` (embeddings), ``index.json`` and the ``.leantrain``
        marker of an index (what ``leantrain retrieval index`` / ``retrieve --index`` accept),
        into a new or empty directory or over an earlier index: never a file, nor a directory
        of other files (one :class:`ConfigError` line)."""
        from leantrain.core.atomic import atomic_write_bytes, atomic_write_json
        from leantrain.core.output_dir import check_output_dir, write_marker
        from safetensors.torch import save

        directory = check_output_dir(directory, kind="index", flag="index directory")
        directory.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(directory / INDEX_TENSORS, save({"embeddings": self.embeddings}))
        atomic_write_json(
            directory / INDEX_JSON,
            {
                "format": "leantrain-premise-index",
                "version": 1,
                "fingerprint": self.fingerprint,
                "num_premises": len(self.corpus),
                "dim": int(self.embeddings.shape[1]),
                "premises": [[p.path, p.full_name] for p in self.corpus.premises],
            },
            indent=None,
        )
        write_marker(directory, "index")
        return directory

    @classmethod
    def load(
        cls,
        directory: str | Path,
        corpus: Corpus,
        retriever: Any = None,
        *,
        use_faiss: bool = False,
    ) -> PremiseIndex:
        """Reload an index; it must match ``corpus`` (and ``retriever``'s weights if given)."""
        from safetensors.torch import load_file

        directory = Path(directory)
        if not (directory / INDEX_JSON).is_file() or not (directory / INDEX_TENSORS).is_file():
            raise CheckpointError(
                f"{directory}: no premise index ({INDEX_JSON} + {INDEX_TENSORS})",
                hint="build one with: leantrain retrieval index",
            )
        meta = read_json(directory / INDEX_JSON)
        fp = meta.get("fingerprint", {})
        if fp.get("corpus") != corpus_fingerprint(corpus):
            raise CheckpointError(
                f"{directory}: the index was built for a different corpus ({meta.get('num_premises')} premises; this corpus has {len(corpus)})",
                hint="rebuild the index for this corpus (leantrain retrieval index)",
            )
        if retriever is not None and fp.get("encoder") != encoder_fingerprint(retriever):
            raise CheckpointError(
                f"{directory}: the index was built with a different encoder",
                hint="rebuild the index with this model (leantrain retrieval index)",
            )
        emb = load_file(directory / INDEX_TENSORS)["embeddings"]
        if retriever is not None and emb.shape[1] != retriever.embedding_dim:
            raise CheckpointError(
                f"{directory}: index dimension {emb.shape[1]} != encoder dimension {retriever.embedding_dim}"
            )
        return cls(emb, corpus, fp, retriever, use_faiss=use_faiss)

    # -- search -------------------------------------------------------------------------------
    def enable_faiss(self) -> None:
        """Search with an exact inner-product faiss index (``leantrain-retrieval[faiss]``)."""
        require_package(
            "faiss", extra="faiss", dist="leantrain-retrieval", feature="faiss premise search"
        )
        import faiss

        index = faiss.IndexFlatIP(self.embeddings.shape[1])
        index.add(self.embeddings.numpy())
        self._faiss = index

    def search(
        self,
        queries: torch.Tensor,
        file_paths: Sequence[str],
        k: int,
        positions: Sequence[Sequence[int] | None] | None = None,
    ) -> tuple[list[list[int]], list[list[float]]]:
        """Top-``k`` accessible premise indices and scores for each query embedding."""
        positions = positions or [None] * len(file_paths)
        if self._faiss is not None:
            return self._search_faiss(queries, file_paths, k, positions)
        ids_out: list[list[int]] = []
        scores_out: list[list[float]] = []
        n = len(self.corpus)
        for s in range(0, len(file_paths), _QUERY_CHUNK):
            scores = queries[s : s + _QUERY_CHUNK].float() @ self.embeddings.t()
            masks = [
                self._mask(p, pos)
                for p, pos in zip(file_paths[s : s + _QUERY_CHUNK], positions[s : s + _QUERY_CHUNK])
            ]
            if any(m is not None for m in masks):  # one masked top-k for the whole chunk
                full = torch.ones(n, dtype=torch.bool)
                scores.masked_fill_(
                    ~torch.stack([full if m is None else m for m in masks]), float("-inf")
                )
            vals, idx = scores.topk(min(k, n), dim=1)
            for vrow, irow in zip(vals.tolist(), idx.tolist()):
                keep = [(i, v) for i, v in zip(irow, vrow) if v != float("-inf")]
                ids_out.append([i for i, _ in keep])
                scores_out.append([v for _, v in keep])
        return ids_out, scores_out

    def _mask(self, path: str, pos: Sequence[int] | None) -> torch.Tensor | None:
        """The accessibility mask of a query (``None``: everything), cached per file and position."""
        key = (path, None if pos is None else tuple(pos))
        if key not in self._masks:
            if len(self._masks) >= _MASK_CACHE:
                self._masks.clear()
            acc = self.corpus.accessible_ids(path, pos)
            if len(acc) == len(self.corpus):
                self._masks[key] = None
            else:
                m = torch.zeros(len(self.corpus), dtype=torch.bool)
                m[torch.from_numpy(acc)] = True
                self._masks[key] = m
        return self._masks[key]

    def _search_faiss(
        self, queries: torch.Tensor, file_paths: Sequence[str], k: int, positions: Sequence[Any]
    ) -> tuple[list[list[int]], list[list[float]]]:
        n = len(self.corpus)
        fetch = min(n, max(4 * k, 64))
        ids_out: list[list[int]] = []
        scores_out: list[list[float]] = []
        while True:  # widen the search until every query has k accessible hits
            D, I = self._faiss.search(queries.float().numpy(), fetch)  # noqa: E741
            ids_out, scores_out, short = [], [], False
            for drow, irow, path, pos in zip(D, I, file_paths, positions):
                mask = self.corpus.accessible_mask(path, pos)
                keep = [(int(i), float(d)) for d, i in zip(drow, irow) if i >= 0 and mask[i]][:k]
                short |= len(keep) < min(k, int(mask.sum())) and fetch < n
                ids_out.append([i for i, _ in keep])
                scores_out.append([d for _, d in keep])
            if not short:
                return ids_out, scores_out
            fetch = min(n, fetch * 4)

    def retrieve(
        self, state: str, file_path: str, k: int = 10, *, position: Sequence[int] | None = None
    ) -> list[tuple[PremiseEntry, float]]:
        """The ``k`` best premises accessible from ``file_path`` (before ``position``) for ``state``."""
        if self.retriever is None:
            raise CheckpointError(
                "this index has no retriever to encode queries", hint="load it with a retriever"
            )
        q = self.retriever.encode_contexts([state])  # formatted as in training
        ids, scores = self.search(q, [file_path], k, [position])
        return [(self.corpus.premises[i], s) for i, s in zip(ids[0], scores[0])]
