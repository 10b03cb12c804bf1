"""Benchmark: premise indexing, retrieval and training of the tiny retriever on CPU.

Corpora of 10k and 100k premises of real Lean text (the goals of the proof states in
``../shared/data``, cycled with distinct names over 50 chained files, as in
``anchors/_retrieval_data.py``; a missing data file is an error); queries are real proof
states. The tiny ByT5-style encoder (d_model 64, 2 layers), 256-token cut, one torch thread.
References are measured in the same run (ratios are throughput ratios, > 1 = faster):

* indexing — ``PremiseRetriever.encode_texts`` (tokenized once, length-sorted token-budget
  batches, inference mode, bf16 where native) vs the same encoder on batches of 64 in corpus
  order padded to their longest row (LeanDojo-v2's ``reindex_corpus`` loop), on a 5k slice;
* retrieval — ``PremiseIndex.search`` (exact torch top-k over the accessible premises) vs a
  brute-force numpy full sort of the same scores, and BM25 (``bm25s``) on the same queries;
* training — optimizer steps/s of ``RetrievalTrainer`` (batch 8, 3 negatives, MSE loss) on a
  small synthetic export (``leantrain_tools.synthetic_retrieval``).

The comparison with LeanDojo-v2 itself is ``tools/bench/anchor.py --index --query``.

Usage: ``uv run python tools/bench/retrieval.py [sizes …]`` (default ``10000 100000``).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def bench_size(n: int, model, rng: random.Random) -> None:
    from anchors._retrieval_data import goals, real_states, write_corpus
    from leantrain.retrieval import Corpus
    from leantrain.retrieval.bm25 import BM25Ranker

    states = real_states()
    with tempfile.TemporaryDirectory() as tmp:
        write_corpus(Path(tmp) / "corpus.jsonl", goals(states), n)
        corpus = Corpus.from_jsonl(Path(tmp) / "corpus.jsonl")
    texts = corpus.texts()
    # indexing: a reference slice in corpus order (unsorted batches), then the whole corpus sorted
    ref_n = min(n, 5000)
    bs = 64

    def unsorted():
        with torch.inference_mode():
            model.eval()
            for s in range(0, ref_n, bs):
                enc = model.tokenizer(
                    texts[s : s + bs],
                    padding="longest",
                    truncation=True,
                    max_length=model.args.premise_max_len,
                    return_tensors="pt",
                )
                model(enc["input_ids"], enc["attention_mask"])

    _, t_ref = _timed(unsorted)
    index, t_idx = _timed(lambda: model.index_corpus(corpus, batch_size=bs))
    ips, ref_ips = n / t_idx, ref_n / t_ref
    print(
        f"[{n:>6} premises] indexing: {ips:8.0f} premises/s  (unsorted batches: {ref_ips:8.0f}/s, ratio {ips / ref_ips:.2f}x)"
    )

    # retrieval: 200 queries from files across the import chain
    nq = 200
    files = sorted(corpus.file_premises)
    paths = [rng.choice(files) for _ in range(nq)]
    states = rng.sample(states, nq)
    q, t_enc = _timed(lambda: model.encode_contexts(states))
    _, t_search = _timed(lambda: index.search(q, paths, 10))
    emb = index.embeddings.numpy()
    qn = q.numpy()

    def numpy_bruteforce():
        out = []
        for row, path in zip(qn, paths):
            acc = corpus.accessible_ids(path)
            scores = emb[acc] @ row
            out.append(acc[np.argsort(-scores)[:10]].tolist())
        return out

    _, t_np = _timed(numpy_bruteforce)
    ranker, t_bm_idx = _timed(lambda: BM25Ranker(corpus))
    _, t_bm = _timed(lambda: [ranker.rank(s, p, 10) for s, p in zip(states, paths)])
    qps = nq / t_search
    print(
        f"[{n:>6} premises] retrieval: {qps:8.0f} queries/s search only, {nq / (t_search + t_enc):6.0f}/s with query encoding  "
        f"(numpy full sort: {nq / t_np:6.0f}/s, ratio {qps / (nq / t_np):.2f}x; BM25: {nq / t_bm:6.0f}/s, ratio {qps / (nq / t_bm):.2f}x; "
        f"BM25 indexing {n / t_bm_idx:.0f} premises/s)"
    )


def bench_training(steps: int = 30) -> None:
    from leantrain.retrieval import RetrievalConfig, RetrievalTrainer
    from leantrain_tools.synthetic_retrieval import write_synthetic_export

    with tempfile.TemporaryDirectory() as tmp:
        data = write_synthetic_export(Path(tmp) / "d", num_premises=200, num_theorems=400, seed=0)
        cfg = RetrievalConfig(
            model_name="tiny",
            output_dir=str(Path(tmp) / "run"),
            context_max_len=128,
            premise_max_len=128,
            warmup_steps=0,
            trainer={
                "max_steps": steps,
                "accelerator": "cpu",
                "devices": 1,
                "val_check_interval": 10_000,
                "log_every_n_steps": 50,
            },
        )
        t = time.perf_counter()
        RetrievalTrainer(cfg).train(data)
        total = time.perf_counter() - t
    print(
        f"[training] {steps} steps (batch 8, 3 negatives, incl. setup and 1 validation) in {total:.1f}s: {steps / total:.2f} steps/s"
    )


def main() -> None:
    import logging

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import warnings

    warnings.filterwarnings("ignore")
    logging.getLogger("lightning").setLevel(logging.ERROR)
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    from leantrain.retrieval import PremiseRetriever

    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 100_000]
    torch.set_num_threads(1)
    print(f"torch threads: {torch.get_num_threads()}")
    torch.manual_seed(0)
    model = PremiseRetriever.from_name(
        "tiny", tiny_d_model=64, tiny_layers=2, context_max_len=256, premise_max_len=256
    )
    rng = random.Random(0)
    for n in sizes:
        bench_size(n, model, rng)
    bench_training()


if __name__ == "__main__":
    main()
