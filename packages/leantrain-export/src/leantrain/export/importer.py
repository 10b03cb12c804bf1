"""Write a stream of :class:`~leantrain.export.sources.SourceItem` into the database.

The caller holds one transaction around :func:`import_items`; rows are buffered and written
with ``executemany`` in batches, and row ids are allocated here (not read back one insert at a
time), which is what makes a 100k-theorem import take seconds.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from leantrain.core.errors import DataError
from leantrain.core.lean_text import contains_sorry
from leantrain.core.schemas import CorpusFile, Theorem, validate_record
from leantrain.export.fast_rows import (
    PREMISE_FIELDS,
    TACTIC_FIELDS,
    THEOREM_FIELDS,
    WHOLE_PROOF_FIELDS,
    TheoremParts,
    corpus_parts,
    dumps,
    extra_json,
    premise_entries,
    tactic_entries,
    tactics_json,
    theorem_parts,
)
from leantrain.export.sources import RepoInfo, SourceItem, repo_name
from leantrain.export.theorem_stream import IMPORTS_KNOWN
from leantrain.export.typed_records import (
    CorpusRecord,
    TheoremRecord,
    encode,
    spans_in_order,
    to_dict,
)

_FILE_BATCH = 1_000  # a premise-file row holds its premises' JSON
_THEOREM_BATCH = 5_000  # a theorem row holds its tactics' JSON: ~2 KB


def iso(date: dt.datetime) -> str:
    """The stored form of a date: ISO 8601 in UTC with microseconds, so text order = time order."""
    return date.astimezone(dt.UTC).isoformat(timespec="microseconds")


def _theorem_parts_of(thm: Theorem, raw: dict[str, Any]) -> TheoremParts:
    """The :func:`~leantrain.export.fast_rows.theorem_parts` tuples of a validated theorem."""
    raw_tactics = raw.get("traced_tactics") or []
    tactics = []
    for i, tac in enumerate(thm.traced_tactics):
        ann = tac.annotated_tactic
        raw_tac = (
            raw_tactics[i] if i < len(raw_tactics) and isinstance(raw_tactics[i], dict) else {}
        )
        provenances = (
            []
            if ann is None
            else [(p.full_name, p.def_path, *p.def_pos, *p.def_end_pos) for p in ann[1]]
        )
        tactics.append(
            (
                tac.tactic,
                None if ann is None else ann[0],
                tac.state_before,
                tac.state_after,
                extra_json(raw_tac, TACTIC_FIELDS),
                provenances,
            )
        )
    # whole-proof fields are kept with the unknown ones (as the model checked them), if set
    whole = {k: getattr(thm, k) for k in WHOLE_PROOF_FIELDS if getattr(thm, k) is not None}
    rest = {k: v for k, v in raw.items() if k not in WHOLE_PROOF_FIELDS}
    head = (
        thm.url,
        thm.commit,
        thm.file_path,
        thm.full_name,
        thm.theorem_statement,
        *thm.start,
        *thm.end,
        extra_json({**rest, **whole}, THEOREM_FIELDS),
    )
    return head, tactics, None


def _any_sorry(texts: list[str]) -> bool:
    """Whether a tactic text uses ``sorry`` or ``admit`` (the regex runs only when one of the
    words occurs at all: a substring test over all the tactics is far cheaper)."""
    if not texts:
        return False
    text = "\n".join(texts)
    return ("sorry" in text or "admit" in text) and contains_sorry(text)


class Importer:
    """Buffers rows of one import; call :meth:`add` for each item, then :meth:`finish`."""

    def __init__(
        self, conn: sqlite3.Connection, *, date_processed: dt.datetime | None = None
    ) -> None:
        self.conn = conn
        self.date_override = date_processed
        self.now = dt.datetime.now(dt.UTC)
        self.repo_ids: dict[tuple[str, str], int] = {}
        self.seen_theorems: dict[int, set[tuple[Any, ...]]] = {}
        self.seen_files: dict[int, set[str]] = {}
        self.seen_traced: dict[int, set[str]] = {}
        self.has_corpus: set[int] = set()
        self.duplicates = 0

        def next_id(table: str, col: str = "id") -> int:
            return (conn.execute(f"SELECT MAX({col}) FROM {table}").fetchone()[0] or 0) + 1

        self._theorem_id = next_id("theorems")
        self._file_id = next_id("premise_files")
        self._rows: dict[str, list[tuple[Any, ...]]] = {
            "theorems": [],
            "premise_files": [],
            "traced_files": [],
        }

    # -- repositories ---------------------------------------------------------------------------
    def _repository(self, key: tuple[str, str], info: RepoInfo | None = None) -> int:
        if key in self.repo_ids:
            if info is not None:  # metadata for a repo already started: update its row
                self._update_repo(self.repo_ids[key], info)
            return self.repo_ids[key]
        info = info or RepoInfo(url=key[0], commit=key[1])
        self.flush()
        # Re-importing a repository replaces it, within this same transaction.
        self.conn.execute("DELETE FROM repositories WHERE url = ? AND commit_hash = ?", key)
        cur = self.conn.execute(
            "INSERT INTO repositories (url, commit_hash, name, lean_version, lean_dojo_version, "
            "date_processed, metadata, pr_url) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            self._repo_row(info),
        )
        rid = int(cur.lastrowid or 0)
        self.repo_ids[key] = rid
        self.seen_theorems[rid] = set()
        self.seen_files[rid] = set()
        self.seen_traced[rid] = set()
        return rid

    def _repo_row(self, info: RepoInfo) -> tuple[Any, ...]:
        date = self.date_override or info.date_processed or self.now
        return (
            info.url,
            info.commit,
            info.name or repo_name(info.url),
            info.lean_version,
            info.lean_dojo_version,
            iso(date),
            json.dumps(info.metadata, ensure_ascii=False, default=str),
            info.pr_url,
        )

    def _update_repo(self, rid: int, info: RepoInfo) -> None:
        row = self._repo_row(info)
        self.conn.execute(
            "UPDATE repositories SET name = ?, lean_version = ?, lean_dojo_version = ?, "
            "date_processed = ?, metadata = ?, pr_url = ? WHERE id = ?",
            (*row[2:], rid),
        )

    def _owners(self, item: SourceItem) -> list[int]:
        if item.repo is not None:
            return [self._repository(item.repo)]
        if not self.repo_ids:
            raise DataError(
                item.path,
                "corpus or traced files without any repository",
                hint="the source needs metadata.json or at least one theorem naming its url and commit",
            )
        return list(self.repo_ids.values())

    # -- items ----------------------------------------------------------------------------------
    def add(self, item: SourceItem) -> None:
        """Buffer one item (validated; a bad record raises DataError naming file and record)."""
        if item.kind == "repo":
            self._repository((item.value.url, item.value.commit), item.value)
        elif item.kind == "theorem":
            self._add_theorem(item)
        elif item.kind == "premise_file":
            self._add_premise_file(item)
        elif item.kind == "traced_file":
            for rid in self._owners(item):
                if item.value not in self.seen_traced[rid]:
                    self.seen_traced[rid].add(item.value)
                    self._rows["traced_files"].append((rid, len(self.seen_traced[rid]), item.value))
        rows = self._rows
        if len(rows["theorems"]) >= _THEOREM_BATCH or len(rows["premise_files"]) >= _FILE_BATCH:
            self.flush()

    def _add_theorem(self, item: SourceItem) -> None:
        raw = item.value
        if type(raw) is TheoremRecord:  # decoded and type-checked by msgspec
            if spans_in_order(raw):
                self._add_record(item, raw)
                return
            raw = to_dict(raw)  # an end before its start: the model names it
        parts = theorem_parts(raw)
        if parts is None:  # not the plain shape: the model validates it (and names the error)
            parts = _theorem_parts_of(
                validate_record(Theorem, raw, path=item.path, index=item.index), raw
            )
        head, tactics, canonical = parts
        entries = canonical if canonical is not None else tactic_entries(tactics)
        keep = [t[2] != "no goals" and "·" not in t[0] for t in tactics]  # as LeanDojo-v2
        uses = [[i, j, keep[i], *p] for i, t in enumerate(tactics) for j, p in enumerate(t[5])]
        self._add_rows(item, head, [t[0] for t in tactics], keep, uses, entries, dumps)

    def _add_record(self, item: SourceItem, rec: TheoremRecord) -> None:
        tactics = rec.traced_tactics
        keep = [t.state_before != "no goals" and "·" not in t.tactic for t in tactics]
        uses = [
            [i, j, keep[i], p.full_name, p.def_path, *p.def_pos, *p.def_end_pos]
            for i, t in enumerate(tactics)
            for j, p in enumerate(t.annotated_tactic[1])
        ]
        head = (
            rec.url,
            rec.commit,
            rec.file_path,
            rec.full_name,
            rec.theorem_statement,
            *rec.start,
            *rec.end,
            None,
        )
        self._add_rows(item, head, [t.tactic for t in tactics], keep, uses, tactics, encode)

    def _add_rows(
        self,
        item: SourceItem,
        head: tuple[Any, ...],
        texts: list[str],
        keep: list[bool],
        uses: list[list[Any]],
        entries: list[Any],
        encode: Callable[[Any], bytes],
    ) -> None:
        """Buffer the rows of a checked theorem: ``head`` as in
        :func:`~leantrain.export.fast_rows.theorem_parts`; the tactics' texts, whether each
        is kept by an export that drops tactics (not after ``no goals``, no ``·``), the
        premise uses ``[tactic_idx, idx, kept, full_name, def_path, line, col, end_line,
        end_col]`` (``theorems.uses_json``), and the exported tactic ``entries`` with their
        ``encode``."""
        rid = self._repository(item.repo or (head[0], head[1]))
        key = head[2:4] + head[5:9]
        seen = self.seen_theorems[rid]
        if key in seen:
            self.duplicates += 1
            return
        seen.add(key)
        status = item.status or ("sorry_unproved" if _any_sorry(texts) else "proven")
        tid = self._theorem_id
        self._theorem_id += 1
        self._rows["theorems"].append(
            (
                tid,
                rid,
                *head[2:9],
                status,
                len(texts),
                head[9],
                *tactics_json(entries, keep, encode),
                encode(uses) if uses else None,
            )
        )

    def _add_premise_file(self, item: SourceItem) -> None:
        raw = item.value
        if type(raw) is CorpusRecord:  # decoded and type-checked by msgspec
            if spans_in_order(raw):
                self._add_file_rows(item, raw.path, raw.imports, True, raw.premises, encode)
                return
            raw = to_dict(raw)  # an end before its start: the model names it
        parts = corpus_parts(raw)
        if parts is None:
            pf = validate_record(CorpusFile, raw, path=item.path, index=item.index)
            raw_premises = raw.get("premises") or []
            parts = (
                pf.path,
                pf.imports,
                [
                    (
                        p.full_name,
                        p.code,
                        *p.start,
                        *p.end,
                        p.kind,
                        extra_json(raw_premises[j], PREMISE_FIELDS),
                    )
                    for j, p in enumerate(pf.premises)
                ],
                None,
            )
        path, imports, premises, canonical = parts
        entries = canonical if canonical is not None else premise_entries(premises)
        # imports null: unknown (an annotation-built corpus exported by leantrain)
        known = raw.get(IMPORTS_KNOWN, True) is not False
        self._add_file_rows(item, path, imports, known, entries, dumps)

    def _add_file_rows(
        self,
        item: SourceItem,
        path: str,
        imports: list[str],
        imports_known: bool,
        entries: list[Any],
        encode: Callable[[Any], bytes],
    ) -> None:
        """Buffer a checked corpus file for each repository it belongs to: its exported
        premise ``entries`` are encoded once, with ``encode``."""
        premises_json: bytes | None = None
        for rid in self._owners(item):
            self.has_corpus.add(rid)
            if path in self.seen_files[rid]:
                continue
            self.seen_files[rid].add(path)
            fid = self._file_id
            self._file_id += 1
            if premises_json is None:
                premises_json = encode(entries)
            self._rows["premise_files"].append(
                (
                    fid,
                    rid,
                    path,
                    json.dumps(imports if imports_known else None, ensure_ascii=False),
                    premises_json,
                    len(entries),
                )
            )

    # -- writing --------------------------------------------------------------------------------
    _SQL: ClassVar[dict[str, str]] = {
        "theorems": "INSERT INTO theorems VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        "premise_files": "INSERT INTO premise_files VALUES (?, ?, ?, ?, ?, ?)",
        "traced_files": "INSERT INTO traced_files VALUES (?, ?, ?)",
    }

    def flush(self) -> None:
        """Write the buffered rows (parents before children, for the foreign keys)."""
        for table, rows in self._rows.items():
            if rows:
                self.conn.executemany(self._SQL[table], rows)
                rows.clear()

    def finish(self) -> list[str]:
        """Flush, build annotation-only corpora where the source had none; the repo ids."""
        self.flush()
        for rid in self.repo_ids.values():
            if rid not in self.has_corpus:
                corpus_from_annotations(self.conn, rid, self._next_file_id())
        return [f"{url}@{commit}" for url, commit in self.repo_ids]

    def _next_file_id(self) -> int:
        return (self.conn.execute("SELECT MAX(id) FROM premise_files").fetchone()[0] or 0) + 1


def corpus_from_annotations(conn: sqlite3.Connection, repo_id: int, first_file_id: int) -> int:
    """Premise files of ``repo_id`` built from its annotations (no code, imports unknown:
    stored as JSON ``null`` and exported with ``"imports_known": false``).

    Used when a source has no ``corpus.jsonl`` (the lean4-example export): each annotated
    premise becomes ``{full_name, code: "", start: def_pos, end: def_end_pos, kind: "theorem"}``
    in the file of its ``def_path``. Returns the number of files written.
    """
    rows = conn.execute(
        "SELECT a.def_path, a.full_name, MIN(a.def_line), MIN(a.def_col), MAX(a.def_end_line), "
        "MAX(a.def_end_col) FROM premise_uses a "
        "JOIN theorems t ON t.id = a.theorem_id WHERE t.repo_id = ? "
        "GROUP BY a.def_path, a.full_name ORDER BY a.def_path, MIN(a.def_line), MIN(a.def_col), a.full_name",
        (repo_id,),
    ).fetchall()
    files: dict[str, list[tuple[Any, ...]]] = {}
    for path, name, sl, sc, el, ec in rows:
        files.setdefault(path, []).append((name, "", sl, sc, el, ec, "theorem", None))
    conn.executemany(
        "INSERT INTO premise_files VALUES (?, ?, ?, 'null', ?, ?)",
        [
            (first_file_id + i, repo_id, path, dumps(premise_entries(ps)), len(ps))
            for i, (path, ps) in enumerate(files.items())
        ],
    )
    return len(files)


def import_items(
    conn: sqlite3.Connection,
    items: Iterable[SourceItem],
    *,
    date_processed: dt.datetime | None = None,
) -> list[str]:
    """Import ``items`` on ``conn`` (the caller owns the transaction); returns the repo ids."""
    importer = Importer(conn, date_processed=date_processed)
    for item in items:
        importer.add(item)
    return importer.finish()
