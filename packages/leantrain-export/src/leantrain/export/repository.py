"""Repository records of the database and the read interface the lower modules work on.

:class:`Repository` is one row of ``repositories`` with its counts; :class:`RepositoryReader`
is what :mod:`leantrain.export.curriculum` and :mod:`leantrain.export.dynamic_json` need from
a database (a connection, row ids of named repositories, the records), so that they depend on
this module only and :mod:`leantrain.export.database` imports them, not the other way round.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class Repository:
    """A repository of the database, with its counts."""

    url: str
    commit: str
    name: str
    lean_version: str = ""
    lean_dojo_version: str = ""
    date_processed: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    metadata: dict[str, Any] = field(default_factory=dict)
    pr_url: str | None = None
    num_theorems: int = 0
    num_tactics: int = 0
    num_premise_files: int = 0
    num_premises: int = 0
    num_traced_files: int = 0
    row_id: int = 0

    @property
    def id(self) -> str:
        """``"URL@COMMIT"``, the identifier used by the export API and the CLI."""
        return f"{self.url}@{self.commit}"

    def to_leandojo_json(self) -> dict[str, Any]:
        """The repository object of LeanDojo-v2's ``metadata.json`` / ``dynamic_database.json``
        (``date_processed`` inside ``metadata``)."""
        return {
            "url": self.url,
            "name": self.name,
            "commit": self.commit,
            "lean_version": self.lean_version,
            "lean_dojo_version": self.lean_dojo_version,
            "metadata": {**self.metadata, "date_processed": self.date_processed.isoformat()},
        }

    def to_json(self) -> dict[str, Any]:
        """JSON-ready summary (used by ``leantrain export list --json`` and metadata.json)."""
        return {
            "id": self.id,
            "url": self.url,
            "commit": self.commit,
            "name": self.name,
            "lean_version": self.lean_version,
            "lean_dojo_version": self.lean_dojo_version,
            "date_processed": self.date_processed.isoformat(),
            "metadata": self.metadata,
            "pr_url": self.pr_url,
            "num_theorems": self.num_theorems,
            "num_tactics": self.num_tactics,
            "num_premise_files": self.num_premise_files,
            "num_premises": self.num_premises,
            "num_traced_files": self.num_traced_files,
        }


def split_repo_id(ref: str) -> tuple[str, str] | None:
    """``(url, commit)`` of ``"URL@COMMIT"``, or None when ``ref`` has no ``@``."""
    if "@" not in ref:
        return None
    url, _, commit = ref.rpartition("@")
    return (url, commit) if url and commit else None


REPO_COLUMNS = (
    "r.id, r.url, r.commit_hash, r.name, r.lean_version, r.lean_dojo_version, r.date_processed, "
    "r.metadata, r.pr_url, "
    "(SELECT COUNT(*) FROM theorems t WHERE t.repo_id = r.id), "
    "(SELECT COALESCE(SUM(num_tactics), 0) FROM theorems t WHERE t.repo_id = r.id), "
    "(SELECT COUNT(*) FROM premise_files f WHERE f.repo_id = r.id), "
    "(SELECT COALESCE(SUM(f.num_premises), 0) FROM premise_files f WHERE f.repo_id = r.id), "
    "(SELECT COUNT(*) FROM traced_files x WHERE x.repo_id = r.id)"
)


def repo_from_row(row: tuple[Any, ...]) -> Repository:
    return Repository(
        row_id=row[0],
        url=row[1],
        commit=row[2],
        name=row[3],
        lean_version=row[4],
        lean_dojo_version=row[5],
        date_processed=dt.datetime.fromisoformat(row[6]),
        metadata=json.loads(row[7]),
        pr_url=row[8],
        num_theorems=row[9],
        num_tactics=row[10],
        num_premise_files=row[11],
        num_premises=row[12],
        num_traced_files=row[13],
    )


class RepositoryReader(Protocol):
    """What the curriculum and the JSON dump read from a database (:class:`~leantrain.export.Database`)."""

    conn: sqlite3.Connection

    def repo_row_ids(self, repos: list[str] | None) -> list[int]:
        """Row ids of the named repositories (all when None), validating every name."""
        ...

    def list_repositories(self) -> list[Repository]:
        """All repositories, in import order."""
        ...
