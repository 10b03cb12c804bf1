"""``leantrain export …``: import, list, stats, merge, curriculum, dump-json, delete, trace.

Only :func:`register` runs when ``leantrain`` starts; the subcommands import the database code
when they run. Argument errors are :class:`~leantrain.core.errors.ConfigError` (one line,
exit 2), bad data :class:`~leantrain.core.errors.DataError` (exit 1). An SQLite error from a
damaged database becomes a DataError naming the ``--db`` file, never a traceback. ``merge`` and
``dump-json`` check ``--out`` before opening the database: only a new path or leantrain's own
earlier output may be (atomically) replaced.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from leantrain.core.cli import Command
from leantrain.core.command import ArgumentParser
from leantrain.core.errors import ConfigError

DEFAULT_DB = "leantrain.db"  # repeated here so that register() imports nothing else


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``leantrain export``."""
    p = ArgumentParser(
        prog="leantrain export",
        description="The database of traced Lean repositories and its LeanDojo-v2 exports.",
    )
    sub = p.add_subparsers(
        dest="cmd", required=True, parser_class=ArgumentParser, metavar="COMMAND"
    )

    def add(name: str, help: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help, description=help)
        sp.add_argument("--db", default=DEFAULT_DB, help=f"database file (default: ./{DEFAULT_DB})")
        return sp

    sp = add(
        "import",
        "import a LeanDojo-v2 export dir, a LeanDojo benchmark dir or a dynamic_database.json",
    )
    sp.add_argument("paths", nargs="*", metavar="PATH")
    sp.add_argument(
        "--sample", action="store_true", help="import the sample data shipped with leantrain-core"
    )
    sp.add_argument(
        "--date-processed", default=None, help="ISO date to record instead of the source's"
    )
    sp = add("list", "list the repositories")
    sp.add_argument("--json", action="store_true", help="print JSON")
    sp = add("stats", "counts over the database")
    sp.add_argument("--json", action="store_true", help="print JSON")
    sp = add("merge", "export the merged data of repositories (LeanDojo-v2 format)")
    sp.add_argument(
        "--repo",
        action="append",
        default=None,
        metavar="URL@COMMIT",
        help="a repository (repeat; default: all)",
    )
    sp.add_argument(
        "--out",
        required=True,
        help="output directory: new, empty, or an earlier export (replaced atomically)",
    )
    sp.add_argument(
        "--val-fraction", type=float, default=0.2, help="fraction of theorems in val (default 0.2)"
    )
    sp.add_argument(
        "--test-fraction",
        type=float,
        default=0.2,
        help="fraction of theorems in test (default 0.2)",
    )
    sp.add_argument("--seed", type=int, default=3407, help="split seed (default 3407)")
    sp.add_argument(
        "--novel-premise-rate",
        type=float,
        default=None,
        help="premise hold-out rate (default: calibrated)",
    )
    sp = add("curriculum", "the repositories ordered easiest first (LeanAgent's rule)")
    sp.add_argument("--json", action="store_true", help="print JSON")
    sp = add("dump-json", "write the database as a LeanDojo-v2 dynamic_database.json")
    sp.add_argument(
        "--out", required=True, help="output file: new, or an earlier dump (replaced atomically)"
    )
    sp.add_argument(
        "--repo",
        action="append",
        default=None,
        metavar="URL@COMMIT",
        help="a repository (repeat; default: all)",
    )
    sp = add("delete", "delete a repository and its data")
    sp.add_argument("repo", metavar="URL@COMMIT")
    sp = add(
        "trace",
        "trace a repository with LeanDojo (needs leantrain-export[trace] and a Lean toolchain) and import it",
    )
    sp.add_argument("url")
    sp.add_argument("commit")
    sp.add_argument("--out", required=True, help="directory for the traced export")
    return p


def _say(text: str) -> None:
    """Print ``text``; a path that is not valid UTF-8 is shown with escapes, not a traceback."""
    try:
        print(text)
    except UnicodeEncodeError:
        import sys

        enc = sys.stdout.encoding or "utf-8"
        print(text.encode(enc, "backslashreplace").decode(enc))


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


def _print(obj: Any) -> None:
    _say(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def run(argv: list[str]) -> int:
    """Run ``leantrain export`` with ``argv``; returns the exit code."""
    import sqlite3

    from leantrain.core.errors import DataError

    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except sqlite3.OperationalError as e:
        if "locked" in str(e) or "busy" in str(e):
            raise DataError(
                args.db,
                "the database stayed locked by another process",
                hint="wait for the other leantrain process to finish, then run this again",
            ) from None
        raise DataError(
            args.db,
            f"cannot read the database ({e})",
            hint="it may be damaged: restore it from a backup, or import into a new file",
        ) from None
    except sqlite3.DatabaseError as e:
        raise DataError(
            args.db,
            f"the database is damaged ({e})",
            hint="restore it from a backup, or import into a new file (--db new.db)",
        ) from None


def _run(args: argparse.Namespace) -> int:
    from leantrain.export.database import Database

    if args.cmd == "import":
        if not args.paths and not args.sample:
            raise ConfigError(
                "leantrain export import: give a PATH or --sample",
                hint="run 'leantrain export import --help'",
            )
        date = None
        if args.date_processed:
            from leantrain.export.sources import parse_datetime

            date = parse_datetime(args.date_processed, field_name="--date-processed")
        with Database(args.db) as db:
            ids = db.import_sample() if args.sample else []
            for path in args.paths:
                ids += db.import_path(path, date_processed=date)
            for rid in ids:
                _say(f"imported {rid}")
            s = db.stats()
            _say(
                f"{args.db}: {s['repositories']} repositories, {s['theorems']} theorems, {s['tactics']} tactics"
            )
        return 0
    if args.cmd == "merge":
        from leantrain.export.export_merged import check_export_dir

        check_export_dir(args.out, flag="--out")  # before the database is even opened
    if args.cmd == "dump-json":
        from leantrain.export.dynamic_json import check_dump_path

        check_dump_path(args.out, flag="--out")
    if args.cmd == "trace":
        from leantrain.export.trace import check_trace_requirements

        check_trace_requirements()  # before creating a database that would stay empty
    with Database(args.db, create=args.cmd == "trace") as db:
        if args.cmd == "list":
            repos = db.list_repositories()
            if args.json:
                _print([r.to_json() for r in repos])
            for r in [] if args.json else repos:
                _say(f"{r.id}\t{r.name}\t{r.num_theorems} theorems\t{r.date_processed.isoformat()}")
        elif args.cmd == "stats":
            s = db.stats()
            if s["theorems"]:
                from leantrain.export.export_merged import split_summary

                # the splits an export of every repository would have (default seed/fractions)
                s.update(split_summary(db))
            if args.json:
                _print(s)
            else:
                for k, v in s.items():
                    if k == "splits":
                        _say_splits(v)
                    else:
                        _say(f"{k}: {v}")
        elif args.cmd == "merge":
            from leantrain.export.export_merged import export_merged_data

            result = export_merged_data(
                db,
                args.repo,
                args.out,
                val_fraction=args.val_fraction,
                test_fraction=args.test_fraction,
                seed=args.seed,
                novel_premise_rate=args.novel_premise_rate,
            )
            _say(
                f"wrote {result.out_dir}: {result.num_theorems} theorems from {len(result.repos)} repositories"
            )
            _say_splits(result.split_details)
        elif args.cmd == "curriculum":
            from leantrain.export.curriculum import order_repositories

            order = order_repositories(db)
            if args.json:
                _print([d.to_json() for d in order])
            for i, d in enumerate([] if args.json else order):
                _say(f"{i + 1}. {d.repo_id}\teasy {d.easy}, medium {d.medium}, hard {d.hard}")
        elif args.cmd == "dump-json":
            _say(f"wrote {db.dump_json(args.out, args.repo)}")
        elif args.cmd == "delete":
            repo = db.get_repository(args.repo)
            db.delete_repository(repo.id)
            _say(f"deleted {repo.id}")
        elif args.cmd == "trace":
            from leantrain.export.trace import trace_repository

            trace_repository(args.url, args.commit, args.out, database=db)
            _say(f"traced and imported {args.url}@{args.commit}")
    return 0


def register() -> list[Command]:
    """The ``export`` command of the ``leantrain`` CLI."""
    return [
        Command(
            "export",
            "database of traced repositories: import, list, stats, merge, curriculum, dump-json",
            run,
        )
    ]
