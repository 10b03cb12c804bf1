"""Schema version 2 → 3: a corpus file's premises become one JSON text (see ``schema._V3``).

Version 2 stored each premise of ``corpus.jsonl`` as a row of ``premises``; the export built
every premise's JSON again. Version 3 keeps, per premise file, its premises already in the
exported form (``premise_files.premises_json``, ``num_premises``). This module converts a
version-2 database in place, inside the transaction of the migration.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from leantrain.export.fast_rows import dumps, premise_entries


def upgrade(conn: sqlite3.Connection, ddl: str) -> None:
    """Run ``ddl`` (the version-3 script), move the premise rows over, drop ``premises``."""
    for statement in ddl.split(";"):
        if statement.strip():
            conn.execute(statement)
    updates: list[tuple[Any, ...]] = []
    current: int | None = None
    rows: list[tuple[Any, ...]] = []
    for fid, *premise in conn.execute(
        "SELECT file_id, full_name, code, start_line, start_col, end_line, end_col, kind, extra "
        "FROM premises ORDER BY file_id, idx"
    ):
        if fid != current:
            if current is not None:
                updates.append(_update(current, rows))
            current, rows = fid, []
        rows.append(tuple(premise))
        if len(updates) >= 1000:
            _write(conn, updates)
    if current is not None:
        updates.append(_update(current, rows))
    _write(conn, updates)
    conn.execute("DROP TABLE premises")


def _update(fid: int, rows: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    return dumps(premise_entries(rows)), len(rows), fid


def _write(conn: sqlite3.Connection, updates: list[tuple[Any, ...]]) -> None:
    conn.executemany(
        "UPDATE premise_files SET premises_json = ?, num_premises = ? WHERE id = ?", updates
    )
    updates.clear()
