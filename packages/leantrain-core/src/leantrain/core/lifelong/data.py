"""The data of a lifelong run: repository ids and names, the database (opened through the
``leantrain.databases`` entry point, so core imports no database code), the data keywords of a
trainer's ``train()``, each repository's own evaluation splits, and names of one-off data."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_directory, atomic_write_json
from leantrain.core.errors import ConfigError, DataError, MissingDependencyError

DATABASE_GROUP = "leantrain.databases"
"""Entry points ``name = "module:opener"``: ``opener(path)`` opens a database file for a run
(leantrain-export's ``sqlite``: checked whole, a damaged file is one line)."""

_SPLIT_DIRS = ("random", "novel_premises")
_SHARED_FILES = ("corpus.jsonl", "traced_files.jsonl", "metadata.json")


def repo_id(item: Any, database: Any = None) -> str:
    """``"URL@COMMIT"`` of a repository given as such a string, a name the database knows, or
    an object with ``url`` and ``commit`` (LeanDojo's ``LeanGitRepo``)."""
    if isinstance(item, str):
        if database is not None and hasattr(database, "get_repository"):
            return str(database.get_repository(item).id)
        if "@" in item:
            return item
        raise ConfigError(
            f"repository '{item}' is not 'URL@COMMIT'",
            hint="give repositories as URL@COMMIT or objects with url and commit",
        )
    url, commit = getattr(item, "url", None), getattr(item, "commit", None)
    if isinstance(url, str) and isinstance(commit, str):
        return f"{url}@{commit}"
    raise ConfigError(
        f"cannot tell which repository {item!r} is",
        hint="give 'URL@COMMIT' strings or objects with 'url' and 'commit' attributes",
    )


def repo_slug(repo: str) -> str:
    """A short filesystem-safe name of a repository id (its URL's last path part)."""
    url = repo.rpartition("@")[0] or repo
    tail = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    return re.sub(r"[^A-Za-z0-9._-]+", "-", tail).strip("-")[:60] or "repo"


def step_name(index: int, repo: str) -> str:
    """``"003-mathlib4"``: the name of step ``index``'s checkpoint (sortable)."""
    return f"{index:03d}-{repo_slug(repo)}"


def open_database(database: Any) -> Any:
    """``database`` itself when it has ``export_merged_data``; a path is opened by the
    ``sqlite`` opener of the ``leantrain.databases`` entry point (leantrain-export's, which
    trainers do not depend on: the error says so), which reads the whole file first."""
    if database is None or hasattr(database, "export_merged_data"):
        return database
    if isinstance(database, (str, Path)):
        for ep in entry_points(group=DATABASE_GROUP, name="sqlite"):
            return ep.load()(database)
        raise MissingDependencyError(
            f"database '{database}': reading a database path needs leantrain-export",
            hint="pip install leantrain-export (or pass an object with export_merged_data)",
        )
    raise ConfigError(
        f"database {database!r} has no export_merged_data(repos, path)",
        hint="pass leantrain.export.Database(path), its path, or a LeanDojo-v2 DynamicDatabase",
    )


def check_database(database: Any) -> None:
    """Open and close a database path (:func:`open_database`): a missing, foreign or damaged
    file is one line before any model loads. Objects and ``None`` pass."""
    if isinstance(database, (str, Path)):
        db = open_database(database)
        close = getattr(db, "close", None)
        if callable(close):
            close()


def train_data(repos: Any, database: Any, data_path: Any, config: Any = None) -> dict[str, Any]:
    """The data keywords of :class:`LifelongEngine` for a trainer's ``train(repos=None,
    database=None, export_dir=None, *, data_path=None)``, the one signature of every trainer:

    * ``train(DIR_OR_DATASET)`` or ``train(data_path=…)``: one step on that data;
    * ``train(repos, database, export_dir)`` (LeanDojo-v2's order; its third argument is where
      the merged exports go): lifelong, repository by repository;
    * ``train()``: the config's ``database`` (and ``repos``), else its ``data_path``.

    Data given with a database is one line naming ``export_dir`` (LeanDojo-v2's ``data_path=``
    keyword), as is a list of repositories without a database or no data at all."""
    if database is None and repos is not None and not isinstance(repos, (list, tuple)):
        if data_path is not None:
            raise ConfigError("train(): the data is given twice", hint="give data_path= only")
        data_path, repos = repos, None
    if data_path is not None:
        if database is not None:
            raise ConfigError(
                "train(): data_path is data to train on, and a database was given too",
                hint="the merged exports of lifelong training go to export_dir=… "
                "(LeanDojo-v2's third argument of train)",
            )
        return {"data": data_path}
    database = database if database is not None else getattr(config, "database", None)
    if database is not None and getattr(config, "data_path", None) is not None:
        raise ConfigError(
            "the config sets both database (lifelong, repository by repository) and data_path "
            "(one step on that data)",
            hint="keep one; the merged exports of lifelong training go to export_dir",
        )
    if database is None:
        if repos is not None:
            raise ConfigError(
                "train(): a list of repos needs a database",
                hint="pass database=… (--database lt.db)",
            )
        if getattr(config, "data_path", None) is None:
            raise ConfigError(
                "nothing to train on",
                hint="give data_path (--data-path EXPORT_DIR), or a database (and repos) for "
                "lifelong training",
            )
        return {"data": config.data_path}
    repos = repos if repos is not None else getattr(config, "repos", None)
    return {"database": database, "repos": list(repos) if repos else None}


def write_repo_eval_dir(export_dir: Path, repo: str, out: Path) -> Path:
    """Write ``repo``'s own val/test theorems of an export (both split strategies) to ``out``,
    beside the export's corpus, so that a trainer's ``evaluate(out)`` scores that repository
    alone. Theorems are matched by their ``url`` and ``commit`` fields."""
    from leantrain.core.schemas import read_json

    url, _, commit = repo.rpartition("@")
    with atomic_directory(out) as tmp:
        for strategy in _SPLIT_DIRS:
            for split in ("val", "test"):
                src = export_dir / strategy / f"{split}.json"
                if not src.is_file():
                    continue
                rows = read_json(src)
                if not isinstance(rows, list):
                    raise DataError(src, "expected a JSON array of theorems")
                mine = [
                    r
                    for r in rows
                    if isinstance(r, dict) and r.get("url") == url and r.get("commit") == commit
                ]
                atomic_write_json(tmp / strategy / f"{split}.json", mine, indent=None)
        for name in _SHARED_FILES:
            src = export_dir / name
            if src.is_file():
                try:
                    os.link(src, tmp / name)
                except OSError:
                    shutil.copyfile(src, tmp / name)
    return out


def data_label(data: Any) -> str:
    """The name of one-off training data in a run's ``order``: ``data:<absolute path>`` for a
    path, ``dataset@<SHA-256 of the rows>`` for in-memory data (a ``datasets.Dataset`` or a list
    of rows). A rerun into the same run directory with other data is refused by name, like a
    rerun on other repositories, instead of returning the old result."""
    if isinstance(data, (str, Path)):
        return f"data:{Path(data).resolve()}"
    return f"dataset@{content_fingerprint(data)}"


def content_fingerprint(data: Any) -> str:
    """Hex SHA-256 of in-memory rows: a ``datasets.Dataset`` (read in batches, whatever its
    format) or a list / tuple of JSON-like rows. Anything else is a :class:`ConfigError`."""
    if hasattr(data, "column_names") and hasattr(data, "with_format"):  # datasets.Dataset
        batches: Iterable[Any] = data.with_format(None).iter(batch_size=1024)
    elif isinstance(data, (list, tuple)):
        batches = (data[i : i + 1024] for i in range(0, len(data), 1024))
    else:
        raise ConfigError(
            f"cannot tell in-memory data of type {type(data).__name__} apart from other data",
            hint="pass a datasets.Dataset, a list of rows, or the path of an export or a file",
        )
    digest = hashlib.sha256()
    for batch in batches:
        digest.update(json.dumps(batch, sort_keys=True, ensure_ascii=False, default=repr).encode())
        digest.update(b"\n")
    return digest.hexdigest()
