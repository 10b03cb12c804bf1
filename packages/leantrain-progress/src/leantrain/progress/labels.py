"""Progress labels: turn traced proofs into ``{goal, prefix, tactic, steps_remaining}`` rows.

For the ``i``-th (0-based) of the ``n`` counted tactics of a proof the row is::

    goal            = the tactic's state_before
    prefix          = the counted tactics before it, joined by newlines
    tactic          = the tactic
    steps_remaining = n - i          (so the closing tactic has 1)

Skipped tactics, and how they affect ``n``:

* an empty (whitespace-only) tactic is not a proof step: it gets no row, is not in any prefix
  and does not count in ``n``;
* a proof that uses ``sorry`` / ``admit`` is unfinished, so its true length is unknown and
  every label of it would be wrong: by default the whole theorem is dropped
  (``sorry_policy="drop_theorem"``). With ``sorry_policy="drop_tactic"`` only the ``sorry``
  tactics are removed (like empty ones) and the rest is labelled as if the proof were complete.

Rows may carry an extra ``theorem`` key (``file_path:full_name``) so that a train/eval split
can keep all rows of one proof on the same side; the progress row schema keeps extra keys.
"""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from leantrain.core.atomic import atomic_write_jsonl
from leantrain.core.errors import ConfigError, DataError
from leantrain.core.lean_text import contains_sorry
from leantrain.core.output_dir import check_output_file
from leantrain.core.schemas import Theorem, load_theorems

SorryPolicy = Literal["drop_theorem", "drop_tactic"]
SPLITS = ("train", "val", "test")


class NoProgressRows(DataError):
    """Well-formed traced data without a single usable tactic proof (a lifelong step skips
    such a repository; any other DataError — a malformed file — stops the run)."""


@dataclass
class LabelStats:
    """What :func:`progress_rows` did: counts of theorems, rows and skipped tactics."""

    theorems: int = 0
    theorems_used: int = 0
    theorems_without_tactics: int = 0
    theorems_with_sorry: int = 0
    empty_tactics: int = 0
    sorry_tactics: int = 0
    rows: int = 0
    oversampled_rows: int = 0
    proof_lengths: dict[int, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            k: (dict(sorted(v.items())) if isinstance(v, dict) else v)
            for k, v in self.__dict__.items()
        }


def theorem_rows(
    theorem: Theorem, *, sorry_policy: SorryPolicy = "drop_theorem", stats: LabelStats | None = None
) -> list[dict[str, Any]]:
    """The progress rows of one traced theorem (see the module docstring for the rules)."""
    stats = stats if stats is not None else LabelStats()
    stats.theorems += 1
    tactics = theorem.traced_tactics
    if any(contains_sorry(t.tactic) for t in tactics):
        stats.theorems_with_sorry += 1
        if sorry_policy == "drop_theorem":
            stats.sorry_tactics += sum(contains_sorry(t.tactic) for t in tactics)
            return []
    counted = []
    for t in tactics:
        if not t.tactic.strip():
            stats.empty_tactics += 1
        elif contains_sorry(t.tactic):
            stats.sorry_tactics += 1
        else:
            counted.append(t)
    if not counted:
        stats.theorems_without_tactics += 1
        return []
    n = len(counted)
    stats.theorems_used += 1
    stats.proof_lengths[n] = stats.proof_lengths.get(n, 0) + 1
    key = f"{theorem.file_path}:{theorem.full_name}"
    rows = []
    for i, t in enumerate(counted):
        rows.append(
            {
                "goal": t.state_before,
                "prefix": "\n".join(c.tactic.strip() for c in counted[:i]),
                "tactic": t.tactic.strip(),
                "steps_remaining": n - i,
                "theorem": key,
                "proof_length": n,
            }
        )
    stats.rows += len(rows)
    return rows


def progress_rows(
    theorems: Iterable[Theorem],
    *,
    sorry_policy: SorryPolicy = "drop_theorem",
    stats: LabelStats | None = None,
) -> list[dict[str, Any]]:
    """Progress rows of many theorems, in order."""
    stats = stats if stats is not None else LabelStats()
    out: list[dict[str, Any]] = []
    for thm in theorems:
        out.extend(theorem_rows(thm, sorry_policy=sorry_policy, stats=stats))
    return out


def length_bin(n: int) -> int:
    """Power-of-two bin of a proof length (1, 2, 3-4, 5-8, … → 0, 1, 2, 3, …)."""
    return max(0, math.ceil(math.log2(max(n, 1))))


def rebalance_by_length(
    rows: Sequence[dict[str, Any]], *, max_factor: float = 4.0, seed: int = 42
) -> list[dict[str, Any]]:
    """Oversample the rows of long proofs, as LeanProgress does against its short-proof skew.

    Rows are grouped by the power-of-two bin of their proof length; every bin is repeated
    (whole copies, then a seeded random remainder) towards the row count of the largest bin,
    but never more than ``max_factor`` times. Short-proof bins are never shrunk.
    """
    if max_factor < 1:
        raise ValueError("max_factor must be >= 1")
    bins: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        bins[length_bin(int(r.get("proof_length", r["steps_remaining"])))].append(r)
    if not bins:
        return []
    target = max(len(b) for b in bins.values())
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for b in sorted(bins):
        group = bins[b]
        want = min(target, int(len(group) * max_factor))
        whole, rest = divmod(want, len(group))
        out.extend(group * whole)
        out.extend(rng.sample(group, rest))
    return out


def split_files(
    source: str | Path, splits: Sequence[str] = ("train",), strategy: str = "random"
) -> list[Path]:
    """The traced-theorem JSON files that ``source`` names.

    ``source`` is a split file (``train.json``), a split directory holding ``train.json`` …, or
    an export directory holding ``<strategy>/<split>.json`` (what ``export_merged_data`` writes).
    ``splits`` may contain ``"all"`` for train, val and test.
    """
    source = Path(source)
    if source.is_file():
        return [source]
    if not source.is_dir():
        raise DataError(
            source,
            "not found",
            hint="give a LeanDojo split file, a split directory or an export directory",
        )
    wanted = list(SPLITS) if "all" in splits else list(splits)
    for base in (source / strategy, source):
        files = [base / f"{s}.json" for s in wanted]
        if any(f.is_file() for f in files):
            missing = [f for f in files if not f.is_file()]
            if missing:
                raise DataError(
                    missing[0],
                    "split file not found",
                    hint=f"available: {sorted(p.name for p in base.glob('*.json'))}",
                )
            return files
    raise DataError(
        source,
        f"no {'/'.join(wanted)} split files found (looked in {source / strategy} and {source})",
        hint="give the directory written by 'leantrain export merge' or a split .json file",
    )


ROW_KEYS = ("goal", "prefix", "tactic", "steps_remaining")


def is_progress_rows_file(path: str | Path) -> bool:
    """Whether ``path`` is a JSONL file of progress rows (what :func:`make_progress_data`
    writes): its first line is a JSON object with every key of :data:`ROW_KEYS`. Only such a
    file may be replaced by a new ``--out``; never a file of the user's."""
    try:
        with Path(path).open("rb") as f:
            first = f.readline(1 << 20)
        row = json.loads(first.decode("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(row, dict) and all(k in row for k in ROW_KEYS)


def check_rows_out(out: str | Path, *, flag: str = "out") -> Path:
    """Raise :class:`~leantrain.core.errors.ConfigError` unless ``out`` may receive progress
    rows: a new file, or rows written before (see :func:`is_progress_rows_file`)."""
    return check_output_file(out, is_own=is_progress_rows_file, flag=flag, example="rows.jsonl")


def make_progress_data(
    source: str | Path,
    out: str | Path | None = None,
    *,
    splits: Sequence[str] = ("train",),
    strategy: str = "random",
    sorry_policy: SorryPolicy = "drop_theorem",
    rebalance: bool = False,
    max_oversample: float = 4.0,
    seed: int = 42,
    stats: LabelStats | None = None,
) -> list[dict[str, Any]]:
    """Progress rows from traced theorems; written atomically as JSONL when ``out`` is given.

    ``source`` is anything :func:`split_files` accepts. Returns the rows (after optional
    rebalancing by proof length). An input without a single usable proof is a ``DataError``;
    an ``out`` that is not new or earlier rows (:func:`check_rows_out`) or a ``max_oversample``
    below 1 is a ``ConfigError``, before anything is read.
    """
    if out is not None:
        check_rows_out(out)
    if not (max_oversample >= 1):  # also NaN
        raise ConfigError(
            f"max_oversample must be at least 1, got {max_oversample!r}",
            hint="it is the most copies of a proof-length bin (1: no oversampling)",
        )
    stats = stats if stats is not None else LabelStats()
    rows: list[dict[str, Any]] = []
    files = split_files(source, splits, strategy)
    for f in files:
        rows.extend(progress_rows(load_theorems(f), sorry_policy=sorry_policy, stats=stats))
    if not rows:
        raise NoProgressRows(
            files[0] if len(files) == 1 else source,
            f"no progress rows: {stats.theorems} theorems, none with a usable tactic proof",
            hint="check that the file holds traced theorems with non-empty traced_tactics",
        )
    if rebalance:
        before = len(rows)
        rows = rebalance_by_length(rows, max_factor=max_oversample, seed=seed)
        stats.oversampled_rows = len(rows) - before
    if out is not None:
        atomic_write_jsonl(out, rows)
    return rows
