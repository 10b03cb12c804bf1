"""leantrain.export — the database of traced Lean repositories and the LeanDojo-v2 export.

>>> from leantrain.export import Database, export_merged_data, lifelong_exports
>>> db = Database("lt.db")
>>> ids = db.import_path("../shared/data/lean4-example")
>>> export_merged_data(db, ids, "out/")             # doctest: +SKIP
"""

from leantrain.export.curriculum import RepoDifficulty, order_repositories, theorem_difficulty
from leantrain.export.database import DEFAULT_DB, Database, Repository, split_repo_id
from leantrain.export.export_config import ExportConfig
from leantrain.export.export_merged import ExportResult, export_merged_data
from leantrain.export.lifelong import LifelongStep, lifelong_exports
from leantrain.export.sources import RepoInfo, iter_json_array, read_source
from leantrain.export.trace import check_trace_requirements, trace_repository

__all__ = [
    "DEFAULT_DB",
    "Database",
    "ExportConfig",
    "ExportResult",
    "LifelongStep",
    "RepoDifficulty",
    "RepoInfo",
    "Repository",
    "check_trace_requirements",
    "export_merged_data",
    "iter_json_array",
    "lifelong_exports",
    "order_repositories",
    "read_source",
    "split_repo_id",
    "theorem_difficulty",
    "trace_repository",
]
