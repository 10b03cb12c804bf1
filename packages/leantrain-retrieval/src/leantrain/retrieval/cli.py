"""``leantrain retrieval train|evaluate|index|retrieve``.

This module is imported by every ``leantrain`` invocation, so it imports nothing heavy at
module level: torch, transformers and Lightning load inside the subcommands.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from leantrain.core.cli import Command
from leantrain.core.errors import ConfigError

USAGE = """usage: leantrain retrieval {train,evaluate,index,retrieve} [OPTIONS]

  train     train the premise retriever (--model tiny --data EXPORT_DIR --output-dir RUN)
            or lifelong (--database lt.db [--repos URL@COMMIT ...]); --help lists every option;
            Lightning Trainer arguments are flags too (--max-steps 20 --devices 2 --strategy ddp)
  evaluate  R@1, R@10 and MRR on the random and novel_premises test splits, beside BM25
            (--model RUN_OR_MODEL_DIR --data EXPORT_DIR)
  index     encode a corpus into a premise index (--model M --data EXPORT_DIR --output INDEX_DIR)
  retrieve  rank the premises accessible from a file for a proof state
            (--model M --data EXPORT_DIR --state TEXT --file PATH [-k 10] [--index INDEX_DIR])
"""


def _quiet() -> None:
    """Our progress lines on stderr; the engines' banners and deprecation chatter off."""
    import logging
    import warnings

    ours = logging.getLogger("leantrain.retrieval")
    if not ours.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        ours.addHandler(handler)
        ours.setLevel(logging.INFO)
    import lightning.pytorch  # noqa: F401  (it resets its loggers' levels on import: import it first)

    for name in ("lightning", "lightning.pytorch", "lightning.fabric", "bm25s"):
        logging.getLogger(name).setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", message=".*does not have many workers.*")
    warnings.filterwarnings("ignore", message=".*LeafSpec.*")
    warnings.filterwarnings("ignore", message=".*smaller than the logging interval.*")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except Exception:  # pragma: no cover
        pass


def _common(prog: str) -> argparse.ArgumentParser:
    """The parser of ``evaluate`` / ``index`` / ``retrieve`` with their common options (core's
    argparse, whose errors are one line)."""
    from leantrain.core.command import ArgumentParser

    p = ArgumentParser(prog=f"leantrain retrieval {prog}")
    p.add_argument(
        "--model", required=True, help="a run directory, a saved retriever directory, or 'tiny'"
    )
    p.add_argument(
        "--data", required=True, help="an export directory (random/, novel_premises/, corpus.jsonl)"
    )
    p.add_argument("--batch-size", type=_positive, default=64, help="encoding batch size")
    p.add_argument(
        "--allow-code",
        action="store_true",
        help="allow a 'module:attr' encoder builder that is not registered (trust it first; "
        "also: LEANTRAIN_ALLOW_CODE=1)",
    )
    return p


#: The largest ``-k``: far beyond any corpus, small enough to allocate.
MAX_K = 1_000_000


def _positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    if value > MAX_K:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_K}, got {value}")
    return value


def _load_model(path: str, batch_size: int, allow_code: bool = False):
    from leantrain.retrieval.premise_retriever import PremiseRetriever
    from leantrain.retrieval.retrieval_trainer import resolve_model_dir

    return PremiseRetriever.from_name(
        str(resolve_model_dir(path)), eval_batch_size=batch_size, allow_code=allow_code
    )


def _train(argv: list[str]) -> int:
    from leantrain.core.config import parse_cli
    from leantrain.retrieval.retrieval_config import RetrievalConfig

    cfg = parse_cli(
        RetrievalConfig,
        argv,
        prog="leantrain retrieval train",
        description="Train the premise retriever. Lightning Trainer arguments are flags too "
        "(--max-steps, --max-epochs, --devices, --strategy, --precision …): they fill trainer:.",
    )
    _quiet()
    from leantrain.core.lifelong import is_main_process
    from leantrain.retrieval.retrieval_trainer import RetrievalTrainer

    result = RetrievalTrainer(cfg).train()
    if is_main_process():
        keys = ("output_dir", "model_dir", "final")
        print(json.dumps({k: result[k] for k in keys}, indent=2))
    return 0


def _evaluate(argv: list[str]) -> int:
    p = _common("evaluate")
    p.add_argument("-k", type=_positive, default=10, help="the k of R@k besides R@1")
    p.add_argument("--split-file", default="test.json", help="which file of each split to score")
    p.add_argument("--no-bm25", action="store_true", help="skip the BM25 baseline")
    p.add_argument("--index", default=None, help="cache directory for the premise index")
    a = p.parse_args(argv)
    _quiet()
    from leantrain.core.manifest import MANIFEST_NAME, RunManifest
    from leantrain.retrieval.evaluation import evaluate_retriever, format_table

    model = _load_model(a.model, a.batch_size, a.allow_code)
    results = evaluate_retriever(
        model, a.data, k=a.k, bm25=not a.no_bm25, split_file=a.split_file, index_dir=a.index
    )
    print(format_table(results))
    run_dir = Path(a.model)
    if (run_dir / MANIFEST_NAME).is_file():
        RunManifest.load(run_dir).set_metrics("evaluation", {"data": str(a.data), **results})
    return 0


def _index(argv: list[str]) -> int:
    p = _common("index")
    p.add_argument("--output", required=True, help="directory for index.safetensors + index.json")
    a = p.parse_args(argv)
    from leantrain.core.output_dir import check_output_dir, claim_output_dir

    check_output_dir(a.output, kind="index", flag="--output")
    _quiet()
    from leantrain.retrieval.corpus import Corpus

    model = _load_model(a.model, a.batch_size, a.allow_code)
    corpus = Corpus.from_export(a.data)
    output = claim_output_dir(a.output, kind="index", flag="--output")
    index = model.index_corpus(corpus, cache_dir=output, batch_size=a.batch_size)
    print(f"indexed {len(index.corpus)} premises into {a.output}")
    return 0


def _retrieve(argv: list[str]) -> int:
    p = _common("retrieve")
    p.add_argument("--state", required=True, help="the proof state (state_before)")
    p.add_argument(
        "--file", required=True, help="the Lean file the theorem is in (for accessibility)"
    )
    p.add_argument("-k", type=_positive, default=10, help="how many premises")
    p.add_argument(
        "--index", default=None, help="premise index directory (from 'leantrain retrieval index')"
    )
    a = p.parse_args(argv)
    from leantrain.core.output_dir import output_kind

    if a.index is not None and output_kind(a.index) != "index":
        raise ConfigError(
            f"--index {a.index}: not a premise index",
            hint="build one with 'leantrain retrieval index --output DIR', or leave --index out",
        )
    _quiet()
    from leantrain.retrieval.corpus import Corpus

    corpus = Corpus.from_export(a.data)
    if a.file not in corpus.file_premises:
        raise ConfigError(
            f"--file {a.file}: not a file of the corpus in {a.data}",
            hint="give the path of a Lean file as in corpus.jsonl (e.g. Mathlib/Logic/Basic.lean)",
        )
    model = _load_model(a.model, a.batch_size, a.allow_code)
    model.index_corpus(corpus, cache_dir=a.index)
    for rank, (prem, score) in enumerate(model.retrieve(a.state, a.file, a.k), start=1):
        print(f"{rank:>3}  {score:+.4f}  {prem.full_name}  ({prem.path})")
    return 0


_SUB = {"train": _train, "evaluate": _evaluate, "index": _index, "retrieve": _retrieve}


def run(argv: list[str]) -> int:
    """Dispatch ``leantrain retrieval SUBCOMMAND …``."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    sub, rest = argv[0], argv[1:]
    if sub not in _SUB:
        import difflib

        close = difflib.get_close_matches(sub, list(_SUB), n=1)
        raise ConfigError(
            f"unknown retrieval subcommand '{sub}'",
            hint=f"did you mean '{close[0]}'?"
            if close
            else "choose train, evaluate, index or retrieve",
        )
    return _SUB[sub](rest)


def register() -> list[Command]:
    """The ``retrieval`` command of the ``leantrain`` CLI."""
    return [
        Command(
            "retrieval",
            "train / evaluate / index / retrieve with the dense premise retriever",
            run,
            trainer="leantrain.retrieval:RetrievalTrainer",
            metrics=("R@1", "R@10", "MRR", "bm25_R@10", "reachable_fraction"),
        )
    ]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(sys.argv[1:]))
