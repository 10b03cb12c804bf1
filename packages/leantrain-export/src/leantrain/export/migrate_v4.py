"""Schema version 3 → 4: corpus files built from annotations get unknown imports.

A repository traced without a ``corpus.jsonl`` (the lean4-example export) gets its corpus built
from the premise annotations: files of ``{code: "", kind: "theorem"}`` premises whose imports
nobody knows. Databases written before unknown imports existed stored those imports as ``[]``
("imports nothing"), so such a file's premises were reachable only from inside the file, and an
evaluation counted every positive from elsewhere as unreachable. This migration marks those
files as unknown (JSON ``null``, exported with ``"imports_known": false``), as an import does
now. A file from a real ``corpus.jsonl`` always has code, so it is never touched.
"""

from __future__ import annotations

import json
import sqlite3


def annotation_built(premises_json: str | bytes) -> bool:
    """Whether a stored premise list is one that the importer builds from annotations."""
    premises = json.loads(premises_json)
    return bool(premises) and all(
        isinstance(p, dict) and p.get("code") == "" and p.get("kind") == "theorem" for p in premises
    )


def upgrade(conn: sqlite3.Connection) -> None:
    """Set ``imports`` to ``null`` on every annotation-built file stored with ``[]``."""
    ids = [
        (fid,)
        for fid, premises_json in conn.execute(
            "SELECT id, premises_json FROM premise_files WHERE imports = '[]'"
        )
        if annotation_built(premises_json)
    ]
    conn.executemany("UPDATE premise_files SET imports = 'null' WHERE id = ?", ids)
