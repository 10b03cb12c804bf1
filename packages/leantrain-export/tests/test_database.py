"""Database: import formats, round trip, CRUD, schema, atomic imports."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from export_helpers import key, load_split_dir, tactic, theorem, write_export
from leantrain.core.errors import DataError, MissingDependencyError
from leantrain.export import (
    Database,
    RepoInfo,
    export_merged_data,
    trace_repository,
)
from leantrain.export import importer as importer_mod
from leantrain.export.schema import SCHEMA_VERSION


def _original_union(root: Path) -> dict[tuple, dict]:
    out = {}
    for s in ("train", "val", "test"):
        for t in json.loads((root / "random" / f"{s}.json").read_text(encoding="utf-8")):
            out[key(t)] = t
    return out


def test_round_trip_lean4_example_keeps_every_theorem_tactic_and_annotation(
    tmp_path, lean4_example
):
    db = Database(tmp_path / "lt.db")
    ids = db.import_path(lean4_example)
    assert len(ids) == 1 and ids[0].endswith("@005de00d03f1aaa32cb2923d5e3cbaf0b954a192")
    result = export_merged_data(db, ids, tmp_path / "out")
    original = _original_union(lean4_example)
    assert len(original) == 20 and result.num_theorems == 20 and result.num_tactics == 40
    for strategy in ("random", "novel_premises"):
        exported = {
            key(t): t
            for split in load_split_dir(tmp_path / "out", strategy).values()
            for t in split
        }
        assert exported.keys() == original.keys()
        for k, t in original.items():
            assert exported[k] == t  # url, commit, statement, tactics, annotations: all unchanged
    n_ann = sum(
        len(tt["annotated_tactic"][1]) for t in original.values() for tt in t["traced_tactics"]
    )
    assert n_ann == 26
    # no corpus.jsonl in the source: the corpus holds exactly the annotated premises
    corpus = [
        json.loads(line) for line in (tmp_path / "out" / "corpus.jsonl").read_text().splitlines()
    ]
    names = {p["full_name"] for f in corpus for p in f["premises"]}
    annotated = {
        a["full_name"]
        for t in original.values()
        for tt in t["traced_tactics"]
        for a in tt["annotated_tactic"][1]
    }
    assert names == annotated and len(names) == 8
    traced = (tmp_path / "out" / "traced_files.jsonl").read_text().splitlines()
    assert traced == (lean4_example / "traced_files.jsonl").read_text().splitlines()
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["repositories"][0]["lean_dojo_version"] == "4.20.0"
    assert meta["total_theorems"] == 20


def test_benchmark_dir_without_metadata_takes_repo_from_theorems(tmp_path, benchmark_head):
    with Database(tmp_path / "lt.db") as db:
        ids = db.import_path(benchmark_head)
        assert ids == [
            "https://github.com/leanprover-community/mathlib4@29dcec074de168ac2bf835a77ef68bbe069194c5"
        ]
        repo = db.get_repository(ids[0])
        assert repo.name == "leanprover-community/mathlib4"
        assert (repo.num_theorems, repo.num_tactics) == (762, 1751)
        assert db.stats()["distinct_annotated_premises"] == 1576


def test_dynamic_database_json_round_trip(tmp_path, lean4_example):
    a = Database(tmp_path / "a.db")
    a.import_path(lean4_example)
    write_export(
        tmp_path / "r2",
        "https://github.com/o/r2",
        "c2",
        [theorem("https://github.com/o/r2", "c2", "t1", [tactic("exact foo", ["foo"])])],
    )
    a.import_path(tmp_path / "r2")
    a.update_repository("https://github.com/o/r2@c2", lean_version="v4.9.0", metadata={"stars": 3})
    a.dump_json(tmp_path / "dyn.json")
    dyn = json.loads((tmp_path / "dyn.json").read_text())
    assert {r["name"] for r in dyn["repositories"]} == {"lean4-example_d", "o/r2"}
    assert (
        sum(
            len(r["proven_theorems"]) + len(r["sorry_theorems_unproved"])
            for r in dyn["repositories"]
        )
        == 21
    )
    b = Database(tmp_path / "b.db")
    assert b.import_path(tmp_path / "dyn.json") == [r.id for r in a.list_repositories()]
    sa, sb = a.stats(), b.stats()
    assert sa == sb
    ra, rb = a.get_repository("o/r2"), b.get_repository("o/r2")
    assert (rb.lean_version, rb.metadata, rb.date_processed) == (
        ra.lean_version,
        ra.metadata,
        ra.date_processed,
    )
    export_merged_data(a, None, tmp_path / "ea")
    export_merged_data(b, None, tmp_path / "eb")
    for strategy in ("random", "novel_premises"):
        ea, eb = (
            load_split_dir(tmp_path / "ea", strategy),
            load_split_dir(tmp_path / "eb", strategy),
        )
        for split in (
            "train",
            "val",
            "test",
        ):  # same theorems in the same splits (file order may differ)
            assert sorted(ea[split], key=key) == sorted(eb[split], key=key)


def test_leanagent_position_strings_are_read(tmp_path):
    thm = theorem("u", "c", "t", [tactic("simp [foo]", ["foo"])])
    thm["start"], thm["end"] = "Pos(3, 1)", "(5, 7)"
    ann = thm["traced_tactics"][0]["annotated_tactic"][1][0]
    ann["def_pos"], ann["def_end_pos"] = "Pos(1, 1)", "Pos(1, 9)"
    dyn = {
        "repositories": [
            {
                "url": "u",
                "name": "n",
                "commit": "c",
                "lean_version": "v4",
                "lean_dojo_version": "4.20.0",
                "metadata": {"date_processed": "2024-05-01T10:00:00"},
                "proven_theorems": [thm],
                "premise_files": [
                    {
                        "path": "Lib/Defs.lean",
                        "imports": [],
                        "premises": [
                            {
                                "full_name": "foo",
                                "code": "theorem foo : p",
                                "start": "Pos(1, 1)",
                                "end": "Pos(1, 9)",
                                "kind": "theorem",
                            }
                        ],
                    }
                ],
                "files_traced": ["Lib/Main.lean"],
            }
        ]
    }
    (tmp_path / "dyn.json").write_text(json.dumps(dyn))
    db = Database(tmp_path / "lt.db")
    assert db.import_path(tmp_path / "dyn.json") == ["u@c"]
    r = export_merged_data(db, ["u@c"], tmp_path / "out", val_fraction=0.0, test_fraction=0.0)
    t = load_split_dir(tmp_path / "out", "random")["train"][0]
    assert (t["start"], t["end"]) == ([3, 1], [5, 7])
    assert t["traced_tactics"][0]["annotated_tactic"][1][0]["def_pos"] == [1, 1]
    assert r.num_premises == 1


def test_repository_crud_and_stats(tmp_path):
    db = Database(tmp_path / "lt.db")
    repo = db.add_repository(
        RepoInfo(url="https://github.com/a/b", commit="abc", lean_version="v4.8.0")
    )
    assert repo.id == "https://github.com/a/b@abc" and repo.num_theorems == 0
    with pytest.raises(DataError, match="already exists"):
        db.add_repository(RepoInfo(url="https://github.com/a/b", commit="abc"))
    assert db.get_repository("https://github.com/a/b").commit == "abc"  # unique url works too
    updated = db.update_repository(repo.id, name="b-lib", date_processed="2024-02-03T04:05:06")
    assert updated.name == "b-lib" and updated.date_processed.year == 2024
    with pytest.raises(DataError, match="cannot update"):
        db.update_repository(repo.id, url="x")
    write_export(
        tmp_path / "src",
        "https://github.com/a/b",
        "abc",
        [theorem("https://github.com/a/b", "abc", "t", [tactic("rfl")])],
    )
    db.import_path(tmp_path / "src")  # re-import replaces the record
    assert [r.num_theorems for r in db.list_repositories()] == [1]
    assert db.stats()["theorems"] == 1 and db.stats()["tactics"] == 1
    db.delete_repository(repo.id)
    assert (
        db.list_repositories() == []
        and db.stats()["tactics"] == 0
        and db.stats()["traced_files"] == 0
    )
    with pytest.raises(DataError, match="unknown repository"):
        db.delete_repository(repo.id)


def test_schema_is_versioned(tmp_path):
    Database(tmp_path / "lt.db").close()
    conn = sqlite3.connect(tmp_path / "lt.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(DataError, match="newer"):
        Database(tmp_path / "lt.db")
    (tmp_path / "junk.db").write_bytes(b"this is not sqlite at all, not even close" * 100)
    with pytest.raises(DataError, match="not a leantrain database"):
        Database(tmp_path / "junk.db")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda root: None, "no such file"),
        (
            lambda root: (root / "random" / "train.json").write_text('[{"url": "u",'),
            "malformed JSON",
        ),
        (
            lambda root: (root / "random" / "train.json").write_text('{"a": 1}'),
            "expected a JSON array",
        ),
        (lambda root: (root / "metadata.json").write_text("{not json"), "malformed JSON"),
    ],
)
def test_bad_sources_are_clear_errors(tmp_path, mutate, message):
    root = tmp_path / "src"
    if message != "no such file":
        write_export(root, "u", "c", [theorem("u", "c", "t", [tactic("rfl")])])
    mutate(root)
    db = Database(tmp_path / "lt.db")
    with pytest.raises(DataError, match=message) as e:
        db.import_path(root)
    assert str(root) in str(e.value)
    assert db.stats()["repositories"] == 0


def test_missing_field_names_file_record_and_field(tmp_path):
    good = theorem("u", "c", "good", [tactic("rfl")])
    bad = theorem("u", "c", "bad", [tactic("rfl")])
    del bad["traced_tactics"][0]["state_before"]
    write_export(tmp_path / "src", "u", "c", [good, bad])
    db = Database(tmp_path / "lt.db")
    with pytest.raises(DataError) as e:
        db.import_path(tmp_path / "src")
    msg = str(e.value)
    assert "train.json" in msg and "record 1" in msg and "traced_tactics[0].state_before" in msg
    assert db.stats()["theorems"] == 0  # the good record before it was rolled back too


def test_exception_mid_import_leaves_database_unchanged(tmp_path, synthetic_repos, monkeypatch):
    db = Database(tmp_path / "lt.db")
    first = db.import_path(synthetic_repos[0])
    before = db.stats()
    calls = {"n": 0}
    real_add = importer_mod.Importer.add

    def failing_add(self, item):
        calls["n"] += 1
        if calls["n"] == 120:
            raise RuntimeError("injected failure")
        return real_add(self, item)

    monkeypatch.setattr(
        importer_mod, "_THEOREM_BATCH", 10
    )  # so that rows were really written before the failure
    monkeypatch.setattr(importer_mod.Importer, "add", failing_add)
    with pytest.raises(RuntimeError, match="injected"):
        db.import_path(synthetic_repos[1])
    assert db.stats() == before
    assert [r.id for r in db.list_repositories()] == first
    # and re-importing an existing repository that fails half-way keeps the old copy whole
    calls["n"] = 0
    with pytest.raises(RuntimeError):
        db.import_path(synthetic_repos[0])
    assert db.stats() == before


@pytest.mark.slow
def test_killed_import_process_leaves_database_intact(tmp_path, synthetic_repos):
    db_path = tmp_path / "lt.db"
    with Database(db_path) as db:
        db.import_path(synthetic_repos[0])
        before = db.stats()
    script = textwrap.dedent(f"""
        import sys, time
        from leantrain.export import Database, importer, sources
        importer._THEOREM_BATCH = 50
        real_flush = importer.Importer.flush
        state = {{"flushes": 0}}
        def flush(self):
            real_flush(self)
            state["flushes"] += 1
            if state["flushes"] == 3:
                print("mid-import", flush=True)  # rows are in the database file's WAL now
                time.sleep(60)
        importer.Importer.flush = flush
        db = Database({str(db_path)!r})
        db.conn.execute("PRAGMA cache_size = 4")  # spill uncommitted pages to the file early
        db.import_path({str(synthetic_repos[1])!r})
        print("finished", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line == "mid-import"
        assert os.path.getsize(str(db_path) + "-wal") > 0
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    with Database(db_path) as db:
        assert db.stats() == before
        assert db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        db.import_path(synthetic_repos[1])  # and it is still writable
        assert db.stats()["repositories"] == 2


def test_trace_without_lean_dojo_says_what_to_install(tmp_path, monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'leantrain-export\[trace\]'"):
        trace_repository("https://github.com/a/b", "abc", tmp_path / "t")


def test_trace_without_toolchain_says_what_to_install(tmp_path, monkeypatch):
    import importlib.util
    import shutil

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: object() if name == "lean_dojo" else real(name, *a),
    )
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(MissingDependencyError, match="elan"):
        trace_repository("https://github.com/a/b", "abc", tmp_path / "t")
    assert not (tmp_path / "t").exists()


def test_cli_module_imports_nothing_heavy():
    code = "import sys, leantrain.export.cli; bad = [m for m in ('torch', 'transformers', 'trl', 'lean_dojo', 'leantrain.export.database') if m in sys.modules]; print(bad)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"


def test_commits_are_checkpointed_in_the_background(tmp_path, synthetic_repos):
    """COMMIT leaves the copy into the database file to a background checkpoint: the file
    alone (without its WAL) holds each committed import once that checkpoint is done."""
    db_path = tmp_path / "lt.db"

    def theorems_in_file_alone() -> int:
        copy = tmp_path / "copy.db"  # the database file without its -wal
        copy.write_bytes(db_path.read_bytes())
        conn = sqlite3.connect(copy)
        try:
            return conn.execute("SELECT COUNT(*) FROM theorems").fetchone()[0]
        finally:
            conn.close()
            copy.unlink()

    with Database(db_path) as db:
        assert db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        db.import_path(synthetic_repos[0])
        db._checkpoints.wait()
        first = db.stats()["theorems"]
        assert first > 0 and theorems_in_file_alone() == first
        db.import_path(synthetic_repos[1])
        db._checkpoints.wait()
        assert theorems_in_file_alone() == db.stats()["theorems"] > first
    with Database(db_path) as db:  # and the database reopens whole
        assert db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_import_and_export_pause_the_garbage_collector_and_restore_it(
    tmp_path, lean4_example, monkeypatch
):
    import gc

    from leantrain.export import database as database_mod
    from leantrain.export import export_merged as export_mod

    seen = []

    def spying(real):
        def spy(*args, **kwargs):
            seen.append((real.__name__, gc.isenabled()))
            return real(*args, **kwargs)

        return spy

    monkeypatch.setattr(database_mod, "import_items", spying(database_mod.import_items))
    monkeypatch.setattr(export_mod, "_export", spying(export_mod._export))
    with Database(tmp_path / "lt.db") as db:
        assert gc.isenabled()
        db.import_path(lean4_example)
        export_mod.export_merged_data(db, None, tmp_path / "out")
        assert seen == [("import_items", False), ("_export", False)]
        assert gc.isenabled()
        bad = tmp_path / "bad"
        (bad / "random").mkdir(parents=True)
        (bad / "random" / "train.json").write_text('[{"url": 1}]')
        with pytest.raises(DataError):
            db.import_path(bad)
        assert gc.isenabled()
        gc.disable()  # a caller that paused it itself gets it back paused
        try:
            db.import_path(lean4_example)
            assert not gc.isenabled()
        finally:
            gc.enable()
