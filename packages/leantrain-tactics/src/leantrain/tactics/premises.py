"""Premises for retrieval-augmented prompts: the top-k accessible premises of a proof state,
from a trained retriever (``leantrain-retrieval``, the optional extra ``retrieval``).

Which premises a prompt shows is decided here once, for training (the SFT / GRPO datasets),
evaluation and the prover alike: the retriever ranks the premises *accessible* from the
theorem — those of the files its file imports (transitively) and those of its own file that end
before the theorem starts, as :meth:`leantrain.retrieval.Corpus.accessible_ids` defines it — for
the proof state as the prompt shows it (:func:`~leantrain.tactics.prompts.format_user_prompt`),
and the best ``k`` go into the prompt, serialised as the retriever reads them.

Training uses *retrieved* premises, not the gold ones a traced tactic annotates (ReProver trains
its generator the same way): the prover can only give retrieved premises, so a generator trained
on gold ones would learn that a listed premise is always the right one and be asked differently
at proof time. The corpus is the export's ``corpus.jsonl`` (the same file for a split of that
export in training and in the prover).

Embeddings are computed in fp32 on every device (:data:`PRECISION`), so training on a GPU and
proving on a CPU rank the same premises (up to float rounding of exact ties). Nothing here
imports torch until a retriever is loaded; :func:`check_retriever` is cheap, so bad
settings fail before any model loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from leantrain.core.errors import ConfigError, DataError

RETRIEVER_JSON = "retriever.json"
"""The file that marks a saved retriever (``leantrain.retrieval.encoder.RETRIEVER_JSON``)."""

CORPUS_NAME = "corpus.jsonl"


@dataclass(frozen=True)
class PremiseQuery:
    """What premises are retrieved for: a proof state of a theorem at ``position`` of
    ``file_path`` (``None``: the end of the file)."""

    state: str
    file_path: str
    position: tuple[int, int] | None = None


class PremiseSource(Protocol):
    """Gives each query its premises (serialised, best first)."""

    def premises(self, queries: Sequence[PremiseQuery]) -> list[list[str]]:
        """One list per query."""
        ...


def check_retriever(path: str | Path, *, flag: str = "--retriever") -> Path:
    """The saved retriever directory ``path`` names: itself, or the newest retriever of a
    leantrain retrieval run. A one-line :class:`ConfigError` naming ``flag`` when the path is
    missing or holds no retriever. Imports no torch."""
    from leantrain.core.lifelong import find_model

    if not str(path).strip() or not Path(path).exists():
        raise ConfigError(
            f"{flag} {path}: no such directory",
            hint="give a leantrain retrieval run (leantrain retrieval train --output-dir RUN) "
            "or a saved retriever directory",
        )
    try:
        found = find_model(path, ("retrieval",), (RETRIEVER_JSON,))
    except Exception as e:  # an unreadable manifest: say which flag led to it
        raise ConfigError(f"{flag} {path}: {e}", hint="give a retrieval run or retriever") from e
    if found is not None and (found / RETRIEVER_JSON).is_file():
        return found
    raise ConfigError(
        f"{flag} {path}: not a premise retriever (no {RETRIEVER_JSON}, and not a retrieval run "
        "with a trained retriever)",
        hint="give the output dir of 'leantrain retrieval train' or a retriever it saved",
    )


@dataclass(frozen=True)
class RetrieverCheckpoint:
    """The saved retriever a retriever setting resolves to now: its directory (absolute) and
    a fingerprint of its content (:func:`retriever_checkpoint`)."""

    path: str
    sha256: str


def _recorded_files(directory: Path) -> dict[str, str] | None:
    """The SHA-256 per file that the retrieval run holding ``directory`` recorded when it
    saved that checkpoint (:class:`~leantrain.core.manifest.StepRecord`), or ``None`` (not a
    run's checkpoint, or an unreadable manifest: the files are then hashed)."""
    from leantrain.core.manifest import MANIFEST_NAME, RunManifest
    from leantrain.core.output_dir import output_kind

    for run in list(directory.parents)[:3]:
        if output_kind(run) != "run" or not (run / MANIFEST_NAME).is_file():
            continue
        try:
            manifest = RunManifest.load(run)
        except Exception:
            return None
        for step in manifest.steps:
            if manifest.checkpoint_path(step.checkpoint).resolve() == directory:
                return dict(step.checkpoint.files)
        return None
    return None


def retriever_checkpoint(path: str | Path, *, flag: str = "--retriever") -> RetrieverCheckpoint:
    """The retriever ``path`` names now (:func:`check_retriever`: a lifelong retrieval run
    names its newest checkpoint, which changes when the run trains on another repository) and
    its fingerprint: the SHA-256 of its files' SHA-256s, taken from the retrieval run's manifest
    when it recorded the checkpoint, else hashed here. Two settings with the same fingerprint
    rank the same premises. Imports no torch."""
    import hashlib
    import json

    from leantrain.core.manifest import checksum_tree

    directory = check_retriever(path, flag=flag).resolve()
    files = _recorded_files(directory)
    if files is None:
        files = checksum_tree(directory)
    digest = hashlib.sha256(json.dumps(sorted(files.items())).encode()).hexdigest()
    return RetrieverCheckpoint(str(directory), digest)


def corpus_dir(data: str | Path) -> Path:
    """The export directory whose ``corpus.jsonl`` serves ``data`` (an export dir, a split dir
    or a split file of it); an export dir without one (LeanDojo benchmark) is returned as is
    (its corpus is then built from the premise annotations). A :class:`DataError` otherwise."""
    path = Path(data)
    start = path if path.is_dir() else path.parent
    for directory in (start, start.parent, start.parent.parent):
        if (directory / CORPUS_NAME).is_file():
            return directory
    if path.is_dir():
        return path
    raise DataError(
        path,
        f"no {CORPUS_NAME} beside or above this split file: the retriever needs the corpus",
        hint="give the export dir of 'leantrain export merge' as the data",
    )


PRECISION = "fp32"
"""Premises are ranked with fp32 embeddings on every device: a GPU's bf16 autocast (the
retriever's default there) could reorder near-ties, and a generator trained on a GPU would then
see other premises than the prover on a CPU gives it."""

_MODELS: dict[tuple[str, str], Any] = {}
_INDEXES: dict[tuple[str, str, str, int, int], Any] = {}


class RetrievedPremises:
    """A :class:`PremiseSource` over a trained retriever and a corpus index: the ``k`` best
    accessible premises of each query. Load one with :meth:`load`."""

    def __init__(self, retriever: Any, index: Any, k: int, *, batch_size: int = 64) -> None:
        if k < 1:
            raise ConfigError(f"num_premises must be at least 1, got {k}")
        self.retriever, self.index, self.k, self.batch_size = retriever, index, k, batch_size

    @classmethod
    def load(
        cls,
        retriever: str | Path,
        data: str | Path,
        k: int,
        *,
        device: str | None = None,
        dist: str = "leantrain-tactics",
        flag: str = "--retriever",
    ) -> RetrievedPremises:
        """Load the retriever ``retriever`` names (see :func:`check_retriever`) and index the
        corpus of ``data`` (see :func:`corpus_dir`). Both are kept for the process, so the
        training, evaluation and prover datasets of one run load them once. Without
        leantrain-retrieval installed: a one-line error with ``pip install '<dist>[retrieval]'``."""
        from leantrain.core.errors import require_package

        model_dir = check_retriever(retriever, flag=flag)
        directory = corpus_dir(data)
        require_package(
            "leantrain.retrieval",
            extra="retrieval",
            dist=dist,
            feature="retrieval-augmented prompts (a retriever)",
        )
        import torch
        from leantrain.retrieval import Corpus, PremiseIndex, PremiseRetriever

        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        key = (str(model_dir.resolve()), device)
        model = _MODELS.get(key)
        if model is None:
            model = PremiseRetriever.from_pretrained(model_dir).to(device).eval()
            _MODELS.clear()  # one retriever at a time: a process rarely uses two
            _MODELS[key] = model
        corpus_file = directory / CORPUS_NAME
        stat = corpus_file.stat() if corpus_file.is_file() else None
        ikey = (
            *key,
            str(directory.resolve()),
            stat.st_mtime_ns if stat else 0,
            stat.st_size if stat else 0,
        )
        index = _INDEXES.get(ikey)
        if index is None:
            corpus = Corpus.from_export(directory)
            embeddings = model.encode_texts(
                corpus.texts(), max_len=model.args.premise_max_len, precision=PRECISION
            )
            index = PremiseIndex(embeddings, corpus, {}, model)
            _INDEXES.clear()
            _INDEXES[ikey] = index
        return cls(model, index, k)

    def _encode_states(self, states: list[str]) -> Any:
        """Query embeddings as :meth:`PremiseRetriever.encode_contexts` makes them (the
        retriever's ``context_format`` and ``context_max_len``), in :data:`PRECISION`."""
        from leantrain.retrieval.context import format_context

        args = self.retriever.args
        return self.retriever.encode_texts(
            [format_context(s, args.context_format) for s in states],
            max_len=args.context_max_len,
            precision=PRECISION,
        )

    def premises(self, queries: Sequence[PremiseQuery]) -> list[list[str]]:
        """The ``k`` best accessible premises of each query, serialised, best first."""
        out: list[list[str]] = []
        for start in range(0, len(queries), self.batch_size):
            chunk = queries[start : start + self.batch_size]
            embeddings = self._encode_states([q.state for q in chunk])
            ids, _ = self.index.search(
                embeddings,
                [q.file_path for q in chunk],
                self.k,
                [q.position for q in chunk],
            )
            premises = self.index.corpus.premises
            out += [[premises[i].serialize() for i in row] for row in ids]
        return out
