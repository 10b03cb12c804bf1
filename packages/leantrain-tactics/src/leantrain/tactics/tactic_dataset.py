"""The part SFT and RL tactic datasets share: reading, filtering, rows, HF conversion."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from leantrain.tactics.dataset_config import TacticDatasetConfig
from leantrain.tactics.examples import (
    FilterStats,
    TacticExample,
    empty_dataset_error,
    iter_examples,
)
from leantrain.tactics.theorem_source import TheoremSource, describe_source, iter_theorems

if TYPE_CHECKING:
    import datasets


class TacticDataset:
    """Rows built from the tactics of traced theorems (base of SFTDataset and RLDataset).

    Eager by default: the source file is streamed once and the rows are kept. With
    ``streaming=True`` nothing is read until iteration, and every iteration re-reads the source
    (for splits larger than memory); :meth:`to_hf` then returns a ``datasets.IterableDataset``.
    """

    kind: ClassVar[str] = "tactic"

    def __init__(
        self,
        source: TheoremSource,
        split: str = "train",
        max_samples: int | None = None,
        *,
        config: TacticDatasetConfig | None = None,
        streaming: bool = False,
    ) -> None:
        self.config = config or TacticDatasetConfig()
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

    # -- reading ----------------------------------------------------------------------------
    def _generate(self) -> Iterator[dict[str, Any]]:
        stats = FilterStats()
        self.stats = stats
        theorems = iter_theorems(
            self.source,
            self.split,
            split_strategy=self.config.split_strategy,
            chunk_chars=self.config.chunk_chars,
        )
        for example in iter_examples(theorems, self.config, stats, self.max_samples):
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
