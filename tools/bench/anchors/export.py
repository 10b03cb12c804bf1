"""Merged export of 32k synthetic theorems: leantrain (import + export) vs LeanDojo-v2 (split +
export).

Inputs (both sides): three synthetic LeanDojo-v2 repositories of ``EXPORT_THEOREMS`` theorems
in all (default 32,000; ``leantrain_tools.synthetic``, seed 0; repository *k* depends on *k-1*,
so corpus files recur), written once as export directories and, for LeanDojo-v2, as the
``dynamic_database.json`` its ``DynamicDatabase`` loads (written by ``leantrain export
dump-json`` from the same data; positions as lists, which LeanDojo-v2 reads).

* ours — timed: importing the three export directories into a new database **and**
  ``export_merged_data`` of all of them (both split strategies, corpus, traced files).
* ld2 — untimed: ``DynamicDatabase.from_json`` (the repositories in memory); timed:
  ``export_merged_data(db.repositories, out)`` (its split + export; it has no import step).

Items: theorems exported. ``run_ours(n)`` / ``run_leandojo(n, venv_python)`` run one side on
``n`` theorems outside the driver (for ``tools/bench/export.py`` and ad-hoc use).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__:
    from . import Benchmark

EXPORT_THEOREMS = int(os.environ.get("LEANTRAIN_BENCH_EXPORT_THEOREMS", "32000"))


def prepare(work: Path, args: Any, n: int = EXPORT_THEOREMS) -> dict[str, Any]:
    from leantrain.export import Database
    from leantrain_tools.synthetic import generate_synthetic

    dirs = generate_synthetic(work / "synth", n, n_repos=3, seed=0)
    dump = work / "dynamic_database.json"
    with Database(work / "dump.db") as db:
        for d in dirs:
            db.import_path(d)
        db.dump_json(dump)
    (work / "dump.db").unlink()
    return {"dirs": [str(d) for d in dirs], "dump": str(dump), "out": str(work / "out"), "n": n}


def ours(inputs: dict[str, Any], timer: Any) -> int:
    from leantrain.export import Database, export_merged_data

    out = Path(inputs["out"] + "-ours")
    db_path = out.parent / "ours.db"
    shutil.rmtree(out, ignore_errors=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    with timer, Database(db_path) as db:
        for d in inputs["dirs"]:
            db.import_path(d)
        n = export_merged_data(db, None, out).num_theorems
    return n


def ld2(inputs: dict[str, Any], timer: Any) -> int:
    import _ld2_patches

    _ld2_patches.apply()
    from lean_dojo_v2.database.dynamic_database import DynamicDatabase
    from loguru import logger

    logger.remove()  # its per-step log lines are not part of the work
    out = Path(inputs["out"] + "-ld2")
    shutil.rmtree(out, ignore_errors=True)
    cwd = out.parent / "ld2-cwd"  # DynamicDatabase() writes dynamic_database.json here
    cwd.mkdir(exist_ok=True)
    os.chdir(cwd)
    db = DynamicDatabase.from_json(inputs["dump"])
    with timer:
        db.export_merged_data(db.repositories, out)
    return sum(len(json.loads((out / "random" / f"{s}.json").read_text())) for s in SPLITS)


SPLITS = ("train", "val", "test")


def _run(py: str, side: str, inputs: dict[str, Any], work: Path) -> dict[str, Any]:
    path = work / f"inputs-{side}.json"
    path.write_text(json.dumps(inputs), encoding="utf-8")
    env = dict(os.environ)
    if side == "ld2":
        env.pop("VIRTUAL_ENV", None)
        env["PYTHONPATH"] = ""
    proc = subprocess.run(
        [py, __file__, "--side", side, "--inputs", str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    line = next(x for x in proc.stdout.splitlines() if x.startswith("ANCHOR-RESULT "))
    return json.loads(line.removeprefix("ANCHOR-RESULT "))


def run_ours(n: int, work: Path | None = None) -> dict[str, Any]:
    """One timed run of our side on ``n`` synthetic theorems, in a fresh process:
    ``{"items", "wall_s", "cpu_s"}``."""
    return _with_inputs(n, work, lambda inputs, w: _run(sys.executable, "ours", inputs, w))


def run_leandojo(n: int, venv_python: str | Path, work: Path | None = None) -> dict[str, Any]:
    """One timed run of LeanDojo-v2's side on ``n`` synthetic theorems under
    ``venv_python`` (its throwaway venv), in a fresh process."""
    return _with_inputs(n, work, lambda inputs, w: _run(str(venv_python), "ld2", inputs, w))


def _with_inputs(n: int, work: Path | None, fn: Any) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="leantrain-anchor-export-")) if work is None else work
    try:
        return fn(prepare(tmp, None, n), tmp)
    finally:
        if work is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __package__:
    BENCH = Benchmark(
        name="export",
        title=f"export, {EXPORT_THEOREMS // 1000}k synthetic theorems "
        "(ours: import + full export; theirs: split + export)",
        unit="theorems/s",
        prepare=prepare,
        script=Path(__file__),
        order=10,
        target=100.0,
    )

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    from _side import main

    main({"ours": ours, "ld2": ld2})
    sys.exit(0)
