"""The run functions of ``leantrain retrieval train|evaluate|index|retrieve`` (registered in
:mod:`leantrain.retrieval.cli`): each takes one instance per setting group, checks paths
first, then loads torch, transformers and Lightning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from leantrain.core.errors import ConfigError
from leantrain.core.groups import LifelongData
from leantrain.core.lifelong import check_database, check_model_dir, check_model_name
from leantrain.core.output_dir import check_output_dir, claim_output_dir, output_kind
from leantrain.retrieval.retrieval_config import (
    EvaluateArgs,
    ExportArgs,
    IndexOutput,
    ModelArgs,
    QueryArgs,
    RetrievalConfig,
)


def _quiet() -> None:
    """The engines' banners and deprecation chatter off (our progress lines stay)."""
    import logging
    import warnings

    import lightning.pytorch  # noqa: F401  (it resets its loggers' levels on import: import it first)

    for name in ("lightning", "lightning.pytorch", "lightning.fabric", "bm25s"):
        logging.getLogger(name).setLevel(logging.WARNING)
    for message in ("does not have many workers", "LeafSpec", "smaller than the logging interval"):
        warnings.filterwarnings("ignore", message=f".*{message}.*")
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()


def model_path(name: str) -> str:
    """``--model`` before torch loads: ``tiny``, a ``module:attr`` builder or a hub id as given;
    a directory (a retrieval run: its newest retriever) read by core's model guard — a saved
    retriever's ``encoder/`` and ``tokenizer/``, a Hugging Face encoder's files. One line
    naming the missing or damaged file, or ``no such model directory``."""
    if name == "tiny" or (":" in name and not Path(name).exists()):
        return name
    hint = "pass 'tiny', a retrieval run, a saved retriever or encoder directory, or a hub id"
    path = check_model_name(name, trainers=("retrieval",), config=(), parts=(), hint=hint)
    if path is None:
        return name
    if (path / "retriever.json").is_file():
        check_model_dir(path / "encoder", parts=("weights",))
        check_model_dir(path / "tokenizer", config=(), parts=("tokenizer",))
    elif not (path / "modules.json").is_file():  # sentence-transformers: loaded by parts
        check_model_dir(path, "a retriever or encoder directory", hint)
    return str(path)


def _load_model(model: ModelArgs, path: str) -> Any:
    from leantrain.retrieval.premise_retriever import PremiseRetriever

    return PremiseRetriever.from_name(
        path, eval_batch_size=model.eval_batch_size, allow_code=model.allow_code
    )


def check_train(model: ModelArgs, data: LifelongData) -> None:
    """``retrieval train``'s model and database, checked before Lightning loads."""
    model_path(model.model_name)
    check_database(data.database)


def train(cfg: RetrievalConfig) -> dict[str, Any] | int:
    """``retrieval train``: the run's output dir, newest model dir and final metrics (printed
    by the main process only)."""
    _quiet()
    from leantrain.core.lifelong import is_main_process
    from leantrain.retrieval.retrieval_trainer import RetrievalTrainer

    result = RetrievalTrainer(cfg).train()
    return {k: result[k] for k in ("output_dir", "model_dir", "final")} if is_main_process() else 0


def evaluate(model: ModelArgs, data: ExportArgs, ev: EvaluateArgs) -> int:
    """``retrieval evaluate``: prints R@1, R@k and MRR beside BM25; a run directory's manifest
    records them. ``--index`` is a new directory, an empty one or an earlier index (never a
    file, never a folder of the user's)."""
    if ev.index is not None:
        check_output_dir(ev.index, kind="index", flag="--index")
    path = model_path(model.model_name)
    _quiet()
    from leantrain.core.manifest import MANIFEST_NAME, RunManifest
    from leantrain.retrieval.evaluation import evaluate_retriever, format_table

    results = evaluate_retriever(
        _load_model(model, path),
        data.data_path,
        k=ev.k,
        bm25=not ev.no_bm25,
        split_file=ev.split_file,
        index_dir=ev.index,
    )
    print(format_table(results))
    run_dir = Path(model.model_name)
    if (run_dir / MANIFEST_NAME).is_file():
        RunManifest.load(run_dir).set_metrics("evaluation", {"data": data.data_path, **results})
    return 0


def index(model: ModelArgs, data: ExportArgs, out: IndexOutput) -> int:
    """``retrieval index``: encodes the corpus into a premise index directory."""
    check_output_dir(out.output, kind="index", flag="--output")
    path = model_path(model.model_name)
    _quiet()
    from leantrain.retrieval.corpus import Corpus

    retriever = _load_model(model, path)
    corpus = Corpus.from_export(data.data_path)
    output = claim_output_dir(out.output, kind="index", flag="--output")
    built = retriever.index_corpus(corpus, cache_dir=output, batch_size=model.eval_batch_size)
    print(f"indexed {len(built.corpus)} premises into {out.output}")
    return 0


def retrieve(model: ModelArgs, data: ExportArgs, query: QueryArgs) -> int:
    """``retrieval retrieve``: prints the ``k`` best premises accessible from ``--file``."""
    if query.index is not None and output_kind(query.index) != "index":
        raise ConfigError(
            f"--index {query.index}: not a premise index",
            hint="build one with 'leantrain retrieval index --output DIR', or leave --index out",
        )
    path = model_path(model.model_name)
    _quiet()
    from leantrain.retrieval.corpus import Corpus

    corpus = Corpus.from_export(data.data_path)
    if query.file not in corpus.file_premises:
        raise ConfigError(
            f"--file {query.file}: not a file of the corpus in {data.data_path}",
            hint="give the path of a Lean file as in corpus.jsonl (e.g. Mathlib/Logic/Basic.lean)",
        )
    retriever = _load_model(model, path)
    retriever.index_corpus(corpus, cache_dir=query.index)
    ranked = retriever.retrieve(query.state, query.file, query.k)
    for rank, (prem, score) in enumerate(ranked, start=1):
        print(f"{rank:>3}  {score:+.4f}  {prem.full_name}  ({prem.path})")
    return 0
