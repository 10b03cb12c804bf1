"""leantrain.export — the database of traced Lean repositories and the LeanDojo-v2 export.

>>> from leantrain.export import Database, export_merged_data
>>> db = Database("lt.db")                                   # doctest: +SKIP
>>> ids = db.import_path("../shared/data/lean4-example")     # doctest: +SKIP
>>> export_merged_data(db, ids, "out/")                      # doctest: +SKIP

Names are loaded on first use (PEP 562), so that ``leantrain`` loading the ``export``
command's :mod:`leantrain.export.cli` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "DEFAULT_DB": "database",
    "Database": "database",
    "Repository": "repository",
    "split_repo_id": "repository",
    "ExportConfig": "export_config",
    "ExportResult": "export_merged",
    "export_merged_data": "export_merged",
    "pin_novel_premise_rate": "lifelong",
    "RepoDifficulty": "curriculum",
    "order_repositories": "curriculum",
    "RepoInfo": "sources",
    "iter_json_array": "sources",
    "read_source": "sources",
    "check_trace_requirements": "trace",
    "trace_repository": "trace",
}

__all__ = [
    "DEFAULT_DB",
    "Database",
    "ExportConfig",
    "ExportResult",
    "RepoDifficulty",
    "RepoInfo",
    "Repository",
    "check_trace_requirements",
    "export_merged_data",
    "iter_json_array",
    "order_repositories",
    "pin_novel_premise_rate",
    "read_source",
    "split_repo_id",
    "trace_repository",
]

if TYPE_CHECKING:
    from leantrain.export.curriculum import RepoDifficulty, order_repositories
    from leantrain.export.database import DEFAULT_DB, Database
    from leantrain.export.export_config import ExportConfig
    from leantrain.export.export_merged import ExportResult, export_merged_data
    from leantrain.export.lifelong import pin_novel_premise_rate
    from leantrain.export.repository import Repository, split_repo_id
    from leantrain.export.sources import RepoInfo, iter_json_array, read_source
    from leantrain.export.trace import check_trace_requirements, trace_repository


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'leantrain.export' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"leantrain.export.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
