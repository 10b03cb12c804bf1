"""Retrieval examples from exported splits: a proof state and its positive premises."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from leantrain.core.errors import DataError
from leantrain.core.schemas import Theorem, load_theorems
from leantrain.retrieval.corpus import Corpus


@dataclass(frozen=True)
class RetrievalExample:
    """One traced tactic: its ``state_before`` and the corpus indices of its premises."""

    context: str
    file_path: str
    theorem_pos: tuple[int, int]
    positives: tuple[int, ...]
    theorem: str = ""


def examples_from_theorems(
    theorems: list[Theorem],
    corpus: Corpus,
    *,
    source: str | Path | None = None,
    strict: bool = True,
) -> list[RetrievalExample]:
    """One example per tactic with at least one annotated premise.

    A premise that the corpus lacks is a :class:`DataError` naming the record (``strict``),
    or is dropped (``strict=False``), as ReProver silently does.
    """
    out: list[RetrievalExample] = []
    for ti, thm in enumerate(theorems):
        for ki, tac in enumerate(thm.traced_tactics):
            ids: list[int] = []
            for prov in tac.premises:
                idx = corpus.find(prov.full_name, prov.def_path)
                if idx is None:
                    if strict:
                        raise DataError(
                            source,
                            f"premise '{prov.full_name}' (defined in {prov.def_path}) is not in the corpus",
                            index=ti,
                            field=f"traced_tactics[{ki}].annotated_tactic",
                            hint="export the corpus together with the splits (corpus.jsonl must list every premise), "
                            "or pass strict=False to drop unknown premises",
                        )
                    continue
                if idx not in ids:
                    ids.append(idx)
            if ids:
                out.append(
                    RetrievalExample(
                        tac.state_before, thm.file_path, tuple(thm.start), tuple(ids), thm.full_name
                    )
                )  # type: ignore[arg-type]
    return out


def load_examples(
    split_file: str | Path, corpus: Corpus, *, strict: bool = True
) -> list[RetrievalExample]:
    """Examples of one split file (``train.json`` …)."""
    return examples_from_theorems(
        load_theorems(split_file), corpus, source=split_file, strict=strict
    )
