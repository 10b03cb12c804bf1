"""Trace a Lean repository with LeanDojo and import it (needs ``lean-dojo`` and a toolchain).

``lean_dojo`` is imported only inside :func:`trace_repository`; without the package (optional
extra ``leantrain-export[trace]``) or without a Lean toolchain (``elan``/``lake`` on PATH) the
call fails with a :class:`~leantrain.core.errors.MissingDependencyError` that says what to
install. Nothing here runs at import time.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from leantrain.core.atomic import atomic_directory
from leantrain.core.errors import MissingDependencyError, require_package

if TYPE_CHECKING:
    from leantrain.export.database import Database


def check_trace_requirements() -> None:
    """Raise :class:`MissingDependencyError` unless lean-dojo and a Lean toolchain are installed."""
    require_package(
        "lean_dojo", extra="trace", dist="leantrain-export", feature="tracing a Lean repository"
    )
    if shutil.which("lake") is None and shutil.which("elan") is None:
        raise MissingDependencyError(
            "tracing a Lean repository needs a Lean 4 toolchain ('lake'/'elan' not found on PATH)",
            hint="install elan: curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf | sh",
        )


def _pos(p: Any) -> list[int]:
    return [int(p.line_nb), int(p.column_nb)]


def write_traced_repo(traced_repo: Any, url: str, commit: str, out_dir: Path) -> Path:
    """Write a ``lean_dojo`` ``TracedRepo`` as a single-repository export directory."""
    import lean_dojo  # noqa: F401  (only reached when tracing)

    theorems = []
    for tf in traced_repo.traced_files:
        for thm in tf.get_traced_theorems():
            if not thm.has_tactic_proof():
                continue
            tactics = [
                {
                    "tactic": t.tactic,
                    "annotated_tactic": [t.get_annotated_tactic()[0], t.get_annotated_tactic()[1]],
                    "state_before": t.state_before,
                    "state_after": t.state_after,
                }
                for t in thm.get_traced_tactics()
            ]
            theorems.append(
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
    with atomic_directory(out_dir) as tmp:
        (tmp / "random").mkdir()
        (tmp / "random" / "train.json").write_text(
            json.dumps(theorems, ensure_ascii=False), encoding="utf-8"
        )
        with (tmp / "corpus.jsonl").open("w", encoding="utf-8") as f:
            for premise_file in (
                traced_repo.get_traced_repo_corpus()
                if hasattr(traced_repo, "get_traced_repo_corpus")
                else []
            ):
                f.write(json.dumps(premise_file, ensure_ascii=False) + "\n")
        with (tmp / "traced_files.jsonl").open("w", encoding="utf-8") as f:
            for tf in traced_repo.traced_files:
                f.write(json.dumps({"traced_file_path": str(tf.path)}) + "\n")
        meta = {
            "creation_time": dt.datetime.now(dt.UTC).isoformat(),
            "from_repo": {"url": url, "commit": commit},
            "leandojo_version": getattr(__import__("lean_dojo"), "__version__", ""),
        }
        (tmp / "metadata.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return out_dir


def trace_repository(
    url: str,
    commit: str,
    out_dir: str | Path,
    *,
    database: Database | None = None,
    build_deps: bool = False,
) -> Path:
    """Trace ``url`` at ``commit`` with ``lean_dojo.trace``, write an export dir to ``out_dir``
    and, when ``database`` is given, import it. Returns ``out_dir``."""
    check_trace_requirements()
    from lean_dojo import LeanGitRepo, trace

    traced = trace(LeanGitRepo(url, commit), build_deps=build_deps)
    out = write_traced_repo(traced, url, commit, Path(out_dir))
    if database is not None:
        database.import_path(out)
    return out
