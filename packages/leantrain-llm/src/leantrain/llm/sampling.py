"""Length-grouped batches in random order: little padding, and every prefix of a run is a fair
sample of the data.

transformers' ``LengthGroupedSampler`` sorts megabatches of up to 50 batches longest-first and
puts the longest batch of all first, so a run shorter than one megabatch (a ``max_steps`` run on
a large export) trains on the longest rows of one random sample only. Here the rows are cut into
small windows of ``window`` batches (after a random permutation), each window is sorted by length
and cut into batches, and then *all* batches are dealt in random order, one of each length band
per round of ``window`` batches: the batches are as homogeneous in length as the window allows,
any prefix of a run is an unbiased sample of the epoch, and a prefix of whole rounds a stratified
one (its token count varies less from seed to seed than with random batches).

The sampler yields row indices, as ``LengthGroupedSampler`` does: the ``DataLoader``'s
``BatchSampler`` cuts them into batches of ``batch_size`` that are exactly the groups built here
(the one short batch, if any, comes last), and accelerate's ``BatchSamplerShard`` hands whole
batches to the processes of a multi-process run. The order depends only on ``seed`` and the epoch
(:meth:`LengthGroupedShuffledSampler.set_epoch`, which the HF Trainer calls at every epoch), so
every process draws the same order and a run resumed from a checkpoint skips exactly the batches
it already trained on.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from torch.utils.data import Sampler

DEFAULT_WINDOW = 8
"""Batches per length-sorted window (``length_group_window``). Larger windows pad less but make
each batch a narrower length band, and a round (one batch of each band) longer."""


def grouped_shuffled_indices(
    lengths: Sequence[int] | np.ndarray,
    batch_size: int,
    window: int = DEFAULT_WINDOW,
    seed: int = 0,
    epoch: int = 0,
) -> list[int]:
    """A permutation of ``range(len(lengths))`` whose consecutive ``batch_size`` slices are
    batches of similar length, in random order.

    The indices are permuted at random and cut into windows of ``window * batch_size`` rows;
    each window is sorted by length and cut into ``window`` batches, its length *bands* (band 0
    the shortest). The batches are then dealt in rounds of ``window``: each round holds one
    batch of every band, each from a window drawn at random (without replacement, per band), in
    random order. So the first ``k * window`` batches hold exactly ``k`` batches of each band
    (a stratified sample of the lengths: a prefix's token count varies less than with random
    batches), and any prefix is an unbiased sample. The batches of the last, incomplete window
    go to random places; the last ``len % batch_size`` rows (a random subset) form the last,
    short batch, so that the batches a ``BatchSampler`` cuts are exactly these groups.
    Deterministic given ``(seed, epoch)``.
    """
    if batch_size < 1 or window < 1:
        raise ValueError(f"batch_size and window must be >= 1, got {batch_size} and {window}")
    lengths = np.asarray(lengths, dtype=np.int64)
    n = len(lengths)
    rng = np.random.default_rng([seed % 2**64, epoch])
    perm = rng.permutation(n)
    span = window * batch_size
    whole = n // span  # complete windows
    full = n - n % batch_size  # rows in complete batches

    def grouped(rows: np.ndarray) -> np.ndarray:
        """``rows`` (windows, span) sorted by length in each window, as (windows, bands, batch)."""
        order = np.argsort(lengths[rows], axis=1, kind="stable")
        shape = (len(rows), rows.shape[1] // batch_size, batch_size)
        return np.take_along_axis(rows, order, axis=1).reshape(shape)

    bands = grouped(perm[: whole * span].reshape(whole, span))  # (whole, window, batch_size)
    source = np.argsort(rng.random((whole, window)), axis=0)  # [round, band] -> window
    dealt = np.argsort(rng.random((whole, window)), axis=1)  # [round, slot] -> band
    batches = bands[np.take_along_axis(source, dealt, axis=1), dealt].reshape(-1, batch_size)
    rest = grouped(perm[whole * span : full].reshape(1, -1))[0]  # the incomplete window
    if len(rest):
        rest = rest[rng.permutation(len(rest))]  # in random order, as are their places
        slots = np.sort(rng.choice(len(batches) + len(rest), len(rest), replace=False))
        batches = np.insert(batches, slots - np.arange(len(rest)), rest, axis=0)
    return np.concatenate([batches.reshape(-1), perm[full:]]).tolist()


class LengthGroupedShuffledSampler(Sampler[int]):
    """Row indices in length-grouped batches of ``batch_size``, the batches in random order
    (:func:`grouped_shuffled_indices`); a new order each epoch (:meth:`set_epoch`).

    ``batch_size`` must be the ``DataLoader``'s batch size (per device), so that its batches are
    the groups formed here.
    """

    def __init__(
        self,
        lengths: Sequence[int] | np.ndarray,
        batch_size: int,
        window: int = DEFAULT_WINDOW,
        seed: int = 0,
    ) -> None:
        if batch_size < 1 or window < 1:
            raise ValueError(f"batch_size and window must be >= 1, got {batch_size} and {window}")
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.batch_size, self.window, self.seed = batch_size, window, seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Use the order of ``epoch`` from the next iteration on."""
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self) -> Iterator[int]:
        return iter(
            grouped_shuffled_indices(
                self.lengths, self.batch_size, self.window, self.seed, self.epoch
            )
        )


def dataset_lengths(
    dataset: Any, column: str = "input_ids", length_column: str = "length"
) -> np.ndarray | None:
    """Row lengths of a tokenized dataset: its ``length_column`` if it has one, else the length
    of each row's ``column`` (read from Arrow for a ``datasets.Dataset``, without decoding the
    rows); ``None`` where neither is there."""
    names = getattr(dataset, "column_names", None)
    if names is not None and length_column in names:
        return np.asarray(dataset[length_column], dtype=np.int64)
    if names is not None and column in names and hasattr(dataset, "with_format"):
        import pyarrow.compute as pc

        table = dataset.select_columns([column]).with_format("arrow")[:]
        return pc.list_value_length(table[column]).to_numpy(zero_copy_only=False).astype(np.int64)
    try:
        first = dataset[0]
    except (IndexError, KeyError, TypeError):
        return None
    if not isinstance(first, Mapping) or column not in first:
        return None
    return np.asarray([len(dataset[i][column]) for i in range(len(dataset))], dtype=np.int64)
