"""Lifelong exports: one merged export per repository added, in order, resumable.

``lifelong_exports(db, repos, data_path, skip=done)`` yields, for each repository not in
``skip``, a :class:`LifelongStep` whose ``data_dir`` holds the merged export of every
repository so far. Trainers train on ``step.data_dir``, checkpoint, and record the repository
as done in their run manifest; a resumed run passes the manifest's completed repositories as
``skip`` and picks up at the first repository not done.

The novel-premises hold-out rate is calibrated once over *all* ``repos`` and kept for every
step, and splits are hashed per theorem (:mod:`leantrain.export.splits`), so a theorem in
val/test at one step is in val/test at every later step (LeanDojo-v2 reshuffles instead).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError
from leantrain.export.database import Database
from leantrain.export.export_config import ExportConfig
from leantrain.export.export_merged import (
    ExportResult,
    _config,
    export_merged_data,
    premise_count_histogram,
)
from leantrain.export.splits import calibrate_rate


@dataclass
class LifelongStep:
    """One step of lifelong training: ``repo`` was just added; ``data_dir`` is the export of
    ``repos_so_far`` (``repo`` included)."""

    index: int
    repo: str
    repos_so_far: list[str]
    data_dir: Path
    result: ExportResult


def step_dir_name(index: int, repo: str) -> str:
    """``"003_owner-name"``: the directory of step ``index`` (sortable, filesystem-safe)."""
    url = repo.rpartition("@")[0] or repo
    tail = "-".join(p for p in re.split(r"[/:]", url.rstrip("/")) if p)[-60:]
    return f"{index:03d}_{re.sub(r'[^A-Za-z0-9._-]+', '-', tail).strip('-') or 'repo'}"


def lifelong_exports(
    db: Database | str | Path,
    repos: list[str] | None,
    data_path: str | Path,
    *,
    skip: Iterable[str] = (),
    config: ExportConfig | dict[str, Any] | None = None,
    **overrides: Any,
) -> Iterator[LifelongStep]:
    """Yield a :class:`LifelongStep` per repository of ``repos`` (None: the curriculum order).

    Each step's export is written to ``data_path / step_dir_name(index, repo)``. Repositories
    in ``skip`` (ids) are not exported again but stay in ``repos_so_far`` of later steps.
    """
    database = db if isinstance(db, Database) else Database(db, create=False)
    try:
        order = database.curriculum() if repos is None else list(repos)
        if not order:
            raise DataError(
                database.path,
                "empty selection: no repositories to train on",
                hint="import data first",
            )
        ids = [database.get_repository(r).id for r in order]  # validate names, normalise to ids
        cfg = _config(config, overrides)
        if cfg.novel_premise_rate is None:
            hist, n = premise_count_histogram(database, ids, drop_tactics=cfg.drop_tactics)
            cfg = _config(
                cfg,
                {
                    "novel_premise_rate": calibrate_rate(
                        cfg.val_fraction + cfg.test_fraction, hist, n
                    )
                },
            )
        done = set(skip)
        data_path = Path(data_path)
        for index, repo in enumerate(ids):
            if repo in done or order[index] in done:
                continue
            so_far = ids[: index + 1]
            out = data_path / step_dir_name(index, repo)
            result = export_merged_data(database, so_far, out, cfg)
            yield LifelongStep(
                index=index, repo=repo, repos_so_far=so_far, data_dir=out, result=result
            )
    finally:
        if not isinstance(db, Database):
            database.close()
