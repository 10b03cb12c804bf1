"""Reassemble theorem records (the LeanDojo JSON shape) from the database, streaming.

Three cursors (theorems, tactics, annotations), each ordered by theorem then position, are
merged in one pass, so memory stays flat however many theorems are exported.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import orjson

DROP_TACTIC_SQL = "ta.state_before != 'no goals' AND instr(ta.tactic, '·') = 0"
"""Tactics LeanDojo-v2 leaves out of an export: after the proof is done, or focusing dots."""

IMPORTS_KNOWN = "imports_known"
"""Field of a ``corpus.jsonl`` line that is ``false`` when the file's imports are unknown.

A source without a ``corpus.jsonl`` gets a corpus built from its premise annotations, whose
imports nobody knows; the database stores them as JSON ``null``. The line still carries
``"imports": []`` so that LeanDojo's readers (which take the three fields ``path``,
``imports``, ``premises`` and ignore others) read it as before, and ``"imports_known":
false`` tells leantrain's retriever not to take that empty list at its word. A line without
the field (every LeanDojo corpus) has known imports.
"""


def iter_theorems(
    conn: sqlite3.Connection,
    selection: str,
    *,
    drop_tactics: bool = False,
    params: tuple[Any, ...] = (),
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(theorem_row_id, theorem_dict)`` for the theorem ids of table ``selection``.

    ``selection`` names a table with a ``theorem_id`` column (usually a temporary one).
    With ``drop_tactics`` the tactics matched by :data:`DROP_TACTIC_SQL` are left out.
    A tactic stored without annotation is written ``annotated_tactic: [tactic, []]``.
    """
    where = f"WHERE {DROP_TACTIC_SQL}" if drop_tactics else ""
    theorems = conn.execute(
        "SELECT t.id, r.url, r.commit_hash, t.file_path, t.full_name, t.theorem_statement, "
        "t.start_line, t.start_col, t.end_line, t.end_col, t.extra "
        f"FROM {selection} s JOIN theorems t ON t.id = s.theorem_id "
        "JOIN repositories r ON r.id = t.repo_id ORDER BY t.id",
        params,
    )
    tactics = conn.execute(
        "SELECT ta.theorem_id, ta.id, ta.tactic, ta.annotated_text, ta.state_before, ta.state_after, ta.extra "
        f"FROM {selection} s JOIN tactics ta ON ta.theorem_id = s.theorem_id {where} "
        "ORDER BY ta.theorem_id, ta.idx",
        params,
    )
    annotations = conn.execute(
        "SELECT a.tactic_id, a.full_name, a.def_path, a.def_line, a.def_col, a.def_end_line, a.def_end_col "
        f"FROM {selection} s JOIN tactics ta ON ta.theorem_id = s.theorem_id "
        f"JOIN annotations a ON a.tactic_id = ta.id {where} ORDER BY ta.theorem_id, ta.idx, a.idx",
        params,
    )
    next_tac = iter(tactics).__next__
    next_ann = iter(annotations).__next__
    tac = next(tactics, None)
    ann = next(annotations, None)
    loads = json.loads
    for row in theorems:
        tid = row[0]
        traced: list[dict[str, Any]] = []
        while tac is not None and tac[0] == tid:
            tacid = tac[1]
            provenances = []
            while ann is not None and ann[0] == tacid:
                provenances.append(
                    {
                        "full_name": ann[1],
                        "def_path": ann[2],
                        "def_pos": [ann[3], ann[4]],
                        "def_end_pos": [ann[5], ann[6]],
                    }
                )
                try:
                    ann = next_ann()
                except StopIteration:
                    ann = None
            entry = {
                "tactic": tac[2],
                "annotated_tactic": [tac[2] if tac[3] is None else tac[3], provenances],
                "state_before": tac[4],
                "state_after": tac[5],
            }
            if tac[6]:
                entry.update(loads(tac[6]))
            traced.append(entry)
            try:
                tac = next_tac()
            except StopIteration:
                tac = None
        record = {
            "url": row[1],
            "commit": row[2],
            "file_path": row[3],
            "full_name": row[4],
            "theorem_statement": row[5],
            "start": [row[6], row[7]],
            "end": [row[8], row[9]],
            "traced_tactics": traced,
        }
        if row[10]:
            record.update(loads(row[10]))
        yield tid, record


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON of ``obj`` (orjson; the standard library for what orjson cannot
    encode, such as integers beyond 64 bits in an unknown field)."""
    try:
        return orjson.dumps(obj)
    except orjson.JSONEncodeError:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def corpus_lines(conn: Any, file_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The premises of the corpus files ``file_ids`` (in file order), by file id, read with
    one query."""
    conn.execute("DROP TABLE IF EXISTS temp._files")
    conn.execute("CREATE TEMP TABLE _files (id INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO temp._files VALUES (?)", [(f,) for f in file_ids])
    out: dict[int, list[dict[str, Any]]] = {f: [] for f in file_ids}
    loads = json.loads
    for fid, name, code, sl, sc, el, ec, kind, extra in conn.execute(
        "SELECT p.file_id, p.full_name, p.code, p.start_line, p.start_col, p.end_line, "
        "p.end_col, p.kind, p.extra FROM temp._files f JOIN premises p ON p.file_id = f.id "
        "ORDER BY p.file_id, p.idx"
    ):
        p = {"full_name": name, "code": code, "start": [sl, sc], "end": [el, ec], "kind": kind}
        if extra:
            p.update(loads(extra))
        out[fid].append(p)
    conn.execute("DROP TABLE temp._files")
    return out


def file_premises(conn: Any, file_id: int) -> list[dict[str, Any]]:
    """The premises of one corpus file, in file order, as ``corpus.jsonl`` premise dicts."""
    premises = []
    for name, code, sl, sc, el, ec, kind, extra in conn.execute(
        "SELECT full_name, code, start_line, start_col, end_line, end_col, kind, extra "
        "FROM premises WHERE file_id = ? ORDER BY idx",
        (file_id,),
    ):
        p = {"full_name": name, "code": code, "start": [sl, sc], "end": [el, ec], "kind": kind}
        if extra:
            p.update(json.loads(extra))
        premises.append(p)
    return premises


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
