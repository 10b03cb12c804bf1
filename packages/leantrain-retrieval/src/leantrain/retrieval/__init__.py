"""leantrain.retrieval: a dense premise retriever (ReProver-style) trained lifelong with
PyTorch Lightning — model, data module, EWC, premise index, R@k/MRR evaluation, CLI."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from leantrain.retrieval.accessible import ImportGraph
from leantrain.retrieval.bm25 import BM25Ranker
from leantrain.retrieval.corpus import Corpus, PremiseEntry
from leantrain.retrieval.datamodule import RetrievalDataModule, sample_negatives
from leantrain.retrieval.encoder import build_tiny_encoder
from leantrain.retrieval.evaluation import evaluate_retriever, format_table
from leantrain.retrieval.ewc import EWC
from leantrain.retrieval.examples import RetrievalExample, load_examples
from leantrain.retrieval.index import PremiseIndex
from leantrain.retrieval.losses import info_nce_loss, mse_similarity_loss
from leantrain.retrieval.metrics import recall_at_k, reciprocal_rank, retrieval_metrics
from leantrain.retrieval.premise_retriever import PremiseRetriever
from leantrain.retrieval.retrieval_config import RetrievalConfig
from leantrain.retrieval.retrieval_trainer import RetrievalTrainer, resolve_model_dir

try:
    __version__ = _version("leantrain-retrieval")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "EWC",
    "BM25Ranker",
    "Corpus",
    "ImportGraph",
    "PremiseEntry",
    "PremiseIndex",
    "PremiseRetriever",
    "RetrievalConfig",
    "RetrievalDataModule",
    "RetrievalExample",
    "RetrievalTrainer",
    "build_tiny_encoder",
    "evaluate_retriever",
    "format_table",
    "info_nce_loss",
    "load_examples",
    "mse_similarity_loss",
    "recall_at_k",
    "reciprocal_rank",
    "resolve_model_dir",
    "retrieval_metrics",
    "sample_negatives",
]
