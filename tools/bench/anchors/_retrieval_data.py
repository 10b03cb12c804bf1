"""Inputs of the two retriever benchmarks: a 10k-premise corpus of real Lean text, queries,
and one tiny ByT5-style encoder directory that both sides load.

Neither shared data set ships premise *code* (LeanDojo Benchmark 4's corpus is not included;
mathlib-sample has no annotations), so the corpus is made of the real Lean propositions there
are: the goal of every proof state of leandojo-benchmark-4-head and mathlib-sample (2,247
goals), each written as ``theorem <name> : <goal>`` (40 to 1,500 bytes, median 74, 4 % over
the 256-token cut: the long tail of real statements), cycled with distinct names to
``PREMISES`` premises in 50 files, each importing the one before (a chain, so the accessible
set grows along it). Queries are whole proof states (hypotheses and goal) of the same data,
each asked from a random file of the chain.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

from . import LB4, MATHLIB, portable_tokenizer, require

PREMISES = int(os.environ.get("LEANTRAIN_BENCH_PREMISES", "10000"))
FILES = 50
QUERIES = 1_000
MAX_LEN = 256  # premise / context tokens (bytes, ByT5)
ENCODER = {"d_model": 64, "num_layers": 2}


def real_states() -> list[str]:
    """Every ``state_before`` of the two shared data sets, in file order."""
    out = []
    for path in (require(LB4), require(MATHLIB)):
        for thm in json.loads(path.read_text(encoding="utf-8")):
            out += [t["state_before"] for t in thm["traced_tactics"] if t["state_before"].strip()]
    return out


def goals(states: list[str]) -> list[str]:
    """The goal (after ``⊢``) of every goal of every state."""
    return [g.split("⊢", 1)[1].strip() for s in states for g in s.split("\n\n") if "⊢" in g]


def write_corpus(path: Path, props: list[str], n: int = PREMISES, files: int = FILES) -> None:
    """``corpus.jsonl`` (LeanDojo format) of ``n`` premises over ``files`` chained files."""
    per_file = -(-n // files)
    lines = []
    for f in range(files):
        premises = []
        for j in range(per_file):
            i = f * per_file + j
            if i >= n:
                break
            name = f"Bench.F{f}.p{i}"
            code = f"theorem {name} : {props[i % len(props)]}"
            premises.append(
                {
                    "full_name": name,
                    "code": code,
                    "start": [j + 1, 1],
                    "end": [j + 1, 80],
                    "kind": "theorem",
                }
            )
        imports = [f"Bench/F{f - 1}.lean"] if f else []
        lines.append(
            json.dumps({"path": f"Bench/F{f}.lean", "imports": imports, "premises": premises})
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def prepare(work: Path, args: Any) -> dict[str, Any]:
    """Corpus, queries and the encoder directory under ``work``."""
    from leantrain.retrieval.encoder import build_tiny_encoder

    states = real_states()
    corpus = work / "corpus.jsonl"
    write_corpus(corpus, goals(states))
    rng = random.Random(0)
    queries = [
        {"state": states[i % len(states)], "path": f"Bench/F{rng.randrange(1, FILES)}.lean"}
        for i in rng.sample(range(len(states)), min(QUERIES, len(states)))
    ]
    (work / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    import torch

    torch.manual_seed(0)
    encoder, tokenizer = build_tiny_encoder(**ENCODER)
    model_dir = work / "encoder"
    encoder.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    portable_tokenizer(model_dir)
    return {
        "corpus": str(corpus),
        "queries": str(work / "queries.json"),
        "model": str(model_dir),
        "max_len": MAX_LEN,
        "batch_size": 64,
    }
