"""Readers of the data formats a database imports, as one stream of :class:`SourceItem`.

Recognised sources (see :func:`read_source`):

* a LeanDojo-v2 export directory (``metadata.json``, ``random/`` or ``novel_premises/``,
  optionally ``corpus.jsonl`` and ``traced_files.jsonl``), single- or multi-repository;
* a LeanDojo Benchmark 4 directory: the same without ``metadata.json`` (url and commit come
  from the theorems), or a directory of bare split files (``*.json`` arrays of theorems);
* a LeanDojo-v2 / LeanAgent ``dynamic_database.json``;
* whole-proof rows (``.jsonl``, ``.parquet``, a ``.json`` array with ``formal_statement``:
  DeepSeek-Prover, NuminaMath-LEAN, Lean Workbook, miniF2F-style) and ``prove``'s
  ``proofs.json``, each as a pseudo-repository (:mod:`leantrain.export.whole_proofs`).

Every file is read by core's one strict reader (:mod:`leantrain.core.json_reader`): big JSON
arrays are streamed, so importing a 100k-theorem split does not hold the whole file's objects in
memory, and a file that is not what it should be is a ``DataError`` naming it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError
from leantrain.core.json_reader import iter_json_array, iter_jsonl, read_json

__all__ = ["RepoInfo", "SourceItem", "iter_json_array", "read_source"]

SPLIT_NAMES = ("train", "val", "test")
STRATEGIES = ("random", "novel_premises")


@dataclass
class RepoInfo:
    """What a source says about one repository (everything but its theorems and files)."""

    url: str
    commit: str
    name: str = ""
    lean_version: str = ""
    lean_dojo_version: str = ""
    date_processed: dt.datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    pr_url: str | None = None


@dataclass
class SourceItem:
    """One item of a source stream.

    ``kind`` is ``"repo"`` (``value`` a :class:`RepoInfo`), ``"theorem"`` (``value`` a theorem
    dict, or a :class:`~leantrain.export.typed_records.TheoremRecord` from a reader asked for
    records; ``status`` set when the source says so), ``"premise_file"`` (a corpus line dict,
    or a :class:`~leantrain.export.typed_records.CorpusRecord`) or
    ``"traced_file"`` (a path string). ``repo`` is the ``(url, commit)`` the item belongs to,
    or None for "every repository of this source" (a corpus shared by a merged export).
    ``path``/``index`` locate the record for error messages.
    """

    kind: str
    value: Any
    repo: tuple[str, str] | None = None
    status: str | None = None
    path: Path | None = None
    index: int | None = None


def parse_datetime(
    value: Any, *, path: Path | None = None, field_name: str = "date_processed"
) -> dt.datetime:
    """An aware UTC datetime from an ISO string (naive times are taken as UTC) or a datetime."""
    if isinstance(value, dt.datetime):
        parsed = value
    else:
        try:
            parsed = dt.datetime.fromisoformat(str(value))
        except ValueError:
            raise DataError(
                path,
                f"not an ISO 8601 date: {value!r}",
                field=field_name,
                hint="write it as 2024-05-01T12:00:00",
            ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


_POS_RE = re.compile(
    r"^\s*(?:Pos)?\s*\(\s*(?:line_nb\s*=\s*)?(-?\d+)\s*,\s*(?:column_nb\s*=\s*)?(-?\d+)\s*\)\s*$"
)


def parse_pos(value: Any) -> Any:
    """``[line, col]`` from a list or LeanAgent's ``"Pos(l, c)"`` / ``"(l, c)"`` strings.

    Anything else is returned unchanged for the schema validation to reject with a clear error.
    """
    if isinstance(value, str):
        m = _POS_RE.match(value)
        if m:
            return [int(m.group(1)), int(m.group(2))]
    return value


def repo_name(url: str) -> str:
    """A short name for a repository URL: ``owner/repo`` for hosted ones, else the last part."""
    parts = [p for p in re.split(r"[/:]", url.rstrip("/")) if p]
    if not parts:
        return url
    last = parts[-1].removesuffix(".git")
    if re.match(r"^(https?|ssh|git)$", parts[0]) or "@" in url.split("/")[0] or "." in parts[0]:
        return "/".join([*parts[-2:-1], last]) if len(parts) >= 3 else last
    return last


# -- format detection ---------------------------------------------------------------------------
def _split_files(root: Path) -> list[Path]:
    """The theorem files of an export / benchmark directory (one strategy only, no duplicates)."""
    for strategy in STRATEGIES:
        d = root / strategy
        if d.is_dir():
            files = [d / f"{s}.json" for s in SPLIT_NAMES if (d / f"{s}.json").is_file()]
            if files:
                return files
    return sorted(p for p in root.glob("*.json") if p.name != "metadata.json")


def _check_repo(r: Any, path: Path, where: str, *, index: int | None = None) -> dict[str, Any]:
    """A repository object with a string ``url`` and ``commit`` and well-typed optional fields."""
    if not isinstance(r, dict):
        raise DataError(
            path,
            f"expected a repository object, got {type(r).__name__}",
            index=index,
            field=where,
            hint='a repository is {"url": …, "commit": …}',
        )
    for key, required in _REPO_STR_FIELDS.items():
        value = r.get(key)
        if value is None and not required:
            continue
        if not isinstance(value, str) or (required and not value.strip()):
            got = "missing" if value is None else f"{type(value).__name__} {str(value)[:40]!r}"
            raise DataError(
                path,
                f"expected a {'non-empty ' if required else ''}string, got {got}",
                index=index,
                field=f"{where}.{key}",
                hint=f"'{key}' is a string such as {_REPO_EXAMPLES[key]!r}",
            )
    if r.get("metadata") is not None and not isinstance(r["metadata"], dict):
        raise DataError(
            path,
            f"expected an object, got {type(r['metadata']).__name__}",
            index=index,
            field=f"{where}.metadata",
            hint='metadata is an object such as {"date_processed": "2024-05-01T12:00:00"}',
        )
    return r


_REPO_STR_FIELDS = {
    "url": True,
    "commit": True,
    "name": False,
    "lean_version": False,
    "lean_dojo_version": False,
    "pr_url": False,
}
_REPO_EXAMPLES = {
    "url": "https://github.com/owner/repo",
    "commit": "0123abc…",
    "name": "owner/repo",
    "lean_version": "v4.9.0",
    "lean_dojo_version": "2.1.0",
    "pr_url": "https://github.com/owner/repo/pull/1",
}


def _repo_info(r: dict[str, Any], path: Path) -> RepoInfo:
    """A :class:`RepoInfo` from a checked repository object (see :func:`_check_repo`)."""
    meta = dict(r.get("metadata") or {})
    date = meta.pop("date_processed", None)
    return RepoInfo(
        url=r["url"],
        commit=r["commit"],
        name=r.get("name") or repo_name(r["url"]),
        lean_version=r.get("lean_version") or "",
        lean_dojo_version=r.get("lean_dojo_version") or "",
        date_processed=None if date is None else parse_datetime(date, path=path),
        metadata=meta,
        pr_url=r.get("pr_url"),
    )


def _repo_infos_from_metadata(path: Path, meta: Any) -> list[RepoInfo]:
    if not isinstance(meta, dict):
        raise DataError(
            path,
            f"expected a JSON object, got {type(meta).__name__}",
            hint="metadata.json is an object",
        )
    infos = []
    if "repositories" in meta:  # a LeanDojo-v2 merged export
        repos = meta["repositories"]
        if not isinstance(repos, list):
            raise DataError(
                path,
                f"expected a list of repositories, got {type(repos).__name__}",
                field="repositories",
                hint='metadata.json of a merged export has "repositories": [{"url": …}, …]',
            )
        for i, r in enumerate(repos):
            infos.append(_repo_info(_check_repo(r, path, f"repositories[{i}]"), path))
    elif "from_repo" in meta:  # a lean_dojo trace export
        r = _check_repo(meta["from_repo"], path, "from_repo")
        for key in ("lean_version", "leandojo_version"):
            if meta.get(key) is not None and not isinstance(meta[key], str):
                raise DataError(
                    path,
                    f"expected a string, got {type(meta[key]).__name__}",
                    field=key,
                    hint="versions are strings such as 'v4.9.0'",
                )
        date = meta.get("creation_time")
        extra = {
            k: v
            for k, v in meta.items()
            if k not in ("from_repo", "creation_time", "leandojo_version")
        }
        infos.append(
            RepoInfo(
                url=r["url"],
                commit=r["commit"],
                name=repo_name(r["url"]),
                lean_version=str(meta.get("lean_version") or ""),
                lean_dojo_version=str(meta.get("leandojo_version") or ""),
                date_processed=None
                if date is None
                else parse_datetime(date, path=path, field_name="creation_time"),
                metadata=extra,
            )
        )
    else:
        raise DataError(
            path,
            "neither 'from_repo' nor 'repositories': not the metadata.json of a LeanDojo export",
            field="from_repo",
            hint='a traced export has "from_repo": {"url": …, "commit": …}; '
            "a benchmark directory without one may leave metadata.json out",
        )
    return infos


def _theorem_decoder(records: bool) -> Callable[[bytes], list[Any]] | None:
    """The typed decoder of split-file pieces when ``records`` is asked for (see
    :mod:`leantrain.export.typed_records`)."""
    if not records:
        return None
    from leantrain.export.typed_records import decode_theorems

    return decode_theorems


def _corpus_decoder(records: bool) -> Callable[[bytes], Any] | None:
    """The typed decoder of corpus lines when ``records`` is asked for."""
    if not records:
        return None
    from leantrain.export.typed_records import decode_corpus_line

    return decode_corpus_line


def read_export_dir(root: Path, *, records: bool = False) -> Iterator[SourceItem]:
    """Items of a LeanDojo-v2 export or LeanDojo benchmark directory (``records``: see
    :func:`read_source`)."""
    meta_path = root / "metadata.json"
    if meta_path.is_file():
        for info in _repo_infos_from_metadata(meta_path, read_json(meta_path)):
            yield SourceItem("repo", info)
    files = _split_files(root)
    if not files:
        raise DataError(
            root,
            "no theorem files found",
            hint="expected random/{train,val,test}.json, novel_premises/… or *.json split files",
        )
    count = 0
    for f in files:
        for i, obj in iter_json_array(f, what="theorems", decode_piece=_theorem_decoder(records)):
            count += 1
            yield SourceItem("theorem", obj, path=f, index=i)
    if count == 0:
        raise DataError(
            root,
            f"no theorems: {', '.join(str(f.relative_to(root)) for f in files)} hold empty arrays",
            hint="export or trace a repository with at least one theorem",
        )
    corpus = root / "corpus.jsonl"
    if corpus.is_file():
        lines = 0
        decode_line = _corpus_decoder(records)
        for i, obj in iter_jsonl(corpus, what="corpus files", decode_line=decode_line):
            lines += 1
            yield SourceItem("premise_file", obj, path=corpus, index=i)
        if lines == 0:
            raise DataError(
                corpus,
                "the file is empty: no Lean files, so no premises",
                hint="re-export it (one JSON object per Lean file a line), or remove it",
            )
    traced = root / "traced_files.jsonl"
    if traced.is_file():
        for i, obj in iter_jsonl(traced):
            if not isinstance(obj, dict) or not isinstance(obj.get("traced_file_path"), str):
                raise DataError(
                    traced, 'expected {"traced_file_path": …}', index=i, field="traced_file_path"
                )
            yield SourceItem("traced_file", obj["traced_file_path"], path=traced, index=i)


_DYN_STATUSES = ("proven_theorems", "sorry_theorems_proved", "sorry_theorems_unproved")


def _fix_positions(obj: Any) -> Any:
    """Turn LeanAgent's ``"Pos(l, c)"`` strings into lists inside a theorem or corpus record."""
    if not isinstance(obj, dict):
        return obj
    for key in ("start", "end"):
        if key in obj:
            obj[key] = parse_pos(obj[key])
    for tac in obj.get("traced_tactics") or []:
        ann = tac.get("annotated_tactic") if isinstance(tac, dict) else None
        if isinstance(ann, list) and len(ann) == 2 and isinstance(ann[1], list):
            for a in ann[1]:
                if isinstance(a, dict):
                    for key in ("def_pos", "def_end_pos"):
                        if key in a:
                            a[key] = parse_pos(a[key])
    for p in obj.get("premises") or []:
        if isinstance(p, dict):
            for key in ("start", "end"):
                if key in p:
                    p[key] = parse_pos(p[key])
    return obj


def read_dynamic_database(path: Path) -> Iterator[SourceItem]:
    """Items of a LeanDojo-v2 / LeanAgent ``dynamic_database.json``."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("repositories"), list):
        raise DataError(
            path,
            "expected an object with a 'repositories' list",
            field="repositories",
            hint='a dynamic_database.json is {"repositories": [...]}',
        )
    if not data["repositories"]:
        raise DataError(
            path,
            "no repositories: the 'repositories' list is empty",
            field="repositories",
            hint="give a dynamic_database.json holding at least one repository",
        )
    for i, r in enumerate(data["repositories"]):
        info = _repo_info(_check_repo(r, path, f"repositories[{i}]"), path)
        repo_key = (info.url, info.commit)
        yield SourceItem("repo", info)
        _check_counts(r, path, i)
        for key in (*_DYN_STATUSES, "premise_files", "files_traced"):
            if r.get(key) is not None and not isinstance(r[key], list):
                raise DataError(
                    path,
                    f"expected a list, got {type(r[key]).__name__}",
                    field=f"repositories[{i}].{key}",
                    hint=f"'{key}' of a dynamic_database.json repository is a list",
                )
        for status_key in _DYN_STATUSES:
            for j, t in enumerate(r.get(status_key) or []):
                if isinstance(t, dict):
                    t = _fix_positions(dict(t))
                    t.setdefault("url", info.url)
                    t.setdefault("commit", info.commit)
                    t.pop("difficulty_rating", None)  # derived; recomputed by the curriculum
                yield SourceItem(
                    "theorem", t, repo=repo_key, status=_STATUS[status_key], path=path, index=j
                )
        for j, pf in enumerate(r.get("premise_files") or []):
            yield SourceItem(
                "premise_file",
                _fix_positions(dict(pf)) if isinstance(pf, dict) else pf,
                repo=repo_key,
                path=path,
                index=j,
            )
        for j, f in enumerate(r.get("files_traced") or []):
            if not isinstance(f, str):
                raise DataError(
                    path,
                    f"expected a file path string, got {type(f).__name__}",
                    index=j,
                    field=f"repositories[{i}].files_traced",
                )
            yield SourceItem("traced_file", f, repo=repo_key, path=path)


def _check_counts(r: dict[str, Any], path: Path, i: int) -> None:
    """``total_theorems`` and the ``num_…`` counts of a repository, where given, are
    non-negative integers (a negative or fractional count is a corrupted file)."""
    for key, value in r.items():
        if key != "total_theorems" and not key.startswith("num_"):
            continue
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise DataError(
                path,
                f"expected a count (an integer >= 0), got {type(value).__name__} {str(value)[:40]}",
                field=f"repositories[{i}].{key}",
                hint=f"'{key}' counts items of the repository, e.g. 12",
            )


_STATUS = {
    "proven_theorems": "proven",
    "sorry_theorems_proved": "sorry_proved",
    "sorry_theorems_unproved": "sorry_unproved",
}


def read_source(path: str | Path, *, records: bool = False) -> Iterator[SourceItem]:
    """The items of whatever source ``path`` is (see the module docstring).

    ``records=True``: theorems of split files and lines of ``corpus.jsonl`` that have the
    plain shape come as :class:`~leantrain.export.typed_records.TheoremRecord` and
    :class:`~leantrain.export.typed_records.CorpusRecord` objects, already type-checked (what
    the importer asks for: faster); the others, and everything by default, as dicts.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(
            path,
            "no such file or directory",
            hint="check the path to the export directory or dynamic_database.json",
        )
    if path.is_file():
        from leantrain.export.whole_proofs import is_whole_proof_file, read_whole_proof_file

        if is_whole_proof_file(path):
            return read_whole_proof_file(path)
        if path.suffix != ".json":
            raise DataError(
                path,
                "not a recognised source",
                hint="pass an export directory, a dynamic_database.json, a proofs.json, or "
                "whole-proof rows (.jsonl, .parquet, .json with formal_statement)",
            )
        if _first_char(path) == "[":  # a bare split file of theorems
            return (
                SourceItem("theorem", obj, path=path, index=i)
                for i, obj in iter_json_array(
                    path, what="theorems", allow_empty=False, decode_piece=_theorem_decoder(records)
                )
            )
        return read_dynamic_database(path)
    return read_export_dir(path, records=records)


def _first_char(path: Path) -> str:
    with path.open(encoding="utf-8", errors="replace") as f:
        while chunk := f.read(4096):
            stripped = chunk.lstrip(" \t\r\n\ufeff")
            if stripped:
                return stripped[0]
    return ""
