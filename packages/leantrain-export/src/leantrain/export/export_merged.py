"""``export_merged_data``: the LeanDojo-v2 export of a set of repositories of the database.

The output directory holds, with LeanDojo-v2's names and fields::

    random/{train,val,test}.json          novel_premises/{train,val,test}.json
    corpus.jsonl                          traced_files.jsonl
    metadata.json                         statement_hashes.json

``statement_hashes.json`` (leantrain's, for the contamination guard) holds, per split
(``"random/train"``, …), under ``splits`` ``[statement_hash, full_name]`` of each theorem that
has a ``theorem_statement`` (:func:`leantrain.core.lean_text.statement_hash`: comments, header
lines, whitespace, keyword and name normalised away), and under ``states`` ``[state_hash,
full_name]`` of each theorem without one that is stated by its first exported tactic's
``state_before`` (:func:`leantrain.core.lean_text.state_hash`, a hash domain of its own; LeanDojo
Benchmark 4's theorems): the form its whole-proof prompt shows.

Theorems are deduplicated across repositories by ``(file_path, full_name, start, end)``, the
repository with the newest ``date_processed`` winning (a tie goes to the later import).
Tactics whose ``state_before`` is ``no goals`` or that contain ``·`` are left out. Splits are
assigned by seeded hashes (:mod:`leantrain.export.splits`), so they are deterministic and
stable as repositories are added. Corpus files are merged by path (a traced copy wins over
one rebuilt from annotations, then the newest repository; premises of the others are kept).
The directory is built under a temporary name and swapped in at the end: an interrupted
export never destroys the previous one.

The output directory must be new, empty, or leantrain's own earlier export: it carries the
marker file ``.leantrain`` (kind ``"export"``, :mod:`leantrain.core.output_dir`). Anything
else (``.``, ``""``, a file, a directory holding other files) is refused before anything is
read or written.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
from leantrain.core.atomic import atomic_directory
from leantrain.core.config import config_from_dict
from leantrain.core.errors import DataError
from leantrain.core.lean_text import state_hash, statement_hash
from leantrain.core.output_dir import check_output_dir, write_marker
from leantrain.export.database import Database
from leantrain.export.export_config import ExportConfig
from leantrain.export.fast_rows import dumps, loads
from leantrain.export.gc_pause import gc_paused
from leantrain.export.sources import SPLIT_NAMES, STRATEGIES
from leantrain.export.splits import Splitter, calibrate_rate, theorem_key
from leantrain.export.theorem_stream import (
    IMPORTS_KNOWN,
    theorem_record,
    theorem_rows,
)
from leantrain.export.typed_records import decode_uses

STATEMENT_HASHES = "statement_hashes.json"
"""The export's file of statement hashes per split (see the module docstring)."""


@dataclass
class ExportResult:
    """What :func:`export_merged_data` wrote."""

    out_dir: Path
    repos: list[str]
    num_theorems: int
    num_tactics: int
    duplicates_dropped: int
    dropped_tactics: int
    split_sizes: dict[str, dict[str, int]]
    num_premise_files: int
    num_premises: int
    num_traced_files: int
    novel_premise_rate: float
    config: dict[str, Any] = field(default_factory=dict)
    split_details: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    """``{strategy: {split: {theorems, tactics, tactics_with_premises}}}``."""
    unknown_imports: int = 0
    """Corpus files whose imports are unknown (marked ``"imports_known": false``)."""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (also stored under ``"leantrain"`` in metadata.json)."""
        return {
            # a path that is not valid UTF-8 is written with escapes (JSON must be UTF-8)
            "out_dir": str(self.out_dir).encode("utf-8", "backslashreplace").decode("utf-8"),
            "repos": self.repos,
            "num_theorems": self.num_theorems,
            "num_tactics": self.num_tactics,
            "duplicates_dropped": self.duplicates_dropped,
            "dropped_tactics": self.dropped_tactics,
            "split_sizes": self.split_sizes,
            "num_premise_files": self.num_premise_files,
            "num_premises": self.num_premises,
            "num_traced_files": self.num_traced_files,
            "novel_premise_rate": self.novel_premise_rate,
            "split_details": self.split_details,
            "num_files_unknown_imports": self.unknown_imports,
            "config": self.config,
        }


class _ArrayWriter:
    """Writes a JSON array one element (already serialised) per line, without holding them."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.f: IO[bytes] = path.open("wb", buffering=1 << 20)
        self.f.write(b"[")
        self.count = 0

    def write(self, data: bytes) -> None:
        self.f.write(b"\n" if self.count == 0 else b",\n")
        self.f.write(data)
        self.count += 1

    def close(self) -> None:
        self.f.write(b"\n]\n" if self.count else b"]\n")
        self.f.close()


def _open(db: Database | str | Path) -> tuple[Database, bool]:
    if isinstance(db, Database):
        return db, False
    return Database(db, create=False), True


def _config(
    config: ExportConfig | dict[str, Any] | None, overrides: dict[str, Any]
) -> ExportConfig:
    if isinstance(config, ExportConfig):
        base = {k: getattr(config, k) for k in ExportConfig.KEYS}
    else:
        base = dict(config or {})
    base.update(overrides)
    return config_from_dict(ExportConfig, base, source="export config")


def check_export_dir(out_dir: str | Path | None, *, flag: str = "out_dir") -> Path:
    """Raise :class:`~leantrain.core.errors.ConfigError` unless ``out_dir`` is new, empty or
    leantrain's own earlier export (``flag`` names it in the message); returns it as a Path."""
    return check_output_dir(out_dir, kind="export", flag=flag)


def select_theorems(db: Database, repos: list[str] | None) -> tuple[list[int], int]:
    """Fill ``temp._sel`` with the deduplicated theorem ids of ``repos``.

    Returns the repository row ids and the number of duplicates dropped. Raises
    :class:`DataError` for an unknown repository or an empty selection.
    """
    if repos is not None and len(repos) == 0:
        raise DataError(
            db.path,
            "empty selection: no repositories given",
            hint="name at least one --repo, or none for all",
        )
    row_ids = db.repo_row_ids(repos)
    if not row_ids:
        raise DataError(
            db.path,
            "the database holds no repositories",
            hint="import data first: leantrain export import PATH",
        )
    conn = db.conn
    conn.execute("DROP TABLE IF EXISTS temp._sel_repos")
    conn.execute("DROP TABLE IF EXISTS temp._sel")
    conn.execute("CREATE TEMP TABLE _sel_repos (id INTEGER PRIMARY KEY)")
    conn.execute("CREATE TEMP TABLE _sel (theorem_id INTEGER PRIMARY KEY)")
    conn.executemany("INSERT OR IGNORE INTO temp._sel_repos VALUES (?)", [(r,) for r in row_ids])
    total = conn.execute(
        "SELECT COUNT(*) FROM theorems WHERE repo_id IN (SELECT id FROM temp._sel_repos)"
    ).fetchone()[0]
    if _all_distinct(conn, row_ids):  # nothing to deduplicate: skip the window's sort
        conn.execute(
            "INSERT INTO temp._sel (theorem_id) SELECT id FROM theorems "
            "WHERE repo_id IN (SELECT id FROM temp._sel_repos) ORDER BY id"
        )
    else:
        _select_newest(conn)
    kept = conn.execute("SELECT COUNT(*) FROM temp._sel").fetchone()[0]
    if kept == 0:
        names = ", ".join(repos) if repos else "all repositories"
        raise DataError(
            db.path,
            f"empty selection: {names} hold no theorems",
            hint="import traced data for them first",
        )
    return row_ids, total - kept


def _all_distinct(conn: Any, row_ids: list[int]) -> bool:
    """Whether the selection is every repository of the database and no two of its theorems
    share a key (checked on the key index alone, without reading the theorems)."""
    (n_repos,) = conn.execute("SELECT COUNT(*) FROM repositories").fetchone()
    if len(set(row_ids)) != n_repos:
        return False
    return (
        conn.execute(
            "SELECT 1 FROM theorems INDEXED BY theorems_key GROUP BY file_path, full_name, "
            "start_line, start_col, end_line, end_col HAVING COUNT(*) > 1 LIMIT 1"
        ).fetchone()
        is None
    )


def _select_newest(conn: Any) -> None:
    """Fill ``temp._sel`` with the newest copy of each theorem key of the selected repositories
    (the newest ``date_processed``, then the later import)."""
    conn.execute(
        "INSERT INTO temp._sel (theorem_id) SELECT id FROM ("
        " SELECT t.id AS id, ROW_NUMBER() OVER ("
        "  PARTITION BY t.file_path, t.full_name, t.start_line, t.start_col, t.end_line, t.end_col"
        "  ORDER BY r.date_processed DESC, r.id DESC) AS rn"
        " FROM theorems t JOIN repositories r ON r.id = t.repo_id"
        " WHERE t.repo_id IN (SELECT id FROM temp._sel_repos)) WHERE rn = 1"
    )


def premise_stats(
    db: Database, *, drop_tactics: bool
) -> tuple[dict[int, set[str]], dict[int, int]]:
    """For each selected theorem (``temp._sel``) with annotated premises in its exported
    tactics: the distinct premise names, and the number of those tactics (one pass over
    ``theorems.uses_json``, in theorem id order)."""
    names: dict[int, set[str]] = {}
    counts: dict[int, int] = {}
    for tid, uses_json in db.conn.execute(
        "SELECT s.theorem_id, t.uses_json FROM temp._sel s JOIN theorems t ON t.id = s.theorem_id "
        "WHERE t.uses_json IS NOT NULL ORDER BY s.theorem_id"
    ):
        # [tactic_idx, idx, kept, full_name, …] (theorems.uses_json)
        uses = [u for u in _premise_uses(uses_json) if u[2] or not drop_tactics]
        if uses:
            names[tid] = {u[3] for u in uses}
            counts[tid] = len({u[0] for u in uses})
    return names, counts


def _premise_uses(uses_json: bytes) -> list[Any]:
    """The uses of a ``theorems.uses_json`` value (msgspec reads those leantrain writes; any
    other shape is read as plain JSON)."""
    try:
        return decode_uses(uses_json)
    except ValueError:
        return loads(uses_json)


def weighted_histogram(
    premises: dict[int, set[str]], weights: dict[int, int]
) -> tuple[dict[int, int], int]:
    """``({k: tactics with premises of theorems with k distinct premises}, their total)``: what
    :func:`~leantrain.export.splits.calibrate_rate` balances (see :mod:`~leantrain.export.splits`)."""
    hist: Counter[int] = Counter()
    for tid, names in premises.items():
        hist[len(names)] += weights.get(tid, 0)
    return dict(hist), sum(hist.values())


def premise_count_histogram(
    db: Database, repos: list[str] | None, *, drop_tactics: bool = True
) -> tuple[dict[int, int], int]:
    """The :func:`weighted_histogram` of a deduplicated selection: ``({k: tactics with premises
    of the theorems with k distinct premises}, number of tactics with premises)``."""
    db.conn.execute("BEGIN")
    try:
        select_theorems(db, repos)
        premises, weights = premise_stats(db, drop_tactics=drop_tactics)
    finally:
        db.conn.execute("COMMIT")
    return weighted_histogram(premises, weights)


def _empty_details() -> dict[str, dict[str, dict[str, int]]]:
    return {
        s: {n: {"theorems": 0, "tactics": 0, "tactics_with_premises": 0} for n in SPLIT_NAMES}
        for s in STRATEGIES
    }


def split_summary(
    db: Database | str | Path,
    repos: list[str] | None = None,
    config: ExportConfig | dict[str, Any] | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """The split sizes an export of ``repos`` would have, without writing it:
    ``{"novel_premise_rate": r, "splits": {strategy: {split: {theorems, tactics,
    tactics_with_premises}}}}`` (what ``leantrain export stats`` prints)."""
    cfg = _config(config, overrides)
    database, owned = _open(db)
    conn = database.conn
    try:
        conn.execute("BEGIN")
        try:
            select_theorems(database, repos)
            premises, weights = premise_stats(database, drop_tactics=cfg.drop_tactics)
            rate = cfg.novel_premise_rate
            if rate is None:
                rate = calibrate_rate(
                    cfg.val_fraction + cfg.test_fraction, *weighted_histogram(premises, weights)
                )
            assign = _Assigner(cfg, rate, premises)
            n_col = "t.num_kept" if cfg.drop_tactics else "t.num_tactics"
            details = _empty_details()
            for tid, fp, name, sl, sc, el, ec, n_tac in conn.execute(
                "SELECT t.id, t.file_path, t.full_name, t.start_line, t.start_col, t.end_line, "
                f"t.end_col, {n_col} FROM temp._sel s JOIN theorems t ON t.id = s.theorem_id"
            ):
                key = theorem_key(fp, name, (sl, sc), (el, ec))
                for strategy, split in assign(tid, key).items():
                    d = details[strategy][split]
                    d["theorems"] += 1
                    d["tactics"] += n_tac
                    d["tactics_with_premises"] += weights.get(tid, 0)
        finally:
            conn.execute("DROP TABLE IF EXISTS temp._sel")
            conn.execute("DROP TABLE IF EXISTS temp._sel_repos")
            conn.execute("COMMIT")
    finally:
        if owned:
            database.close()
    return {"novel_premise_rate": rate, "splits": details}


class _Assigner:
    """The random and novel_premises split of a selected theorem (hash-stable, see splits)."""

    def __init__(self, cfg: ExportConfig, rate: float, premises: dict[int, set[str]]) -> None:
        self.splitter = Splitter(cfg.seed, cfg.val_fraction, cfg.test_fraction)
        self.rate, self.premises = rate, premises
        self.held: dict[str, bool] = {}

    def uses_held_out(self, tid: int) -> bool:
        for name in self.premises.get(tid, ()):
            held = self.held.get(name)
            if held is None:
                held = self.held[name] = self.splitter.premise_held_out(name, self.rate)
            if held:
                return True
        return False

    def __call__(self, tid: int, key: str) -> dict[str, str]:
        return {
            "random": self.splitter.random(key),
            "novel_premises": self.splitter.novel(key, self.uses_held_out(tid)),
        }


def export_merged_data(
    db: Database | str | Path,
    repos: list[str] | None,
    out_dir: str | Path,
    config: ExportConfig | dict[str, Any] | None = None,
    **overrides: Any,
) -> ExportResult:
    """Export the merged data of ``repos`` (ids ``"URL@COMMIT"``; None: all) to ``out_dir``.

    ``config`` (an :class:`ExportConfig` or a dict) and keyword overrides set the split
    fractions, the seed and the novel-premise rate. Returns an :class:`ExportResult`. An
    unknown repository or an empty selection is a :class:`DataError`; nothing is written then.
    An ``out_dir`` that is not new, empty or an earlier export (see :func:`check_export_dir`)
    is a :class:`~leantrain.core.errors.ConfigError`, raised before anything is written.
    """
    out = check_export_dir(out_dir)
    cfg = _config(config, overrides)
    database, owned = _open(db)
    try:
        with gc_paused():
            return _export(database, repos, out, cfg)
    finally:
        if owned:
            database.close()


def _export(
    db: Database, repos: list[str] | None, out_dir: Path, cfg: ExportConfig
) -> ExportResult:
    conn = db.conn
    conn.execute("BEGIN")  # one read snapshot for the whole export
    try:
        row_ids, duplicates = select_theorems(db, repos)
        repo_ids = [
            f"{u}@{c}"
            for u, c in (
                conn.execute(
                    "SELECT url, commit_hash FROM repositories WHERE id = ?", (r,)
                ).fetchone()
                for r in row_ids
            )
        ]
        num_theorems = conn.execute("SELECT COUNT(*) FROM temp._sel").fetchone()[0]
        premises, with_premises_of = premise_stats(db, drop_tactics=cfg.drop_tactics)
        rate = cfg.novel_premise_rate
        if rate is None:
            rate = calibrate_rate(
                cfg.val_fraction + cfg.test_fraction,
                *weighted_histogram(premises, with_premises_of),
            )
        assign = _Assigner(cfg, rate, premises)
        held = {tid for tid in premises if assign.uses_held_out(tid)}
        splitter = assign.splitter
        del premises, assign
        details = _empty_details()
        total_tactics = 0
        with atomic_directory(out_dir) as tmp:
            write_marker(tmp, "export")  # so that a later export may replace this one
            writers = {
                (s, n): _ArrayWriter(tmp / s / f"{n}.json") for s in STRATEGIES for n in SPLIT_NAMES
            }
            num_tactics = 0
            hashes: dict[str, list[list[str]]] = {
                f"{s}/{n}": [] for s in STRATEGIES for n in SPLIT_NAMES
            }
            states: dict[str, list[list[str]]] = {key: [] for key in hashes}
            try:
                for row in theorem_rows(conn, "temp._sel", drop_tactics=cfg.drop_tactics):
                    tid, n_tac = row[0], row[12]
                    total_tactics += row[13]
                    key = theorem_key(row[3], row[4], row[6:8], row[8:10])
                    num_tactics += n_tac
                    with_premises = with_premises_of.get(tid, 0)
                    data = _theorem_json(row)  # once, for both strategies
                    stated = [statement_hash(row[5]), row[4]] if row[5] else _state_row(row)
                    for strategy, split in (
                        ("random", splitter.random(key)),
                        ("novel_premises", splitter.novel(key, tid in held)),
                    ):
                        writers[strategy, split].write(data)
                        if stated is not None:
                            (hashes if row[5] else states)[f"{strategy}/{split}"].append(stated)
                        d = details[strategy][split]
                        d["theorems"] += 1
                        d["tactics"] += n_tac
                        d["tactics_with_premises"] += with_premises
            finally:
                for w in writers.values():
                    w.close()
            (tmp / STATEMENT_HASHES).write_bytes(
                orjson.dumps({"format_version": 1, "splits": hashes, "states": states})
            )
            num_files, num_premises, unknown = _write_corpus(db, tmp / "corpus.jsonl")
            num_traced = _write_traced_files(db, tmp / "traced_files.jsonl")
            sizes = {s: {n: writers[s, n].count for n in SPLIT_NAMES} for s in STRATEGIES}
            result = ExportResult(
                out_dir=out_dir,
                repos=repo_ids,
                num_theorems=num_theorems,
                num_tactics=num_tactics,
                duplicates_dropped=duplicates,
                dropped_tactics=total_tactics - num_tactics,
                split_sizes=sizes,
                num_premise_files=num_files,
                num_premises=num_premises,
                num_traced_files=num_traced,
                novel_premise_rate=rate,
                config={k: getattr(cfg, k) for k in ExportConfig.KEYS},
                split_details=details,
                unknown_imports=unknown,
            )
            _write_metadata(db, row_ids, tmp / "metadata.json", result)
    finally:
        conn.execute("DROP TABLE IF EXISTS temp._sel")
        conn.execute("DROP TABLE IF EXISTS temp._sel_repos")
        conn.execute("COMMIT")
    return result


def _state_row(row: tuple[Any, ...]) -> list[str] | None:
    """``[state_hash, full_name]`` of a statement-less theorem row's first exported tactic's
    ``state_before`` (``None`` without one)."""
    if not row[11]:
        return None
    tactics = orjson.loads(row[11])
    state = tactics[0].get("state_before", "") if tactics else ""
    return [state_hash(state), row[4]] if state.strip() else None


def _theorem_json(row: tuple[Any, ...]) -> bytes:
    """The JSON of a :func:`~leantrain.export.theorem_stream.theorem_rows` row: its stored
    tactics text is copied in, not parsed and serialised again."""
    try:
        return orjson.dumps(theorem_record(row, orjson.Fragment(row[11])))
    except orjson.JSONEncodeError:  # an unknown field orjson cannot encode
        return dumps(theorem_record(row, json.loads(row[11])))


def _write_corpus(db: Database, path: Path) -> tuple[int, int, int]:
    """Write ``corpus.jsonl``; returns (files, premises, files with unknown imports).

    A file several repositories hold is written once: a traced copy (imports known) wins over
    one rebuilt from annotations, then the newest repository's; premises only the other copies
    have are added, so that no annotation of the merged theorems points outside the corpus."""
    copies: dict[str, list[tuple[int, str]]] = {}
    for fid, fpath, imports in db.conn.execute(
        "SELECT f.id, f.path, f.imports FROM premise_files f JOIN repositories r ON r.id = f.repo_id "
        "WHERE f.repo_id IN (SELECT id FROM temp._sel_repos) "
        "ORDER BY f.imports = 'null', r.date_processed DESC, r.id DESC, f.id"
    ):
        copies.setdefault(fpath, []).append((fid, imports))
    ordered = sorted(copies.items(), key=lambda kv: kv[1][0][0])
    conn = db.conn
    conn.execute("DROP TABLE IF EXISTS temp._corpus_files")
    conn.execute("CREATE TEMP TABLE _corpus_files (id INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO temp._corpus_files VALUES (?)", [(v[0][0],) for _, v in ordered])
    num_premises = unknown = 0
    try:
        streamed = conn.execute(  # the first copies' premises, in the order they are written
            "SELECT f.id, f.premises_json, f.num_premises FROM temp._corpus_files c "
            "JOIN premise_files f ON f.id = c.id ORDER BY c.id"
        )
        with path.open("wb", buffering=1 << 20) as f:
            for (fpath, versions), (_fid, text, count) in zip(ordered, streamed, strict=True):
                imports = json.loads(versions[0][1])
                if len(versions) > 1:
                    text, count = _merge_copies(conn, text, count, [fid for fid, _ in versions[1:]])
                line: dict[str, Any] = {
                    "path": fpath,
                    "imports": [] if imports is None else imports,
                    "premises": orjson.Fragment(text),
                }
                if imports is None:
                    line[IMPORTS_KNOWN] = False
                num_premises += count
                unknown += imports is None
                f.write(orjson.dumps(line) + b"\n")
    finally:
        conn.execute("DROP TABLE IF EXISTS temp._corpus_files")
    return len(copies), num_premises, unknown


def _merge_copies(conn: Any, text: bytes, count: int, others: list[int]) -> tuple[bytes, int]:
    """The premises JSON of a corpus file's first copy (``text``, ``count`` premises) plus
    the premises only ``others`` (ids of other copies of the file) have, and their number."""
    premises: list[Any] | None = None
    names: set[str] = set()
    added = False
    for other in others:
        (other_text,) = conn.execute(
            "SELECT premises_json FROM premise_files WHERE id = ?", (other,)
        ).fetchone()
        if other_text == text:  # the same file at another commit: nothing to add
            continue
        if premises is None:
            premises = loads(text)
            names = {p["full_name"] for p in premises}
        for p in loads(other_text):
            if p["full_name"] not in names:
                names.add(p["full_name"])
                premises.append(p)
                added = True
    if premises is None or not added:
        return text, count
    return dumps(premises), len(premises)


def _write_traced_files(db: Database, path: Path) -> int:
    seen: set[str] = set()
    with path.open("wb", buffering=1 << 20) as f:
        for (p,) in db.conn.execute(
            "SELECT path FROM traced_files WHERE repo_id IN (SELECT id FROM temp._sel_repos) ORDER BY repo_id, idx"
        ):
            if p not in seen:
                seen.add(p)
                # LeanDojo's own spacing: a small file, byte-identical to the source's lines
                line = json.dumps({"traced_file_path": p}, ensure_ascii=False) + "\n"
                f.write(line.encode("utf-8"))
    return len(seen)


def _write_metadata(db: Database, row_ids: list[int], path: Path, result: ExportResult) -> None:
    repos = [r for r in db.list_repositories() if r.row_id in set(row_ids)]
    q = db.conn.execute
    sel = "repo_id IN (SELECT id FROM temp._sel_repos)"
    total, proven = q(  # one pass over the theorems for both counts
        f"SELECT COUNT(*), COALESCE(SUM(status = 'proven'), 0) FROM theorems WHERE {sel}"
    ).fetchone()
    meta = {
        "repositories": [r.to_leandojo_json() for r in repos],
        "total_theorems": sum(r.num_theorems for r in repos),
        "num_proven_theorems": proven,
        "num_sorry_theorems": total - proven,
        "num_premise_files": sum(r.num_premise_files for r in repos),
        "num_premises": sum(r.num_premises for r in repos),
        "num_files_traced": sum(r.num_traced_files for r in repos),
        "creation_time": dt.datetime.now(dt.UTC).isoformat(),
        "leantrain": result.to_json(),
    }
    path.write_text(
        json.dumps(meta, ensure_ascii=False, indent=2, default=str) + "\n", encoding="utf-8"
    )
