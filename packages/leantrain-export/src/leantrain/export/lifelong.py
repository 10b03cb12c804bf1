"""Lifelong exports: one merged export per repository added, in order, resumable.

``lifelong_exports(db, repos, data_path, skip=done)`` yields, for each repository not in
``skip``, a :class:`LifelongStep` whose ``data_dir`` holds the merged export of every
repository so far. Trainers train on ``step.data_dir``, checkpoint, and record the repository
as done in their run manifest; a resumed run passes the manifest's completed repositories as
``skip`` and picks up at the first repository not done.

The novel-premises hold-out rate is calibrated once over *all* ``repos`` and pinned in
``data_path/lifelong.json`` for every step (and every later call into the same ``data_path``:
see :func:`pin_novel_premise_rate`), and splits are hashed per theorem (:mod:`leantrain.export.splits`), so a theorem in
val/test at one step is in val/test at every later step (LeanDojo-v2 reshuffles instead).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_json
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


PLAN_NAME = "lifelong.json"
"""File under ``data_path`` that pins the novel-premises hold-out rate of a lifelong run."""


def _pinned_rate(data_path: Path, cfg: ExportConfig) -> float | None:
    """The rate pinned in ``data_path`` for the same seed and fractions, if any."""
    plan = data_path / PLAN_NAME
    if not plan.is_file():
        return None
    try:
        data = json.loads(plan.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None  # unreadable: calibrate again and rewrite it
    same = all(data.get(k) == getattr(cfg, k) for k in ("seed", "val_fraction", "test_fraction"))
    rate = data.get("novel_premise_rate")
    return float(rate) if same and isinstance(rate, (int, float)) else None


def pin_novel_premise_rate(
    db: Database | str | Path,
    repos: list[str],
    data_path: str | Path,
    config: ExportConfig | dict[str, Any] | None = None,
) -> float:
    """Calibrate the novel-premises hold-out rate over *all* ``repos`` and pin it in
    ``data_path/lifelong.json``; every later :func:`lifelong_exports` into ``data_path`` uses it.

    A caller that adds repositories one call at a time (the pipeline calls each trainer with the
    repositories so far) pins the rate over the whole list first, so that the novel-premises split
    of a theorem does not change from one step to the next. Returns the rate.
    """
    database = db if isinstance(db, Database) else Database(db, create=False)
    try:
        cfg = _config(config, {})
        ids = [database.get_repository(r).id for r in repos]
        hist, n = premise_count_histogram(database, ids, drop_tactics=cfg.drop_tactics)
        rate = calibrate_rate(cfg.val_fraction + cfg.test_fraction, hist, n)
    finally:
        if not isinstance(db, Database):
            database.close()
    atomic_write_json(
        Path(data_path) / PLAN_NAME,
        {
            "novel_premise_rate": rate,
            "repos": ids,
            "seed": cfg.seed,
            "val_fraction": cfg.val_fraction,
            "test_fraction": cfg.test_fraction,
        },
    )
    return rate


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
        data_path = Path(data_path)
        if cfg.novel_premise_rate is None:
            rate = _pinned_rate(data_path, cfg)
            if rate is None:
                rate = pin_novel_premise_rate(database, ids, data_path, cfg)
            cfg = _config(cfg, {"novel_premise_rate": rate})
        done = set(skip)
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
