"""The SQLite schema of the database, versioned with ``PRAGMA user_version`` and migrated on open.

Each entry of :data:`MIGRATIONS` takes the database from version ``i`` to ``i + 1``; opening a
database runs the missing ones inside one transaction, so a database is always at a version
this code knows. A database written by a newer leantrain-export is refused, not guessed at.

Positions are stored as two integer columns (line, column) so that the dedup key
``(file_path, full_name, start, end)`` is indexable; JSON columns (``metadata``, ``imports``,
``extra``) hold what has no fixed shape.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from leantrain.core.errors import DataError

_V1 = """
CREATE TABLE repositories (
    id                INTEGER PRIMARY KEY,
    url               TEXT NOT NULL,
    commit_hash       TEXT NOT NULL,
    name              TEXT NOT NULL,
    lean_version      TEXT NOT NULL DEFAULT '',
    lean_dojo_version TEXT NOT NULL DEFAULT '',
    date_processed    TEXT NOT NULL,           -- ISO 8601 in UTC: sorts as text
    metadata          TEXT NOT NULL DEFAULT '{}',
    pr_url            TEXT,
    UNIQUE (url, commit_hash)
);
CREATE TABLE theorems (
    id                INTEGER PRIMARY KEY,
    repo_id           INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
    file_path         TEXT NOT NULL,
    full_name         TEXT NOT NULL,
    theorem_statement TEXT,
    start_line        INTEGER NOT NULL,
    start_col         INTEGER NOT NULL,
    end_line          INTEGER NOT NULL,
    end_col           INTEGER NOT NULL,
    status            TEXT NOT NULL,           -- proven | sorry_proved | sorry_unproved
    num_tactics       INTEGER NOT NULL,
    extra             TEXT                     -- unknown fields of the record, as JSON
);
CREATE INDEX theorems_repo ON theorems (repo_id);
CREATE INDEX theorems_key ON theorems (file_path, full_name, start_line, start_col, end_line, end_col);
CREATE TABLE tactics (
    id                INTEGER PRIMARY KEY,
    theorem_id        INTEGER NOT NULL REFERENCES theorems(id) ON DELETE CASCADE,
    idx               INTEGER NOT NULL,
    tactic            TEXT NOT NULL,
    annotated_text    TEXT,                    -- NULL: the source had no annotation
    state_before      TEXT NOT NULL,
    state_after       TEXT NOT NULL,
    extra             TEXT
);
CREATE INDEX tactics_theorem ON tactics (theorem_id, idx);
CREATE TABLE annotations (
    tactic_id         INTEGER NOT NULL REFERENCES tactics(id) ON DELETE CASCADE,
    idx               INTEGER NOT NULL,
    full_name         TEXT NOT NULL,
    def_path          TEXT NOT NULL,
    def_line          INTEGER NOT NULL,
    def_col           INTEGER NOT NULL,
    def_end_line      INTEGER NOT NULL,
    def_end_col       INTEGER NOT NULL,
    PRIMARY KEY (tactic_id, idx)
) WITHOUT ROWID;
CREATE TABLE premise_files (
    id                INTEGER PRIMARY KEY,
    repo_id           INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
    path              TEXT NOT NULL,
    imports           TEXT NOT NULL DEFAULT '[]',
    UNIQUE (repo_id, path)
);
CREATE TABLE premises (
    file_id           INTEGER NOT NULL REFERENCES premise_files(id) ON DELETE CASCADE,
    idx               INTEGER NOT NULL,
    full_name         TEXT NOT NULL,
    code              TEXT NOT NULL,
    start_line        INTEGER NOT NULL,
    start_col         INTEGER NOT NULL,
    end_line          INTEGER NOT NULL,
    end_col           INTEGER NOT NULL,
    kind              TEXT NOT NULL,
    extra             TEXT,
    PRIMARY KEY (file_id, idx)
) WITHOUT ROWID;
CREATE TABLE traced_files (
    repo_id           INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
    idx               INTEGER NOT NULL,
    path              TEXT NOT NULL,
    PRIMARY KEY (repo_id, idx)
) WITHOUT ROWID;
"""

MIGRATIONS: list[str] = [_V1]
"""SQL scripts; ``MIGRATIONS[i]`` upgrades a database from version ``i`` to ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)


def connect(path: str | Path) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the database at ``path``; returns the connection.

    The connection is in autocommit mode (``isolation_level=None``): callers open explicit
    transactions, so that one import is exactly one transaction.
    """
    try:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA foreign_keys = ON")
        # WAL: readers do not block the writer; a killed writer's transaction is rolled back.
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as e:
        raise DataError(
            path,
            f"not a leantrain database ({e})",
            hint="pass --db with a database created by 'leantrain export import'",
        ) from None
    if version > SCHEMA_VERSION:
        conn.close()
        raise DataError(
            path,
            f"database schema version {version} is newer than this leantrain-export "
            f"supports ({SCHEMA_VERSION})",
            hint="upgrade leantrain-export",
        )
    if version < SCHEMA_VERSION:
        try:
            conn.execute("BEGIN IMMEDIATE")
            for script in MIGRATIONS[version:]:
                for statement in script.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.close()
            raise
    return conn
