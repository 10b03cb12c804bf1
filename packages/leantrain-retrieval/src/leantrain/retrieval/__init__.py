"""leantrain.retrieval: a dense premise retriever (ReProver-style) trained lifelong with
PyTorch Lightning — model, data module, EWC, premise index, R@k/MRR evaluation, CLI.

>>> from leantrain.retrieval import RetrievalConfig, RetrievalTrainer       # doctest: +SKIP
>>> RetrievalTrainer(RetrievalConfig(model_name="tiny", trainer={"max_steps": 20})).train("export_dir")

Names are imported lazily (PEP 562) so that ``leantrain.retrieval.cli``, which every
``leantrain`` invocation loads, does not pull in torch, transformers and Lightning.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from typing import Any

_LAZY = {
    "ImportGraph": "accessible",
    "BM25Ranker": "bm25",
    "Corpus": "corpus",
    "PremiseEntry": "corpus",
    "RetrievalDataModule": "datamodule",
    "sample_negatives": "datamodule",
    "build_tiny_encoder": "encoder",
    "evaluate_retriever": "evaluation",
    "format_table": "evaluation",
    "EWC": "ewc",
    "RetrievalExample": "examples",
    "load_examples": "examples",
    "PremiseIndex": "index",
    "info_nce_loss": "losses",
    "mse_similarity_loss": "losses",
    "recall_at_k": "metrics",
    "reciprocal_rank": "metrics",
    "retrieval_metrics": "metrics",
    "PremiseRetriever": "premise_retriever",
    "RetrievalConfig": "retrieval_config",
    "RetrievalTrainer": "retrieval_trainer",
    "resolve_model_dir": "retrieval_trainer",
}

try:
    __version__ = _version("leantrain-retrieval")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'leantrain.retrieval' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"leantrain.retrieval.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
