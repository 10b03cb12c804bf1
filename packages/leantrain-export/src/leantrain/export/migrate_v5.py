"""Schema version 4 → 5: a theorem's premise uses become one JSON value (see ``schema._V5``).

Version 4 stored each premise annotation of an exported tactic as a row of the table
``premise_uses``: ~3 rows per theorem, each inserted with its foreign-key check, which took
a tenth of a large import. Version 5 keeps them on the theorem's row (``theorems.uses_json``)
and ``premise_uses`` becomes a view of the same columns over it. This module converts a
version-4 database in place, inside the transaction of the migration.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from leantrain.export.fast_rows import dumps


def upgrade(conn: sqlite3.Connection, ddl: str) -> None:
    """Move the rows of the ``premise_uses`` table onto their theorems, drop it, run ``ddl``
    (the version-5 script: the column is added first, the view created last)."""
    statements = [s for s in ddl.split(";") if s.strip()]
    conn.execute(statements[0])  # the new column
    updates: list[tuple[Any, ...]] = []
    current: int | None = None
    uses: list[list[Any]] = []
    for tid, *use in conn.execute(
        "SELECT theorem_id, tactic_idx, idx, kept, full_name, def_path, def_line, def_col, "
        "def_end_line, def_end_col FROM premise_uses ORDER BY theorem_id, tactic_idx, idx"
    ):
        if tid != current:
            if current is not None:
                updates.append((dumps(uses), current))
            current, uses = tid, []
        use[2] = bool(use[2])  # kept
        uses.append(use)
        if len(updates) >= 1000:
            _write(conn, updates)
    if current is not None:
        updates.append((dumps(uses), current))
    _write(conn, updates)
    conn.execute("DROP TABLE premise_uses")
    for statement in statements[1:]:
        conn.execute(statement)


def _write(conn: sqlite3.Connection, updates: list[tuple[Any, ...]]) -> None:
    conn.executemany("UPDATE theorems SET uses_json = ? WHERE id = ?", updates)
    updates.clear()
