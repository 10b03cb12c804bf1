"""Schema version 1 → 2: tactics become one JSON text per theorem (see ``schema._V2``).

Version 1 stored each traced tactic as a row of ``tactics`` and each premise annotation as a row
of ``annotations``; exporting reassembled every theorem from those rows. Version 2 keeps, per
theorem, its tactics already in the exported form (``theorems.tactics_json``, ``kept_json``,
``num_kept``) and the annotations as ``premise_uses`` rows keyed by theorem (with ``kept``, so
SQL sees what an export that drops tactics uses). This module converts a version-1 database in
place, inside the transaction of the migration (a failure leaves it at version 1).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from leantrain.export.fast_rows import kept, tactics_json

_V1_KEPT = "(ta.state_before != 'no goals' AND instr(ta.tactic, '·') = 0)"


def upgrade(conn: sqlite3.Connection, ddl: str) -> None:
    """Run ``ddl`` (the version-2 script), move the version-1 rows over, drop the old tables."""
    for statement in ddl.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute(
        "INSERT INTO premise_uses SELECT ta.theorem_id, ta.idx, a.idx, "
        f"{_V1_KEPT}, a.full_name, a.def_path, a.def_line, a.def_col, a.def_end_line, "
        "a.def_end_col FROM annotations a JOIN tactics ta ON ta.id = a.tactic_id"
    )
    updates: list[tuple[Any, ...]] = []
    for tid, entries, keep in _v1_tactics(conn):
        updates.append((*tactics_json(entries, keep), tid))
        if len(updates) >= 10_000:
            _write(conn, updates)
    _write(conn, updates)
    conn.execute("DROP TABLE annotations")
    conn.execute("DROP TABLE tactics")


def _write(conn: sqlite3.Connection, updates: list[tuple[Any, ...]]) -> None:
    conn.executemany(
        "UPDATE theorems SET tactics_json = ?, kept_json = ?, num_kept = ? WHERE id = ?", updates
    )
    updates.clear()


def _v1_tactics(conn: sqlite3.Connection) -> Any:
    """``(theorem_id, exported tactic dicts, kept flags)`` of every version-1 theorem with
    tactics, in id order (the reassembly version 1's export did)."""
    tactics = conn.execute(
        "SELECT ta.theorem_id, ta.id, ta.tactic, ta.annotated_text, ta.state_before, "
        "ta.state_after, ta.extra FROM tactics ta ORDER BY ta.theorem_id, ta.idx"
    )
    provenances: dict[int, list[dict[str, Any]]] = {}
    for tacid, name, path, a, b, c, d in conn.execute(
        "SELECT tactic_id, full_name, def_path, def_line, def_col, def_end_line, def_end_col "
        "FROM annotations ORDER BY tactic_id, idx"
    ):
        provenances.setdefault(tacid, []).append(
            {"full_name": name, "def_path": path, "def_pos": [a, b], "def_end_pos": [c, d]}
        )
    current: int | None = None
    entries: list[dict[str, Any]] = []
    keep: list[bool] = []
    for tid, tacid, text, annotated, before, after, extra in tactics:
        if tid != current:
            if current is not None:
                yield current, entries, keep
            current, entries, keep = tid, [], []
        entry = {
            "tactic": text,
            "annotated_tactic": [
                text if annotated is None else annotated,
                provenances.get(tacid, []),
            ],
            "state_before": before,
            "state_after": after,
        }
        if extra:
            entry.update(json.loads(extra))
        entries.append(entry)
        keep.append(kept(text, before))
    if current is not None:
        yield current, entries, keep
