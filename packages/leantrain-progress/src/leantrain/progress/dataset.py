"""Reading progress data: JSONL rows, a JSON array of rows, or traced theorems directly."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError
from leantrain.core.schemas import ProgressRow, iter_jsonl, read_json, validate_record
from leantrain.progress.labels import SorryPolicy, make_progress_data


def build_text(goal: str, prefix: str | None, tactic: str) -> str:
    """The model input, exactly the seed's: goal, the tactics so far, the candidate tactic."""
    return "Goal:\n" + goal + "\n\nPrefix:\n" + (prefix or "") + "\n\nCandidate tactic:\n" + tactic


def _check_rows(path: Path, objs: Sequence[tuple[int, Any]]) -> list[dict[str, Any]]:
    rows = []
    for index, obj in objs:
        row = validate_record(ProgressRow, obj, path=path, index=index)
        rows.append(
            {
                "goal": row.goal.strip(),
                "prefix": (row.prefix or "").strip(),
                "tactic": row.tactic.strip(),
                "steps_remaining": row.steps_remaining,
                **({"theorem": str(obj["theorem"])} if obj.get("theorem") is not None else {}),
            }
        )
    return rows


def load_progress_data(
    path: str | Path,
    *,
    splits: Sequence[str] = ("train",),
    strategy: str = "random",
    sorry_policy: SorryPolicy = "drop_theorem",
) -> list[dict[str, Any]]:
    """Progress rows from ``path``, validated.

    * ``.jsonl``: one progress row per line (what ``leantrain progress make-data`` writes);
    * ``.json``: an array of progress rows, or an array of traced theorems (labelled here);
    * a directory: an export / split directory of traced theorems (see ``make_progress_data``).

    Bad rows (missing fields, negative or non-integer ``steps_remaining``) and inputs with no
    rows raise :class:`~leantrain.core.errors.DataError` naming the file, record and field.
    """
    path = Path(path)
    if path.is_dir():
        return make_progress_data(path, splits=splits, strategy=strategy, sorry_policy=sorry_policy)
    if not path.is_file():
        raise DataError(
            path,
            "file not found",
            hint="give a progress .jsonl, a traced split .json or an export directory",
        )
    if path.suffix == ".jsonl":
        rows = _check_rows(path, list(iter_jsonl(path)))
    else:
        data = read_json(path)
        if not isinstance(data, list):
            raise DataError(
                path,
                f"expected a JSON array, got {type(data).__name__}",
                hint="give progress rows or traced theorems",
            )
        if data and isinstance(data[0], dict) and "traced_tactics" in data[0]:
            return make_progress_data(path, sorry_policy=sorry_policy)
        rows = _check_rows(path, list(enumerate(data)))
    if not rows:
        raise DataError(
            path,
            "no progress rows (the file is empty)",
            hint="make rows with 'leantrain progress make-data'",
        )
    return rows


class ProgressDataset:
    """Progress rows for regression training; ``to_hf()`` gives a ``datasets.Dataset``.

    ``data_path`` is anything :func:`load_progress_data` reads; ``rows`` may be given instead.
    """

    def __init__(
        self,
        data_path: str | Path | None = None,
        *,
        rows: Sequence[dict[str, Any]] | None = None,
        **options: Any,
    ) -> None:
        if (data_path is None) == (rows is None):
            raise ValueError("give exactly one of data_path and rows")
        self.data_path = data_path
        self.data = list(rows) if rows is not None else load_progress_data(data_path, **options)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return self.data[i]

    def texts(self) -> list[str]:
        """The model input text of every row."""
        return [build_text(r["goal"], r.get("prefix", ""), r["tactic"]) for r in self.data]

    def split(self, eval_ratio: float, seed: int = 42) -> tuple[ProgressDataset, ProgressDataset]:
        """Train/eval split that keeps all rows of one proof (same ``theorem``) on one side.

        Rows without a ``theorem`` key are split individually (like the seed). With
        ``eval_ratio`` 0 the eval side is empty.
        """
        if not 0 <= eval_ratio < 1:
            raise ValueError("eval_ratio must be in [0, 1)")
        groups: dict[str, list[int]] = {}
        for i, r in enumerate(self.data):
            groups.setdefault(r.get("theorem") or f"#row{i}", []).append(i)
        keys = sorted(groups)
        random.Random(seed).shuffle(keys)
        n_eval_rows = round(eval_ratio * len(self.data))
        eval_idx: list[int] = []
        for k in keys:
            if len(eval_idx) >= n_eval_rows:
                break
            eval_idx.extend(groups[k])
        if eval_ratio > 0 and len(eval_idx) >= len(self.data) and len(keys) > 1:
            eval_idx = groups[keys[0]]  # never leave the training side empty
        chosen = set(eval_idx)
        train = [r for i, r in enumerate(self.data) if i not in chosen]
        evals = [self.data[i] for i in sorted(chosen)]
        return ProgressDataset(rows=train), ProgressDataset(rows=evals)

    def to_hf(self) -> Any:
        """A ``datasets.Dataset`` with columns goal, prefix, tactic, steps_remaining."""
        from datasets import Dataset

        cols = ("goal", "prefix", "tactic", "steps_remaining")
        return Dataset.from_dict({c: [r.get(c, "") for r in self.data] for c in cols})
