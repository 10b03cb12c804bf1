"""Write the database as a LeanDojo-v2 / LeanAgent ``dynamic_database.json``.

The shape is ``{"repositories": [{url, name, commit, lean_version, lean_dojo_version,
metadata: {date_processed, …}, total_theorems, num_… counts, proven_theorems,
sorry_theorems_proved, sorry_theorems_unproved, premise_files, files_traced, pr_url}]}``.
Positions are written as ``[line, column]`` lists (LeanDojo-v2's ``parse_pos`` reads lists as
well as ``"Pos(l, c)"`` strings, and so does our importer), so the file imports back unchanged.
Written atomically, one repository at a time.

The file starts with ``{"written_by": "leantrain-export", "repositories": [`` (the extra key is
ignored by LeanDojo-v2 and by our importer). :func:`check_dump_path` lets a dump replace only
a file that starts so: never a file the user wrote, a directory, ``.`` or ``""``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from leantrain.core.atomic import file_mode
from leantrain.core.output_dir import check_output_file
from leantrain.export.repository import RepositoryReader
from leantrain.export.theorem_stream import corpus_line, iter_theorems

_STATUS_KEYS = {
    "proven": "proven_theorems",
    "sorry_proved": "sorry_theorems_proved",
    "sorry_unproved": "sorry_theorems_unproved",
}


DUMP_HEADER = '{"written_by": "leantrain-export", "repositories": ['


def is_own_dump(path: str | Path) -> bool:
    """Whether ``path`` is a ``dynamic_database.json`` that leantrain wrote."""
    try:
        with Path(path).open("rb") as f:
            head = f.read(len(DUMP_HEADER))
    except OSError:
        return False
    return head == DUMP_HEADER.encode()


def check_dump_path(path: str | Path | None, *, flag: str = "path") -> Path:
    """Raise :class:`ConfigError` unless leantrain may write a dump at ``path``: a new file, or
    one leantrain dumped before. Returns the path."""
    return check_output_file(
        path,
        is_own=is_own_dump,
        flag=flag,
        example="dynamic_database.json",
        own="a dump leantrain wrote",
    )


def dump_dynamic_database(
    db: RepositoryReader, path: str | Path, repos: list[str] | None = None
) -> Path:
    """Write ``repos`` (all when None) of ``db`` to ``path``; returns the path.

    ``path`` must be new or an earlier dump (:func:`check_dump_path`, checked first)."""
    path = check_dump_path(path)
    row_ids = db.repo_row_ids(repos)
    by_id = {r.row_id: r for r in db.list_repositories()}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    conn = db.conn
    try:
        os.fchmod(fd, file_mode())  # what open() would give, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(DUMP_HEADER)
            for n, rid in enumerate(row_ids):
                r = by_id[rid]
                head = r.to_leandojo_json()
                counts = dict(
                    conn.execute(
                        "SELECT status, COUNT(*) FROM theorems WHERE repo_id = ? GROUP BY status",
                        (rid,),
                    ).fetchall()
                )
                head.update(
                    {
                        "total_theorems": r.num_theorems,
                        "num_proven_theorems": counts.get("proven", 0),
                        "num_sorry_theorems": counts.get("sorry_proved", 0)
                        + counts.get("sorry_unproved", 0),
                        "num_sorry_theorems_proved": counts.get("sorry_proved", 0),
                        "num_sorry_theorems_unproved": counts.get("sorry_unproved", 0),
                        "num_premise_files": r.num_premise_files,
                        "num_premises": r.num_premises,
                        "num_files_traced": r.num_traced_files,
                    }
                )
                f.write(("\n" if n == 0 else ",\n") + json.dumps(head, ensure_ascii=False)[:-1])
                for status, list_key in _STATUS_KEYS.items():
                    conn.execute("DROP TABLE IF EXISTS temp._dump")
                    conn.execute("CREATE TEMP TABLE _dump (theorem_id INTEGER PRIMARY KEY)")
                    conn.execute(
                        "INSERT INTO temp._dump SELECT id FROM theorems WHERE repo_id = ? AND status = ?",
                        (rid, status),
                    )
                    f.write(f', "{list_key}": [')
                    for i, (_, thm) in enumerate(iter_theorems(conn, "temp._dump")):
                        f.write(("\n" if i == 0 else ",\n") + json.dumps(thm, ensure_ascii=False))
                    f.write("]")
                    conn.execute("DROP TABLE temp._dump")
                f.write(', "premise_files": [')
                for i, (fid, fpath, imports) in enumerate(
                    conn.execute(
                        "SELECT id, path, imports FROM premise_files WHERE repo_id = ? ORDER BY id",
                        (rid,),
                    ).fetchall()
                ):
                    line = corpus_line(conn, fid, fpath, imports)
                    f.write(("\n" if i == 0 else ",\n") + json.dumps(line, ensure_ascii=False))
                traced = [
                    p
                    for (p,) in conn.execute(
                        "SELECT path FROM traced_files WHERE repo_id = ? ORDER BY idx", (rid,)
                    )
                ]
                f.write('], "files_traced": ' + json.dumps(traced, ensure_ascii=False))
                f.write(', "pr_url": ' + json.dumps(r.pr_url) + "}")
            f.write("\n]}\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
