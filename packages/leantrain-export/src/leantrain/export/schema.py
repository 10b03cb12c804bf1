"""The SQLite schema of the database, versioned with ``PRAGMA user_version`` and migrated on open.

Each entry of :data:`MIGRATIONS` takes the database from version ``i`` to ``i + 1``; opening a
database runs the missing ones inside one transaction, so a database is always at a version
this code knows. A database written by a newer leantrain-export is refused, not guessed at.

Only leantrain's own files are opened. A leantrain database carries ``PRAGMA application_id
= APPLICATION_ID`` (set when the schema is created). A new or empty file becomes a leantrain
database; a database written before the id existed (id 0, exactly leantrain's tables at a
known ``user_version``) is adopted (the id is set). Anything else — another application's
database, a file that is not SQLite, a truncated file, a leantrain database whose tables are
gone — is a one-line :class:`~leantrain.core.errors.DataError` naming the file and the fix;
the file is left untouched.

Concurrency: the database is in WAL mode (readers never block the writer) with a busy timeout
of :data:`BUSY_TIMEOUT_S`; the schema is created and migrated inside ``BEGIN IMMEDIATE`` and
checked again once the write lock is held, so any number of processes may open (and import
into) the same new file at once.

Positions are stored as two integer columns (line, column) so that the dedup key
``(file_path, full_name, start, end)`` is indexable; JSON columns (``metadata``, ``imports``,
``extra``) hold what has no fixed shape.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
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

_V2 = """
ALTER TABLE theorems ADD COLUMN tactics_json TEXT NOT NULL DEFAULT '[]';
ALTER TABLE theorems ADD COLUMN kept_json TEXT;
ALTER TABLE theorems ADD COLUMN num_kept INTEGER NOT NULL DEFAULT 0;
CREATE TABLE premise_uses (
    theorem_id        INTEGER NOT NULL REFERENCES theorems(id) ON DELETE CASCADE,
    tactic_idx        INTEGER NOT NULL,
    idx               INTEGER NOT NULL,
    kept              INTEGER NOT NULL,        -- 1: the tactic is exported when tactics are dropped
    full_name         TEXT NOT NULL,
    def_path          TEXT NOT NULL,
    def_line          INTEGER NOT NULL,
    def_col           INTEGER NOT NULL,
    def_end_line      INTEGER NOT NULL,
    def_end_col       INTEGER NOT NULL,
    PRIMARY KEY (theorem_id, tactic_idx, idx)
) WITHOUT ROWID;
"""
"""Version 2: a theorem's traced tactics are one JSON value (UTF-8 bytes) in the exported form
(``tactics_json``; ``kept_json`` the same without the dropped tactics, NULL when none is
dropped; ``num_kept`` their number), and the premise annotations, which SQL queries, are rows
of ``premise_uses``. The ``tactics`` and ``annotations`` tables of version 1 are converted by
:func:`leantrain.export.migrate_v2.upgrade` and dropped. Exporting no longer reassembles
every tactic from rows, and importing writes one row per theorem instead of one per tactic."""


def _upgrade_to_v2(conn: sqlite3.Connection) -> None:
    from leantrain.export.migrate_v2 import upgrade

    upgrade(conn, _V2)


_V3 = """
ALTER TABLE premise_files ADD COLUMN premises_json TEXT NOT NULL DEFAULT '[]';
ALTER TABLE premise_files ADD COLUMN num_premises INTEGER NOT NULL DEFAULT 0;
"""
"""Version 3: a corpus file's premises are one JSON value (UTF-8 bytes) in the exported form
(``premise_files.premises_json``, ``num_premises``) instead of a row each in ``premises``
(converted by :func:`leantrain.export.migrate_v3.upgrade`, then dropped): the corpus is
written by copying them."""


def _upgrade_to_v3(conn: sqlite3.Connection) -> None:
    from leantrain.export.migrate_v3 import upgrade

    upgrade(conn, _V3)


def _upgrade_to_v4(conn: sqlite3.Connection) -> None:
    """Version 4: corpus files built from annotations, stored with imports ``[]`` by older
    versions, get unknown imports (``null``), as an import writes them now (see
    :mod:`leantrain.export.migrate_v4`). No table changes."""
    from leantrain.export.migrate_v4 import upgrade

    upgrade(conn)


_V5 = """
ALTER TABLE theorems ADD COLUMN uses_json BLOB;
DROP INDEX theorems_repo;
CREATE INDEX theorems_repo ON theorems (repo_id, status, num_tactics);
CREATE VIEW premise_uses AS
SELECT t.id AS theorem_id,
       json_extract(u.value, '$[0]') AS tactic_idx,
       json_extract(u.value, '$[1]') AS idx,
       json_extract(u.value, '$[2]') AS kept,
       json_extract(u.value, '$[3]') AS full_name,
       json_extract(u.value, '$[4]') AS def_path,
       json_extract(u.value, '$[5]') AS def_line,
       json_extract(u.value, '$[6]') AS def_col,
       json_extract(u.value, '$[7]') AS def_end_line,
       json_extract(u.value, '$[8]') AS def_end_col
FROM theorems t, json_each(CAST(t.uses_json AS TEXT)) u
WHERE t.uses_json IS NOT NULL;
"""
"""Version 5: a theorem's premise uses (the premise annotations of its tactics) are one JSON
value on its row, ``theorems.uses_json``: ``[[tactic_idx, idx, kept, full_name, def_path,
def_line, def_col, def_end_line, def_end_col], …]`` in tactic order (``kept``: the tactic is
exported when tactics are dropped), NULL when it has none. ``premise_uses`` is now a view with
the columns the table of version 2 had (1 and 0 for ``kept``), for SQL that reads it; an import
no longer inserts a row per annotation. Converted by :func:`leantrain.export.migrate_v5.upgrade`.
The index ``theorems_repo`` also holds ``status`` and ``num_tactics``, so that a repository's
counts are read from the index, not from rows that carry their tactics' JSON.
(The JSON is stored as UTF-8 bytes and cast to text for SQLite's JSON functions, which read a
BLOB as their binary format from SQLite 3.45 on.)"""


def _upgrade_to_v5(conn: sqlite3.Connection) -> None:
    from leantrain.export.migrate_v5 import upgrade

    upgrade(conn, _V5)


MIGRATIONS: list[str | Callable[[sqlite3.Connection], None]] = [
    _V1,
    _upgrade_to_v2,
    _upgrade_to_v3,
    _upgrade_to_v4,
    _upgrade_to_v5,
]
"""``MIGRATIONS[i]`` upgrades a database from version ``i`` to ``i + 1`` (an SQL script, or a
function run on the connection inside the migration's transaction)."""

SCHEMA_VERSION = len(MIGRATIONS)

_TABLES = {
    1: frozenset(
        {"repositories", "theorems", "tactics", "annotations", "premise_files", "premises",
         "traced_files"}
    ),
    2: frozenset(
        {"repositories", "theorems", "premise_uses", "premise_files", "premises", "traced_files"}
    ),
    3: frozenset({"repositories", "theorems", "premise_uses", "premise_files", "traced_files"}),
}  # fmt: skip
_TABLES[4] = _TABLES[3]  # version 4 changed data, not tables
_TABLES[5] = _TABLES[4]  # premise_uses: a view from version 5 on

APPLICATION_ID = 0x4C54524E
"""``PRAGMA application_id`` of a leantrain database (``"LTRN"``)."""

BUSY_TIMEOUT_S = 60.0
"""How long a connection waits for another process's write lock before giving up."""

PAGE_SIZE = 65536
"""Page size of a new database (an existing one keeps its own)."""

CACHE_KIB = 65536
"""Page cache of a connection, in KiB."""

_SQLITE_MAGIC = b"SQLite format 3\x00"
_FIX_FOREIGN = "pass --db with a leantrain database, or a new file name to create one"
_FIX_DAMAGED = "restore it from a backup, or import into a new file (--db new.db)"


def tables_of_version(version: int) -> frozenset[str]:
    """The tables (and views: ``premise_uses`` from version 5 on) a leantrain database at
    schema ``version`` has."""
    return _TABLES.get(version, frozenset())


def _check_file(path: Path) -> None:
    """Refuse, before SQLite touches it, a path that cannot be a leantrain database."""
    if not path.exists():
        return
    if path.is_dir():
        raise DataError(
            path, "is a directory, not a database file", hint="pass --db with a file, e.g. lt.db"
        )
    if not path.is_file():  # a device, a FIFO (reading one would hang), a socket
        raise DataError(
            path,
            "is not a regular file, so not a database",
            hint="pass --db with a file, e.g. lt.db",
        )
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            header = f.read(100)
    except OSError as e:
        raise DataError(path, f"cannot read the database ({e.strerror or e})") from None
    if size == 0:
        return  # an empty file becomes a new database
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        raise DataError(
            path,
            "not a leantrain database (not an SQLite file at all: corrupted, or another kind of file)",
            hint=_FIX_FOREIGN,
        )
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    change_counter = header[24:28]
    pages = int.from_bytes(header[28:32], "big")
    size_valid = header[92:96] == change_counter and pages > 0
    wal = path.with_name(path.name + "-wal")
    wal_pending = wal.is_file() and wal.stat().st_size > 0
    if size_valid and not wal_pending and size < pages * page_size:
        raise DataError(
            path,
            f"the database is truncated ({size} of {pages * page_size} bytes)",
            hint=_FIX_DAMAGED,
        )


def _set_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch to WAL; a fresh file opened by several processes at once may be busy briefly."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e):
                raise
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _state(conn: sqlite3.Connection, path: Path) -> tuple[str, int]:
    """``("ok" | "create" | "adopt" | "migrate", user_version)``; DataError for a file that is
    not (or no longer) a usable leantrain database."""
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = {
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%'"
        )
    }
    if app not in (0, APPLICATION_ID):
        raise DataError(
            path,
            f"not a leantrain database (it belongs to another application: application_id "
            f"{app:#x})",
            hint=_FIX_FOREIGN,
        )
    if version > SCHEMA_VERSION and (app == APPLICATION_ID or tables >= tables_of_version(1)):
        raise DataError(
            path,
            f"database schema version {version} is newer than this leantrain-export "
            f"supports ({SCHEMA_VERSION})",
            hint="upgrade leantrain-export",
        )
    if app == 0:
        if not tables and version == 0:
            return "create", version
        if 1 <= version <= SCHEMA_VERSION and tables == tables_of_version(version):
            return "adopt", version  # written by leantrain before application_id existed
        shown = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
        raise DataError(
            path,
            f"not a leantrain database (it holds another application's tables: {shown or 'none'}; "
            "leantrain never adds its tables to such a file)",
            hint=_FIX_FOREIGN,
        )
    missing = tables_of_version(version) - tables
    if missing:
        raise DataError(
            path,
            f"damaged leantrain database: table(s) {', '.join(sorted(missing))} are missing",
            hint=_FIX_DAMAGED,
        )
    return ("ok" if version == SCHEMA_VERSION else "migrate"), version


def _ensure_schema(conn: sqlite3.Connection, path: Path) -> None:
    state, _ = _state(conn, path)
    if state == "ok":
        return
    conn.execute("BEGIN IMMEDIATE")  # the write lock: one process creates, the others wait
    try:
        state, version = _state(conn, path)  # again, now that no one else can change it
        if state != "ok":
            for step in MIGRATIONS[version:]:
                if callable(step):
                    step(conn)
                    continue
                for statement in step.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def connect(
    path: str | Path, *, create: bool = True, timeout: float = BUSY_TIMEOUT_S
) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the leantrain database at ``path``.

    The connection is in autocommit mode (``isolation_level=None``): callers open explicit
    transactions, so that one import is exactly one transaction. ``create=False`` refuses an
    empty file instead of making it a database. A file that is not leantrain's is a
    :class:`DataError` and is left untouched.
    """
    path = Path(path)
    _check_file(path)
    try:
        conn = sqlite3.connect(
            os.fspath(path), timeout=timeout, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as e:
        raise DataError(
            path,
            f"cannot open or create the database ({e})",
            hint="pass --db with a file in a directory you can write",
        ) from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        conn.execute("PRAGMA foreign_keys = ON")
        # Check before WAL is switched on: switching writes to the file, and a foreign file
        # must stay exactly as it was.
        state, _ = _state(conn, path)
        if state == "create" and not create:
            raise DataError(
                path,
                "holds no leantrain data yet (an empty database)",
                hint=f"import data first: leantrain export import PATH --db {path}",
            )
        if state == "create":  # big pages: a bulk import writes far fewer of them
            conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
        # WAL: readers do not block the writer; a killed writer's transaction is rolled back.
        _set_wal(conn, timeout)
        conn.execute("PRAGMA synchronous = NORMAL")
        # A 100k-theorem import touches ~hundreds of MiB: keep its pages in memory until
        # COMMIT rather than spilling them (the cache is allocated only as it fills).
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        conn.execute("PRAGMA temp_store = MEMORY")
        _ensure_schema(conn, path)
    except sqlite3.OperationalError as e:
        conn.close()
        if "locked" in str(e) or "busy" in str(e):
            raise DataError(
                path,
                f"the database stayed locked by another process for {timeout:.0f} s",
                hint="wait for the other leantrain process to finish, then run this again",
            ) from None
        raise DataError(path, f"cannot read the database ({e})", hint=_FIX_DAMAGED) from None
    except (sqlite3.DatabaseError, UnicodeDecodeError) as e:  # damaged text is not UTF-8
        conn.close()
        raise DataError(
            path, f"not a leantrain database, or a damaged one ({e})", hint=_FIX_DAMAGED
        ) from None
    except BaseException:
        conn.close()
        raise
    return conn
