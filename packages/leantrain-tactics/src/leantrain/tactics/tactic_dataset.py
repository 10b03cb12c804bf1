"""The part SFT and RL tactic datasets share: reading, filtering, rows, HF conversion."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from leantrain.tactics.dataset_config import TacticDatasetConfig
from leantrain.tactics.examples import (
    FilterStats,
    TacticExample,
    empty_dataset_error,
    iter_examples,
)
from leantrain.tactics.premises import PremiseQuery, PremiseSource, RetrievedPremises
from leantrain.tactics.prompts import build_messages
from leantrain.tactics.theorem_source import TheoremSource, describe_source, iter_theorems

if TYPE_CHECKING:
    import datasets


class TacticDataset:
    """Rows built from the tactics of traced theorems (base of SFTDataset and RLDataset).

    Eager by default: the source file is streamed once and the rows are kept. With
    ``streaming=True`` nothing is read until iteration, and every iteration re-reads the source
    (for splits larger than memory); :meth:`to_hf` then returns a ``datasets.IterableDataset``.

    With ``config.retriever`` (or a ``premise_source`` object, which replaces it) each prompt is
    led by the retrieved premises of its state (:mod:`leantrain.tactics.premises`), retrieved in
    batches of :attr:`RETRIEVAL_BATCH` examples.
    """

    RETRIEVAL_BATCH: ClassVar[int] = 64

    kind: ClassVar[str] = "tactic"

    def __init__(
        self,
        source: TheoremSource,
        split: str = "train",
        max_samples: int | None = None,
        *,
        config: TacticDatasetConfig | None = None,
        streaming: bool = False,
        premise_source: PremiseSource | None = None,
    ) -> None:
        self.config = config or TacticDatasetConfig()
        self.premise_source = premise_source
        self.source = source
        self.split = split
        self.max_samples = max_samples if max_samples is not None else self.config.max_samples
        self.streaming = streaming
        self.where = describe_source(source, split, self.config.split_strategy)
        self.stats = FilterStats()
        self._rows: list[dict[str, Any]] | None = None
        if not streaming:
            self._rows = list(self._generate())

    # -- subclasses -------------------------------------------------------------------------
    def make_row(self, example: TacticExample) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def features(cls) -> datasets.Features:  # pragma: no cover - abstract
        raise NotImplementedError

    def messages(self, example: TacticExample) -> list[dict[str, str]]:
        """The prompt of ``example``: system message, then its premises (if any) and state."""
        return build_messages(
            example.state,
            self.config.system_prompt,
            example.prompt_premises,
            max_premise_chars=self.config.max_premise_chars,
        )

    # -- reading ----------------------------------------------------------------------------
    def _premise_source(self) -> PremiseSource | None:
        if self.premise_source is None and self.config.retriever is not None:
            if not isinstance(self.source, (str, Path)):
                from leantrain.core.errors import ConfigError

                raise ConfigError(
                    "a retriever needs the corpus of an export: give the data as an export dir",
                    hint="or pass premise_source= (a RetrievedPremises) with a list of theorems",
                )
            self.premise_source = RetrievedPremises.load(
                self.config.retriever, str(self.source), self.config.num_premises
            )
        return self.premise_source

    def _with_premises(self, examples: Iterator[TacticExample]) -> Iterator[TacticExample]:
        """``examples`` with their retrieved premises, retrieved a batch at a time (the
        retriever loads at the first example, so a split the filters empty loads nothing)."""
        if self.premise_source is None and self.config.retriever is None:
            yield from examples
            return
        batch: list[TacticExample] = []

        def flush() -> list[TacticExample]:
            source = self._premise_source()
            assert source is not None
            queries = [PremiseQuery(e.state, e.theorem.file_path, e.theorem.start) for e in batch]
            found = source.premises(queries)
            return [dataclasses.replace(e, prompt_premises=tuple(p)) for e, p in zip(batch, found)]

        for example in examples:
            batch.append(example)
            if len(batch) >= self.RETRIEVAL_BATCH:
                yield from flush()
                batch = []
        if batch:
            yield from flush()

    def _generate(self) -> Iterator[dict[str, Any]]:
        stats = FilterStats()
        self.stats = stats
        theorems = iter_theorems(
            self.source,
            self.split,
            split_strategy=self.config.split_strategy,
            chunk_chars=self.config.chunk_chars,
        )
        examples = iter_examples(theorems, self.config, stats, self.max_samples)
        for example in self._with_premises(examples):
            yield self.make_row(example)
        if stats.kept == 0:
            raise empty_dataset_error(self.where, stats)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every row as a dict (read now if the dataset is streaming)."""
        if self._rows is None:
            self._rows = list(self._generate())
        return self._rows

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if self._rows is not None:
            return iter(self._rows)
        return self._generate()

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.rows[index]

    def __repr__(self) -> str:
        size = "streaming" if self._rows is None else f"{len(self._rows)} rows"
        return f"{type(self).__name__}({self.where!r}, split={self.split!r}, {size})"

    def to_hf(self) -> datasets.Dataset | datasets.IterableDataset:
        """A ``datasets.Dataset`` of the rows (``IterableDataset`` when streaming)."""
        import datasets

        if self._rows is None:
            return datasets.IterableDataset.from_generator(self._generate, features=self.features())
        return datasets.Dataset.from_list(self._rows, features=self.features())


def message_feature() -> Any:
    """The arrow type of a chat: a list of ``{role, content}`` strings."""
    import datasets

    return datasets.List({"role": datasets.Value("string"), "content": datasets.Value("string")})
