"""The SQLite schema of the database, versioned with ``PRAGMA user_version``.

A database is at :data:`SCHEMA_VERSION`. One written by a newer leantrain-export is refused,
not guessed at; one of an older, development schema version (leantrain-export 0.1.0 is the
first release, so no released version wrote one) is refused with a hint to import again.

Only leantrain's own files are opened. A leantrain database carries ``PRAGMA application_id
= APPLICATION_ID`` (set when the schema is created). A new or empty file becomes a leantrain
database. Anything else — another application's database, a file that is not SQLite, a
truncated file, a leantrain database whose tables are gone — is a one-line
:class:`~leantrain.core.errors.DataError` naming the file and the fix; the file is left
untouched.

Concurrency: the database is in WAL mode (readers never block the writer) with a busy timeout
of :data:`BUSY_TIMEOUT_S`; the schema is created inside ``BEGIN IMMEDIATE`` and
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
from pathlib import Path

from leantrain.core.errors import DataError

SCHEMA = """
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
    extra             TEXT,                    -- unknown fields of the record, as JSON
    tactics_json      TEXT NOT NULL DEFAULT '[]',
    kept_json         TEXT,
    num_kept          INTEGER NOT NULL DEFAULT 0,
    uses_json         BLOB
);
CREATE INDEX theorems_key ON theorems (file_path, full_name, start_line, start_col, end_line, end_col);
CREATE INDEX theorems_repo ON theorems (repo_id, status, num_tactics);
CREATE TABLE premise_files (
    id                INTEGER PRIMARY KEY,
    repo_id           INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
    path              TEXT NOT NULL,
    imports           TEXT NOT NULL DEFAULT '[]',
    premises_json     TEXT NOT NULL DEFAULT '[]',
    num_premises      INTEGER NOT NULL DEFAULT 0,
    UNIQUE (repo_id, path)
);
CREATE TABLE traced_files (
    repo_id           INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
    idx               INTEGER NOT NULL,
    path              TEXT NOT NULL,
    PRIMARY KEY (repo_id, idx)
) WITHOUT ROWID;
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
"""The schema of a leantrain database (``PRAGMA user_version`` :data:`SCHEMA_VERSION`).

A theorem's traced tactics are one JSON value (UTF-8 bytes) in the exported form
(``tactics_json``; ``kept_json`` the same without the dropped tactics, NULL when none is
dropped; ``num_kept`` their number). Its premise uses (the premise annotations of its tactics)
are one JSON value too, ``uses_json``: ``[[tactic_idx, idx, kept, full_name, def_path,
def_line, def_col, def_end_line, def_end_col], …]`` in tactic order (``kept``: the tactic is
exported when tactics are dropped), NULL when it has none; ``premise_uses`` is a view of them
as rows, for SQL that reads them (1 and 0 for ``kept``). A corpus file's premises are one JSON
value in the exported form (``premise_files.premises_json``, ``num_premises``); its
``imports`` are JSON ``null`` when unknown (a file built from annotations). The index
``theorems_repo`` also holds ``status`` and ``num_tactics``, so that a repository's counts are
read from the index, not from rows that carry their tactics' JSON. (The JSON of ``uses_json``
is stored as UTF-8 bytes and cast to text for SQLite's JSON functions, which read a BLOB as
their binary format from SQLite 3.45 on.)"""

SCHEMA_VERSION = 5
"""The schema version this leantrain-export reads and writes. Versions 1–4 were development
versions, never released: such a database is refused with a hint to import again."""

TABLES = frozenset({"repositories", "theorems", "premise_uses", "premise_files", "traced_files"})
"""The tables (and the view ``premise_uses``) of a leantrain database."""

_OLD_TABLES = frozenset({"repositories", "theorems", "premise_files", "traced_files"})
"""Tables every development version had: with them, a database without ``application_id``
(written before it existed) is an old leantrain database, not another application's."""

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


def _state(conn: sqlite3.Connection, path: Path) -> str:
    """``"ok"`` or ``"create"`` (a new, empty file); DataError for a file that is not (or no
    longer) a usable leantrain database, or one of a development schema version."""
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
    if not tables and version == 0:
        return "create"
    ours = app == APPLICATION_ID or tables >= _OLD_TABLES
    if ours and version > SCHEMA_VERSION:
        raise DataError(
            path,
            f"database schema version {version} is newer than this leantrain-export "
            f"supports ({SCHEMA_VERSION})",
            hint="upgrade leantrain-export",
        )
    if ours and version < SCHEMA_VERSION:
        raise DataError(
            path,
            f"database schema version {version} was written by a development version of "
            f"leantrain-export (this one reads version {SCHEMA_VERSION})",
            hint="import your traced repositories again into a new file: "
            "leantrain export import PATH --db new.db",
        )
    if app == 0:
        shown = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
        raise DataError(
            path,
            f"not a leantrain database (it holds another application's tables: {shown or 'none'}; "
            "leantrain never adds its tables to such a file)",
            hint=_FIX_FOREIGN,
        )
    missing = TABLES - tables
    if missing:
        raise DataError(
            path,
            f"damaged leantrain database: table(s) {', '.join(sorted(missing))} are missing",
            hint=_FIX_DAMAGED,
        )
    return "ok"


def _ensure_schema(conn: sqlite3.Connection, path: Path) -> None:
    if _state(conn, path) == "ok":
        return
    conn.execute("BEGIN IMMEDIATE")  # the write lock: one process creates, the others wait
    try:
        if _state(conn, path) == "create":  # again, now that no one else can change it
            for statement in SCHEMA.split(";"):
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
    """Open (creating if needed) the leantrain database at ``path``.

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
        state = _state(conn, path)
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
