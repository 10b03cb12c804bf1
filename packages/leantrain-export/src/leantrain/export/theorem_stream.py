"""Theorem records (the LeanDojo JSON shape) and corpus lines from the database, streaming.

A theorem's tactics are stored in their exported form (``theorems.tactics_json``, see
:mod:`leantrain.export.schema`), so a record is its row plus that text: memory stays flat
however many theorems are exported, and an export can copy the text without parsing it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

IMPORTS_KNOWN = "imports_known"
"""Field of a ``corpus.jsonl`` line that is ``false`` when the file's imports are unknown.

A source without a ``corpus.jsonl`` gets a corpus built from its premise annotations, whose
imports nobody knows; the database stores them as JSON ``null``. The line still carries
``"imports": []`` so that LeanDojo's readers (which take the three fields ``path``,
``imports``, ``premises`` and ignore others) read it as before, and ``"imports_known":
false`` tells leantrain's retriever not to take that empty list at its word. A line without
the field (every LeanDojo corpus) has known imports.
"""


def theorem_rows(
    conn: sqlite3.Connection,
    selection: str,
    *,
    drop_tactics: bool = False,
    params: tuple[Any, ...] = (),
) -> sqlite3.Cursor:
    """Rows ``(id, url, commit, file_path, full_name, theorem_statement, start_line,
    start_col, end_line, end_col, extra, tactics_json, num_tactics, num_traced)`` of the
    theorem ids of table ``selection`` (a table with a ``theorem_id`` column), in id order;
    with ``drop_tactics`` the tactics LeanDojo-v2 leaves out are not in ``tactics_json`` and
    not counted in ``num_tactics`` (``num_traced`` counts them all)."""
    tactics = (
        "COALESCE(t.kept_json, t.tactics_json), t.num_kept"
        if drop_tactics
        else ("t.tactics_json, t.num_tactics")
    )
    return conn.execute(
        "SELECT t.id, r.url, r.commit_hash, t.file_path, t.full_name, t.theorem_statement, "
        f"t.start_line, t.start_col, t.end_line, t.end_col, t.extra, {tactics}, t.num_tactics "
        f"FROM {selection} s JOIN theorems t ON t.id = s.theorem_id "
        "JOIN repositories r ON r.id = t.repo_id ORDER BY t.id",
        params,
    )


def theorem_record(row: tuple[Any, ...], traced_tactics: Any) -> dict[str, Any]:
    """The LeanDojo theorem record of a :func:`theorem_rows` row, with ``traced_tactics``
    (the parsed list, or an ``orjson.Fragment`` of its JSON)."""
    record = {
        "url": row[1],
        "commit": row[2],
        "file_path": row[3],
        "full_name": row[4],
        "theorem_statement": row[5],
        "start": [row[6], row[7]],
        "end": [row[8], row[9]],
        "traced_tactics": traced_tactics,
    }
    if row[10]:
        record.update(json.loads(row[10]))
    return record


def iter_theorems(
    conn: sqlite3.Connection,
    selection: str,
    *,
    drop_tactics: bool = False,
    params: tuple[Any, ...] = (),
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(theorem_row_id, theorem_dict)`` for the theorem ids of table ``selection``.

    ``selection`` names a table with a ``theorem_id`` column (usually a temporary one).
    With ``drop_tactics`` the tactics LeanDojo-v2 leaves out (after the proof is done, ``no
    goals``, and focusing dots) are too.
    A tactic stored without annotation is written ``annotated_tactic: [tactic, []]``.
    """
    for row in theorem_rows(conn, selection, drop_tactics=drop_tactics, params=params):
        yield row[0], theorem_record(row, json.loads(row[11]))


def file_premises(conn: Any, file_id: int) -> list[dict[str, Any]]:
    """The premises of one corpus file, in file order, as ``corpus.jsonl`` premise dicts."""
    row = conn.execute(
        "SELECT premises_json FROM premise_files WHERE id = ?", (file_id,)
    ).fetchone()
    return [] if row is None else json.loads(row[0])


def corpus_line(conn: Any, file_id: int, path: str, imports_json: str) -> dict[str, Any]:
    """One ``corpus.jsonl`` line of a stored premise file (imports ``null``: unknown, written
    ``"imports": [], "imports_known": false``; see :data:`IMPORTS_KNOWN`)."""
    imports = json.loads(imports_json)
    line: dict[str, Any] = {
        "path": path,
        "imports": [] if imports is None else imports,
        "premises": file_premises(conn, file_id),
    }
    if imports is None:
        line[IMPORTS_KNOWN] = False
    return line
