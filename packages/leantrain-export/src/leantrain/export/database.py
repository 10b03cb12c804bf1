"""The database of traced Lean repositories: one SQLite file.

It holds repositories (url, commit, name, Lean and LeanDojo versions, date processed, free
metadata), their theorems with traced tactics and premise annotations, premise files with
premises (the corpus) and traced files. Every write is one transaction: a process killed in
the middle of an import leaves the database exactly as it was before the import began.

A repository is named by its id ``"URL@COMMIT"`` (the URL may itself contain ``@``; the id is
split at the last one); :meth:`Database.get_repository` also accepts a unique URL or name.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError
from leantrain.export.checkpoint import BackgroundCheckpointer
from leantrain.export.curriculum import order_repositories
from leantrain.export.dynamic_json import dump_dynamic_database
from leantrain.export.gc_pause import gc_paused
from leantrain.export.importer import import_items, iso
from leantrain.export.repository import REPO_COLUMNS, Repository, repo_from_row, split_repo_id
from leantrain.export.schema import connect
from leantrain.export.sources import RepoInfo, read_source

__all__ = ["DEFAULT_DB", "Database", "Repository", "open_checked", "split_repo_id"]

DEFAULT_DB = "leantrain.db"


_SYSTEM_ROOTS = ("/proc", "/sys", "/dev", "/etc", "/bin", "/sbin", "/usr", "/boot")


def _in_system_dir(path: Path) -> bool:
    resolved = path.expanduser().resolve()
    return any(resolved == Path(r) or Path(r) in resolved.parents for r in _SYSTEM_ROOTS)


class Database:
    """A SQLite database of traced repositories (created on open).

    ``Database("lt.db")`` opens or creates the file; ``create=False`` refuses a missing or
    empty one (what the read-only CLI commands use). A file that is not leantrain's (another
    application's SQLite database, a corrupted or truncated file) is refused with a
    :class:`DataError` and left untouched (see :mod:`leantrain.export.schema`). Use it as a
    context manager or call :meth:`close`.
    """

    def __init__(self, path: str | Path = DEFAULT_DB, *, create: bool = True) -> None:
        if not str(path).strip():
            raise DataError(None, "the database path is empty", hint="pass --db FILE, e.g. lt.db")
        self.path = Path(path)
        if create and not self.path.exists() and _in_system_dir(self.path):
            raise DataError(
                self.path,
                "will not create a database in a system directory",
                hint="pass --db with a file of your own, e.g. lt.db",
            )
        if not create and not self.path.exists():
            raise DataError(
                self.path,
                "no database here",
                hint="import data first: leantrain export import PATH --db " + str(self.path),
            )
        if create and not self.path.parent.exists():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise DataError(
                    self.path,
                    f"cannot create its directory ({e.strerror or e})",
                    hint="pass --db with a file in a directory you can write",
                ) from None
        self.conn = connect(self.path, create=create)
        self._checkpoints = BackgroundCheckpointer(self.conn, self.path)

    # -- plumbing -------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection (after the background checkpoint, if one is running)."""
        self._checkpoints.wait()
        self.conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Database({str(self.path)!r})"

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed at the end, rolled back on any exception. The
        WAL is checkpointed in the background afterwards (:mod:`leantrain.export.checkpoint`)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        self._checkpoints.after_commit()

    # -- import ---------------------------------------------------------------------------------
    def import_path(
        self,
        path: str | Path,
        *,
        date_processed: dt.datetime | None = None,
        lean_sources: str | Path | None = None,
    ) -> list[str]:
        """Import a LeanDojo-v2 export dir, a LeanDojo benchmark dir or a dynamic_database.json.

        A repository already in the database (same url and commit) is replaced. Everything
        happens in one transaction. ``date_processed`` overrides the date the source gives
        (default: the source's own date, else now). ``lean_sources``: the traced repository's
        checkout, whose Lean files give each theorem's proof text
        (:func:`~leantrain.export.whole_proofs.with_source_proofs`). Returns the imported
        repository ids.
        """
        items = read_source(path, records=True)
        if lean_sources is not None:
            from leantrain.export.whole_proofs import with_source_proofs

            items = with_source_proofs(items, lean_sources)
        with gc_paused(), self.transaction() as conn:
            return import_items(conn, items, date_processed=date_processed)

    def import_sample(self) -> list[str]:
        """Import the sample repositories shipped with leantrain-core; returns their ids."""
        from leantrain.core.sample import sample_repo_dirs

        dirs = sample_repo_dirs()
        if not dirs:
            raise DataError(
                None, "leantrain-core ships no sample repositories", hint="reinstall leantrain-core"
            )
        ids: list[str] = []
        with self.transaction() as conn:
            for d in dirs:
                ids += import_items(conn, read_source(d, records=True))
        return ids

    # -- lifelong export (the protocol of leantrain.core.lifelong) -------------------------------
    def prepare_lifelong(self, repos: list[Any] | None, data_path: str | Path) -> float:
        """Pin the novel-premises hold-out rate over every repository of a lifelong run (``None``:
        the curriculum) in ``data_path/lifelong.json``, so that a theorem's novel-premises split
        never changes from one step to the next (a pin already there is kept); later
        :meth:`export_merged_data` calls use it."""
        from leantrain.export.lifelong import pin_novel_premise_rate, pinned_rate

        rate = pinned_rate(data_path)  # a resumed or extended run keeps its first pin
        if rate is None:
            ids = self.curriculum() if not repos else [self._ref(r) for r in repos]
            rate = pin_novel_premise_rate(self, ids, data_path)
        self._novel_premise_rate = rate
        return rate

    def export_merged_data(self, repos: list[Any], out_dir: str | Path, **overrides: Any) -> Any:
        """Export the merged data of ``repos`` (ids, names, or objects with ``url`` and
        ``commit``) to ``out_dir`` — the method LeanDojo-v2's ``DynamicDatabase`` has, so that
        trainers take either. Returns the :class:`~leantrain.export.ExportResult`."""
        from leantrain.export.export_merged import export_merged_data

        rate = getattr(self, "_novel_premise_rate", None)
        if rate is not None:
            overrides.setdefault("novel_premise_rate", rate)
        return export_merged_data(self, [self._ref(r) for r in repos], out_dir, **overrides)

    @staticmethod
    def _ref(repo: Any) -> str:
        if isinstance(repo, str):
            return repo
        return f"{repo.url}@{repo.commit}"

    # -- repositories ---------------------------------------------------------------------------
    def list_repositories(self) -> list[Repository]:
        """All repositories, in import order."""
        rows = self.conn.execute(
            f"SELECT {REPO_COLUMNS} FROM repositories r ORDER BY r.id"
        ).fetchall()
        return [repo_from_row(r) for r in rows]

    def find_repository(self, ref: str) -> Repository | None:
        """The repository named by ``"URL@COMMIT"``, or by a URL or name that is unique; or None."""
        key = split_repo_id(ref)
        rows: list[tuple[Any, ...]] = []
        if key is not None:
            rows = self.conn.execute(
                f"SELECT {REPO_COLUMNS} FROM repositories r WHERE r.url = ? AND r.commit_hash = ?",
                key,
            ).fetchall()
        if not rows:
            rows = self.conn.execute(
                f"SELECT {REPO_COLUMNS} FROM repositories r WHERE r.url = ? OR r.name = ?",
                (ref, ref),
            ).fetchall()
            if len(rows) > 1:
                raise DataError(
                    self.path,
                    f"'{ref}' names {len(rows)} repositories",
                    hint="use the full id URL@COMMIT (see 'leantrain export list')",
                )
        return repo_from_row(rows[0]) if rows else None

    def get_repository(self, ref: str) -> Repository:
        """Like :meth:`find_repository`, but an unknown repository is a :class:`DataError`."""
        repo = self.find_repository(ref)
        if repo is None:
            import difflib

            ids = [r.id for r in self.list_repositories()]
            close = difflib.get_close_matches(ref, ids, n=1, cutoff=0.5)
            hint = (
                f"did you mean '{close[0]}'?"
                if close
                else "run 'leantrain export list' to see the ids"
            )
            raise DataError(self.path, f"unknown repository '{ref}'", hint=hint)
        return repo

    def add_repository(self, info: RepoInfo | Repository) -> Repository:
        """Add an empty repository record (its data comes from an import); returns it."""
        date = info.date_processed or dt.datetime.now(dt.UTC)
        with self.transaction() as conn:
            try:
                conn.execute(
                    "INSERT INTO repositories (url, commit_hash, name, lean_version, lean_dojo_version, "
                    "date_processed, metadata, pr_url) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        info.url,
                        info.commit,
                        info.name or info.url,
                        info.lean_version,
                        info.lean_dojo_version,
                        iso(date),
                        json.dumps(info.metadata, default=str),
                        info.pr_url,
                    ),
                )
            except sqlite3.IntegrityError:
                raise DataError(
                    self.path,
                    f"repository '{info.url}@{info.commit}' already exists",
                    hint="use update_repository, or delete it first",
                ) from None
        return self.get_repository(f"{info.url}@{info.commit}")

    _UPDATABLE = (
        "name",
        "lean_version",
        "lean_dojo_version",
        "date_processed",
        "metadata",
        "pr_url",
    )

    def update_repository(self, ref: str, **fields: Any) -> Repository:
        """Change fields (``name``, ``lean_version``, ``lean_dojo_version``, ``date_processed``,
        ``metadata``, ``pr_url``) of a repository; returns the updated record."""
        repo = self.get_repository(ref)
        unknown = set(fields) - set(self._UPDATABLE)
        if unknown:
            raise DataError(
                self.path,
                f"cannot update field(s) {sorted(unknown)}",
                hint=f"updatable fields: {', '.join(self._UPDATABLE)}",
            )
        values = dict(fields)
        if "date_processed" in values:
            from leantrain.export.sources import parse_datetime

            values["date_processed"] = iso(parse_datetime(values["date_processed"]))
        if "metadata" in values:
            values["metadata"] = json.dumps(values["metadata"], default=str)
        if values:
            sets = ", ".join(f"{k} = ?" for k in values)
            with self.transaction() as conn:
                conn.execute(
                    f"UPDATE repositories SET {sets} WHERE id = ?", (*values.values(), repo.row_id)
                )
        return self.get_repository(repo.id)

    def delete_repository(self, ref: str) -> None:
        """Delete a repository and everything it holds (one transaction)."""
        repo = self.get_repository(ref)
        with self.transaction() as conn:
            conn.execute("DELETE FROM repositories WHERE id = ?", (repo.row_id,))

    def stats(self) -> dict[str, Any]:
        """Counts over the whole database (repositories, theorems, tactics, annotations, …)."""
        q = self.conn.execute
        out = {
            "repositories": q("SELECT COUNT(*) FROM repositories").fetchone()[0],
            "theorems": q("SELECT COUNT(*) FROM theorems").fetchone()[0],
            "proven_theorems": q(
                "SELECT COUNT(*) FROM theorems WHERE status = 'proven'"
            ).fetchone()[0],
            "sorry_theorems": q(
                "SELECT COUNT(*) FROM theorems WHERE status != 'proven'"
            ).fetchone()[0],
            "tactics": q("SELECT COALESCE(SUM(num_tactics), 0) FROM theorems").fetchone()[0],
            "annotations": q("SELECT COUNT(*) FROM premise_uses").fetchone()[0],
            "distinct_annotated_premises": q(
                "SELECT COUNT(DISTINCT full_name) FROM premise_uses"
            ).fetchone()[0],
            "premise_files": q("SELECT COUNT(*) FROM premise_files").fetchone()[0],
            "premises": q("SELECT COALESCE(SUM(num_premises), 0) FROM premise_files").fetchone()[0],
            "traced_files": q("SELECT COUNT(*) FROM traced_files").fetchone()[0],
        }
        out["schema_version"] = q("PRAGMA user_version").fetchone()[0]
        return out

    # -- reading --------------------------------------------------------------------------------
    def repo_row_ids(self, repos: list[str] | None) -> list[int]:
        """Row ids of the named repositories (all when None), validating every name."""
        if repos is None:
            return [r[0] for r in self.conn.execute("SELECT id FROM repositories ORDER BY id")]
        return [self.get_repository(ref).row_id for ref in repos]

    def curriculum(self, repos: list[str] | None = None) -> list[str]:
        """Repository ids ordered easiest first (see :mod:`leantrain.export.curriculum`)."""
        return [d.repo_id for d in order_repositories(self, repos)]

    def dump_json(self, path: str | Path, repos: list[str] | None = None) -> Path:
        """Write the database (or the named repositories) as a LeanDojo-v2 ``dynamic_database.json``."""
        return dump_dynamic_database(self, path, repos)


def open_checked(path: str | Path) -> Database:
    """An existing database, read whole first (SQLite's ``PRAGMA quick_check``): a damaged
    file — truncated, overwritten pages — is one :class:`DataError` naming it, before a run
    starts, not ``database disk image is malformed`` from the middle of a query. The opener of
    the ``leantrain.databases`` entry point (how a lifelong run opens ``--database``)."""
    db = Database(path, create=False)
    try:
        rows = db.conn.execute("PRAGMA quick_check").fetchall()
        problem = None if rows == [("ok",)] else "; ".join(str(r[0]) for r in rows[:2])
    except sqlite3.DatabaseError as e:
        problem = str(e)
    if problem is not None:
        db.close()  # closing removes the -wal / -shm files opening made
        raise DataError(
            path,
            f"the database is damaged ({problem})".split("\n")[0],
            hint="restore it from a backup, or import into a new file",
        )
    return db
