"""Trace a Lean repository with LeanDojo and import it (needs ``lean-dojo`` and a toolchain).

``lean_dojo`` is imported only inside :func:`trace_repository`; without the package (optional
extra ``leantrain-export[trace]``) or without a Lean toolchain (``elan``/``lake`` on PATH) the
call fails with a :class:`~leantrain.core.errors.MissingDependencyError` that says what to
install, before anything else happens. Nothing here runs at import time.

:func:`write_traced_repo` turns lean_dojo's ``TracedRepo`` (``traced_files``,
``traced_files_graph``, ``get_traced_theorems()``, ``TracedFile.get_premise_definitions()``)
into a LeanDojo export directory, the way LeanDojo's own benchmark script does::

    <out_dir>/
      metadata.json                 {"creation_time", "from_repo": {url, commit}, "leandojo_version"}
      random/{train,val,test}.json  the repository's theorems with traced tactics
      novel_premises/{train,val,test}.json
      corpus.jsonl                  {"path", "imports", "premises": [{full_name, code, start, end,
                                    kind}]} per traced file, imported files first
      traced_files.jsonl            {"traced_file_path"} per traced file
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from leantrain.core.atomic import atomic_directory
from leantrain.core.errors import LeanTrainError, MissingDependencyError
from leantrain.export.splits import (
    calibrate_rate,
    novel_split,
    premise_held_out,
    random_split,
    theorem_key,
)

if TYPE_CHECKING:
    from leantrain.export.database import Database

SPLITS = ("train", "val", "test")
_INSTALL_LEAN = (
    "install elan (curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh "
    "-sSf | sh)"
)
_INSTALL_DOJO = "pip install 'leantrain-export[trace]'"


def check_trace_requirements(what: str = "tracing a Lean repository") -> None:
    """Raise :class:`MissingDependencyError` unless lean-dojo and a Lean toolchain are installed.

    The message names both requirements and what is missing of them."""
    has_dojo = "lean_dojo" in sys.modules or importlib.util.find_spec("lean_dojo") is not None
    has_lean = shutil.which("lake") is not None or shutil.which("elan") is not None
    if has_dojo and has_lean:
        return
    missing = [
        *([] if has_dojo else ["the Python package lean-dojo"]),
        *([] if has_lean else ["a Lean 4 toolchain ('elan'/'lake' not on PATH)"]),
    ]
    fixes = [*([] if has_dojo else [_INSTALL_DOJO]), *([] if has_lean else [_INSTALL_LEAN])]
    raise MissingDependencyError(
        f"{what} needs Lean (elan) and leantrain-export[trace]: {' and '.join(missing)} "
        f"{'is' if len(missing) == 1 else 'are'} not installed",
        hint="; ".join(fixes) + ", or import an exported directory instead",
    )


def _pos(p: Any) -> list[int]:
    """A lean_dojo ``Pos`` (``line_nb``, ``column_nb``; iterable) as ``[line, column]``."""
    if hasattr(p, "line_nb"):
        return [int(p.line_nb), int(p.column_nb)]
    return [int(x) for x in p]


def _same_repo(a: Any, b: Any) -> bool:
    return (getattr(a, "url", None), getattr(a, "commit", None)) == (
        getattr(b, "url", None),
        getattr(b, "commit", None),
    )


def theorem_records(traced_repo: Any, url: str, commit: str) -> list[dict[str, Any]]:
    """The traced repository's own theorems with tactic proofs, in LeanDojo's split format
    (dependencies' theorems and Lean's own are left out; their premises are in the corpus)."""
    records = []
    for thm in traced_repo.get_traced_theorems():
        repo = getattr(thm, "repo", None)
        if getattr(repo, "is_lean4", False) or (
            repo is not None and not _same_repo(repo, traced_repo.repo)
        ):
            continue
        if not thm.has_tactic_proof():
            continue
        tactics = []
        for t in thm.get_traced_tactics():
            if t.state_before == "no goals" or "·" in t.tactic:  # as LeanDojo's benchmark
                continue
            annotated, provenances = t.get_annotated_tactic()
            tactics.append(
                {
                    "tactic": t.tactic,
                    "annotated_tactic": [annotated, list(provenances)],
                    "state_before": t.state_before,
                    "state_after": t.state_after,
                }
            )
        records.append(
            {
                "url": url,
                "commit": commit,
                "file_path": str(thm.theorem.file_path),
                "full_name": thm.theorem.full_name,
                "start": _pos(thm.start),
                "end": _pos(thm.end),
                "traced_tactics": tactics,
            }
        )
    return records


def _files_in_import_order(traced_repo: Any) -> list[tuple[Any, list[str]]]:
    """``(traced_file, imported paths)``, each file after the files it imports (as LeanDojo's
    ``reversed(topological_sort(traced_files_graph))``)."""
    graph = getattr(traced_repo, "traced_files_graph", None)
    if graph is None:  # traced with build_deps=False: the file's own import list
        return [
            (tf, [str(p) for _, p in tf.get_direct_dependencies(traced_repo.repo)])
            for tf in traced_repo.traced_files
        ]
    order: list[str] = []
    seen: set[str] = set()
    for root in sorted(graph.nodes):
        if root in seen:
            continue
        seen.add(root)
        stack: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph.successors(root))))]
        while stack:  # iterative post-order DFS: imports first
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                order.append(node)
            elif child not in seen:
                seen.add(child)
                stack.append((child, iter(sorted(graph.successors(child)))))
    return [(graph.nodes[n]["traced_file"], [str(s) for s in graph.successors(n)]) for n in order]


def corpus_records(traced_repo: Any) -> Iterator[dict[str, Any]]:
    """One ``corpus.jsonl`` record per traced file: its path, imports and premise definitions
    (``TracedFile.get_premise_definitions()``: full name, code, start, end, kind)."""
    for tf, imports in _files_in_import_order(traced_repo):
        premises = [
            {**p, "start": _pos(p["start"]), "end": _pos(p["end"])}
            for p in tf.get_premise_definitions()
        ]
        yield {"path": str(tf.path), "imports": imports, "premises": premises}


def _premise_names(theorem: dict[str, Any]) -> set[str]:
    return {
        prov["full_name"]
        for t in theorem["traced_tactics"]
        for prov in t["annotated_tactic"][1]
        if isinstance(prov, dict) and prov.get("full_name")
    }


def split_theorems(
    theorems: list[dict[str, Any]], *, seed: int = 3407, val: float = 0.2, test: float = 0.2
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """``{"random": {split: theorems}, "novel_premises": {…}}`` with the same hashes as
    leantrain's merged export (:mod:`leantrain.export.splits`)."""
    names = [_premise_names(t) for t in theorems]
    hist: Counter[int] = Counter()
    for thm, used in zip(theorems, names, strict=True):
        hist[len(used)] += sum(1 for t in thm["traced_tactics"] if t["annotated_tactic"][1])
    rate = calibrate_rate(val + test, dict(hist), sum(hist.values()))
    out: dict[str, dict[str, list[dict[str, Any]]]] = {
        strategy: {s: [] for s in SPLITS} for strategy in ("random", "novel_premises")
    }
    for thm, used in zip(theorems, names, strict=True):
        key = theorem_key(thm["file_path"], thm["full_name"], thm["start"], thm["end"])
        out["random"][random_split(seed, key, val, test)].append(thm)
        held = any(premise_held_out(seed, n, rate) for n in used)
        out["novel_premises"][novel_split(seed, key, held, val, test)].append(thm)
    return out


def write_traced_repo(traced_repo: Any, url: str, commit: str, out_dir: str | Path) -> Path:
    """Write a ``lean_dojo`` ``TracedRepo`` as a single-repository export directory (atomic)."""
    out_dir = Path(out_dir)
    theorems = theorem_records(traced_repo, url, commit)
    dojo = sys.modules.get("lean_dojo")
    with atomic_directory(out_dir) as tmp:
        for strategy, splits in split_theorems(theorems).items():
            (tmp / strategy).mkdir()
            for split, rows in splits.items():
                (tmp / strategy / f"{split}.json").write_text(
                    json.dumps(rows, ensure_ascii=False), encoding="utf-8"
                )
        with (tmp / "corpus.jsonl").open("w", encoding="utf-8") as f:
            for record in corpus_records(traced_repo):
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
        with (tmp / "traced_files.jsonl").open("w", encoding="utf-8") as f:
            for tf in traced_repo.traced_files:
                f.write(json.dumps({"traced_file_path": str(tf.path)}) + "\n")
        meta = {
            "creation_time": dt.datetime.now(dt.UTC).isoformat(),
            "from_repo": {"url": url, "commit": commit},
            "leandojo_version": str(getattr(dojo, "__version__", "")),
        }
        (tmp / "metadata.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return out_dir


def trace_repository(
    url: str,
    commit: str,
    out_dir: str | Path,
    *,
    database: Database | None = None,
    build_deps: bool = True,
) -> Path:
    """Trace ``url`` at ``commit`` with ``lean_dojo.trace``, write an export dir to ``out_dir``
    and, when ``database`` is given, import it. Returns ``out_dir``."""
    check_trace_requirements(f"tracing {url}@{commit}")
    from lean_dojo import LeanGitRepo, trace

    try:
        traced = trace(LeanGitRepo(url, commit), build_deps=build_deps)
    except Exception as e:  # git, network, lake build: LeanDojo's own errors
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise LeanTrainError(
            f"tracing {url}@{commit} failed: {type(e).__name__}: {first}",
            hint="check the URL and commit (a full SHA or tag) and that 'lake build' works there",
        ) from e
    out = write_traced_repo(traced, url, commit, out_dir)
    if database is not None:
        database.import_path(out)
    return out
