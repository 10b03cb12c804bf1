"""The run functions and settings of ``leantrain export …`` (declared in :mod:`.cli`).

Bad data is a :class:`~leantrain.core.errors.DataError` (exit 1); an SQLite error from a damaged
or locked database becomes one naming the ``--db`` file, never a traceback. ``merge`` and
``dump-json`` check ``--out`` before opening the database: only a new path or leantrain's own
earlier output may be (atomically) replaced.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from leantrain.core.config import setting
from leantrain.core.errors import ConfigError, DataError
from leantrain.core.groups import DatabaseArgs, Group, RepoArgs
from leantrain.export.export_config import ExportConfig

DEFAULT_DB = "leantrain.db"


@dataclass
class Db(DatabaseArgs, defaults={"database": DEFAULT_DB}):
    """The database file (``--db``; default ``./leantrain.db``)."""


@dataclass
class Repos(RepoArgs, defaults={"database": DEFAULT_DB}):
    """The database file and the repositories (``--repo URL@COMMIT``, repeated; default all)."""


@dataclass
class ImportArgs(Group):
    """What ``export import`` reads."""

    paths: list[str] = setting(
        [],
        "LeanDojo-v2 export dirs, LeanDojo benchmark dirs, dynamic_database.json files, "
        "whole-proof rows (.jsonl/.parquet/.json: DeepSeek-Prover, NuminaMath-LEAN, Lean "
        "Workbook, miniF2F) or prove's proofs.json.",
        positional=True,
    )
    sample: bool = setting(False, "Import the sample data shipped with leantrain-core.")
    date_processed: str | None = setting(None, "ISO date to record instead of the source's.")
    lean_sources: str | None = setting(
        None,
        "The traced repository's checkout (at its commit): each theorem's statement and proof "
        "text are read from its Lean files (proof_origin 'source'; else its traced tactics).",
    )

    def check_group(self) -> None:
        """Something to import."""
        if not self.paths and not self.sample:
            raise ConfigError(
                "leantrain export import: give a PATH or --sample",
                hint="run 'leantrain export import --help'",
            )


@dataclass
class JsonArgs(Group):
    """How a listing is printed."""

    json: bool = setting(False, "Print JSON.")


@dataclass
class OutArgs(Group):
    """Where a command writes."""

    out: str = setting(
        help="Output: merge's export dir, dump-json's file, trace's traced export (new, empty, "
        "or leantrain's own earlier output, replaced atomically)."
    )


@dataclass
class RepoArg(Group):
    """One repository."""

    repo: str = setting(help="Repository id URL@COMMIT.", positional=True)


@dataclass
class TraceArgs(Group):
    """The repository ``export trace`` traces."""

    url: str = setting(help="Git URL of the repository.", positional=True)
    commit: str = setting(help="Commit to trace.", positional=True)


def _say(text: str) -> None:
    """Print ``text``; a path that is not valid UTF-8 is shown with escapes, not a traceback."""
    try:
        print(text)
    except UnicodeEncodeError:
        import sys

        enc = sys.stdout.encoding or "utf-8"
        print(text.encode(enc, "backslashreplace").decode(enc))


def _print(obj: Any) -> None:
    _say(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def _say_splits(details: dict[str, dict[str, dict[str, int]]]) -> None:
    """One line per strategy: theorems / tactics / tactics with premises of each split."""
    for strategy, splits in details.items():
        _say(
            f"  {strategy}: "
            + ", ".join(
                f"{name} {d['theorems']} theorems / {d['tactics']} tactics / "
                f"{d['tactics_with_premises']} with premises"
                for name, d in splits.items()
            )
        )


@contextmanager
def _opened(db: DatabaseArgs, *, create: bool = False) -> Iterator[Any]:
    """The database of ``--db``; an SQLite error while it is open is a DataError naming it."""
    import sqlite3

    from leantrain.export.database import Database

    path = str(db.database)
    try:
        with Database(path, create=create) as database:
            yield database
    except sqlite3.OperationalError as e:
        if "locked" in str(e) or "busy" in str(e):
            raise DataError(
                path,
                "the database stayed locked by another process",
                hint="wait for the other leantrain process to finish, then run this again",
            ) from None
        raise DataError(
            path,
            f"cannot read the database ({e})",
            hint="it may be damaged: restore it from a backup, or import into a new file",
        ) from None
    except sqlite3.DatabaseError as e:
        raise DataError(
            path,
            f"the database is damaged ({e})",
            hint="restore it from a backup, or import into a new file (--db new.db)",
        ) from None


def import_(db: Db, args: ImportArgs) -> int:
    """``export import``: import sources into the database."""
    date = None
    if args.date_processed:
        from leantrain.export.sources import parse_datetime

        date = parse_datetime(args.date_processed, field_name="--date-processed")
    with _opened(db, create=True) as database:
        ids = database.import_sample() if args.sample else []
        for path in args.paths:
            ids += database.import_path(path, date_processed=date, lean_sources=args.lean_sources)
        for rid in ids:
            _say(f"imported {rid}")
        s = database.stats()
        _say(
            f"{db.database}: {s['repositories']} repositories, {s['theorems']} theorems, "
            f"{s['tactics']} tactics"
        )
    return 0


def list_(db: Db, args: JsonArgs) -> int:
    """``export list``: the repositories."""
    with _opened(db) as database:
        repos = database.list_repositories()
    if args.json:
        _print([r.to_json() for r in repos])
    for r in [] if args.json else repos:
        _say(f"{r.id}\t{r.name}\t{r.num_theorems} theorems\t{r.date_processed.isoformat()}")
    return 0


def stats(db: Db, args: JsonArgs) -> int:
    """``export stats``: counts, and the splits an export of every repository would have."""
    with _opened(db) as database:
        s = database.stats()
        if s["theorems"]:
            from leantrain.export.export_merged import split_summary

            s.update(split_summary(database))  # default seed and fractions
    if args.json:
        _print(s)
        return 0
    for k, v in s.items():
        if k == "splits":
            _say_splits(v)
        else:
            _say(f"{k}: {v}")
    return 0


def merge(repos: Repos, out: OutArgs, config: ExportConfig) -> int:
    """``export merge``: the merged data of repositories, LeanDojo-v2 format."""
    from leantrain.export.export_merged import check_export_dir, export_merged_data

    check_export_dir(out.out, flag="--out")  # before the database is even opened
    with _opened(repos) as database:
        result = export_merged_data(database, repos.repos, out.out, config)
    _say(
        f"wrote {result.out_dir}: {result.num_theorems} theorems from "
        f"{len(result.repos)} repositories"
    )
    _say_splits(result.split_details)
    return 0


def curriculum(db: Db, args: JsonArgs) -> int:
    """``export curriculum``: the repositories, easiest first."""
    from leantrain.export.curriculum import order_repositories

    with _opened(db) as database:
        order = order_repositories(database)
    if args.json:
        _print([d.to_json() for d in order])
    for i, d in enumerate([] if args.json else order):
        _say(f"{i + 1}. {d.repo_id}\teasy {d.easy}, medium {d.medium}, hard {d.hard}")
    return 0


def dump_json(repos: Repos, out: OutArgs) -> int:
    """``export dump-json``: the database as a LeanDojo-v2 dynamic_database.json."""
    from leantrain.export.dynamic_json import check_dump_path

    check_dump_path(out.out, flag="--out")
    with _opened(repos) as database:
        _say(f"wrote {database.dump_json(out.out, repos.repos)}")
    return 0


def delete(db: Db, args: RepoArg) -> int:
    """``export delete``: a repository and its data."""
    with _opened(db) as database:
        repo = database.get_repository(args.repo)
        database.delete_repository(repo.id)
    _say(f"deleted {repo.id}")
    return 0


def trace(db: Db, args: TraceArgs, out: OutArgs) -> int:
    """``export trace``: trace a repository with LeanDojo and import it."""
    from leantrain.export.trace import check_trace_requirements, trace_repository

    check_trace_requirements()  # before creating a database that would stay empty
    with _opened(db, create=True) as database:
        trace_repository(args.url, args.commit, out.out, database=database)
    _say(f"traced and imported {args.url}@{args.commit}")
    return 0
