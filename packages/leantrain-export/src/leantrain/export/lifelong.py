"""The novel-premises hold-out rate of a lifelong run, pinned once for all its steps.

The lifelong engine (:mod:`leantrain.core.lifelong`) exports the merged data of the
repositories so far at every step through :meth:`Database.export_merged_data`; before the
first export of a run it calls :meth:`Database.prepare_lifelong`, which calibrates the rate
over *all* the run's repositories and pins it in ``data_path/lifelong.json`` (or reuses the
pin of an earlier, resumed call). Splits are hashed per theorem (:mod:`leantrain.export.splits`),
so a theorem in val/test at one step is in val/test at every later step (LeanDojo-v2
reshuffles instead).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_json
from leantrain.export.database import Database
from leantrain.export.export_config import ExportConfig
from leantrain.export.export_merged import _config, premise_count_histogram
from leantrain.export.splits import calibrate_rate

PLAN_NAME = "lifelong.json"
"""File under ``data_path`` that pins the novel-premises hold-out rate of a lifelong run."""


def pinned_rate(data_path: str | Path, cfg: ExportConfig | None = None) -> float | None:
    """The rate pinned in ``data_path`` for the same seed and fractions, if any."""
    cfg = cfg or ExportConfig()
    plan = Path(data_path) / PLAN_NAME
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
    ``data_path/lifelong.json``, where :meth:`Database.prepare_lifelong` finds it again.

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
            "calibrated_on": "tactics_with_premises",
        },
    )
    return rate
