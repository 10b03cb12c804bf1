"""Trust: never replace user files, never touch another application's database, one-line
errors for damaged databases, and concurrent importers that just work (issue 9)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from export_helpers import tactic, theorem, write_export
from leantrain.core.cli import main as leantrain_main
from leantrain.core.errors import ConfigError, DataError
from leantrain.core.output_dir import MARKER_NAME, output_kind
from leantrain.export import Database, export_merged_data
from leantrain.export.schema import APPLICATION_ID, SCHEMA_VERSION, TABLES

SUBCOMMANDS = {
    "import": ["SRC"],
    "list": [],
    "stats": [],
    "curriculum": [],
    "merge": ["--out", "OUT/merged"],
    "dump-json": ["--out", "OUT/dump.json"],
    "delete": ["u@c"],
}


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` with the hash of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _source(root: Path) -> Path:
    write_export(
        root,
        "https://e/u",
        "c",
        [theorem("https://e/u", "c", f"t{i}", [tactic("simp [foo]", ["foo"])]) for i in range(6)],
    )
    return root


def _db(path: Path, src: Path) -> Path:
    with Database(path) as db:
        db.import_path(src)
    return path


def _cli(capsys, *argv: str) -> tuple[int, str]:
    code = leantrain_main(["export", *argv])
    err = capsys.readouterr().err
    return code, err


def _one_line_error(err: str, *needles: str) -> None:
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for n in needles:
        assert n in err, err


# -- output paths ----------------------------------------------------------------------------


def test_merge_into_the_current_directory_is_refused_and_nothing_is_touched(
    tmp_path, monkeypatch, capsys
):
    """The issue's reproduction: keep.txt and lt.db survive ``merge --out .``."""
    work = tmp_path / "t"
    work.mkdir()
    monkeypatch.chdir(work)
    (work / "keep.txt").write_text("mine\n")
    _db(work / "lt.db", _source(tmp_path / "src"))
    (work / "other").mkdir()
    (work / "other" / "notes.md").write_text("notes\n")
    before = _tree(work)
    for out in (".", "", "keep.txt", "lt.db", "other", str(work), "..", "/", "/proc/x"):
        code, err = _cli(capsys, "merge", "--db", "lt.db", "--out", out)
        assert code != 0, out
        _one_line_error(err, "--out")
        assert _tree(work) == before, out
    assert sorted(os.listdir(work)) == ["keep.txt", "lt.db", "other"]
    assert not list(tmp_path.glob(".*tmp-*"))


def test_merge_replaces_only_its_own_export_and_marks_it(tmp_path, capsys):
    db = str(_db(tmp_path / "lt.db", _source(tmp_path / "src")))
    out = tmp_path / "merged"
    for _ in range(2):  # a new directory, then leantrain's own earlier export
        code, err = _cli(capsys, "merge", "--db", db, "--out", str(out))
        assert code == 0, err
        assert output_kind(out) == "export"
    # without its marker (as development versions wrote it) the export is not recognised
    (out / MARKER_NAME).unlink()
    code, err = _cli(capsys, "merge", "--db", db, "--out", str(out))
    assert code == 2
    _one_line_error(err, "holds files leantrain did not write")
    # a LeanDojo export of someone else (metadata.json without "leantrain") is not ours
    theirs = _source(tmp_path / "theirs")
    before = _tree(theirs)
    code, err = _cli(capsys, "merge", "--db", db, "--out", str(theirs))
    assert code == 2
    _one_line_error(err, "holds files leantrain did not write")
    assert _tree(theirs) == before
    # the Python API refuses the same way, before anything is read or written
    with pytest.raises(ConfigError, match="did not write"):
        export_merged_data(db, None, theirs)
    with pytest.raises(ConfigError, match="is a file"):
        export_merged_data(db, None, tmp_path / "lt.db")
    with Database(db) as d, pytest.raises(ConfigError):
        d.export_merged_data(["https://e/u@c"], tmp_path)  # tmp_path holds lt.db
    assert _tree(theirs) == before


def test_dump_json_replaces_only_its_own_dump(tmp_path, capsys):
    db = str(_db(tmp_path / "lt.db", _source(tmp_path / "src")))
    dump = tmp_path / "dyn.json"
    for _ in range(2):
        code, err = _cli(capsys, "dump-json", "--db", db, "--out", str(dump))
        assert code == 0, err
    assert json.loads(dump.read_text())["written_by"] == "leantrain-export"
    # it imports back
    assert _cli(capsys, "import", str(dump), "--db", str(tmp_path / "back.db"))[0] == 0
    user = tmp_path / "mine.json"
    user.write_text('{"repositories": []}')  # valid JSON, but the user's
    legacy = tmp_path / "dev.json"  # as development versions dumped (no "written_by"): refused
    legacy.write_text('{"repositories": [\n]}\n')
    (tmp_path / "adir").mkdir()
    before = _tree(tmp_path)
    for out, msg in [
        (str(user), "not a dump leantrain wrote"),
        (str(legacy), "not a dump leantrain wrote"),
        (str(tmp_path / "lt.db"), "not a dump leantrain wrote"),
        (str(tmp_path / "adir"), "is a directory"),
        (".", "is a directory"),
        ("", "is empty"),
        ("/proc/self/x.json", "system directory"),
        (str(user / "x.json"), "is a file"),
    ]:
        code, err = _cli(capsys, "dump-json", "--db", db, "--out", out)
        assert code == 2, out
        _one_line_error(err, msg)
        assert _tree(tmp_path) == before, out


# -- databases that are not leantrain's --------------------------------------------------------


def _foreign_db(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users (name) VALUES ('ada')")
    conn.commit()
    conn.close()
    return path


def _bad_databases(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = _db(tmp_path / "good.db", _source(tmp_path / "src"))
    out: dict[str, tuple[Path, str]] = {
        "foreign": (_foreign_db(tmp_path / "foreign.db"), "another application's tables: users"),
    }
    p = tmp_path / "foreign_id.db"
    conn = sqlite3.connect(p)
    conn.execute("PRAGMA application_id = 1234")
    conn.execute("CREATE TABLE repositories (x)")
    conn.commit()
    conn.close()
    out["foreign_id"] = (p, "another application: application_id 0x4d2")
    p = tmp_path / "random.db"
    p.write_bytes(os.urandom(4096))
    out["random"] = (p, "not an SQLite file")
    p = tmp_path / "truncated.db"
    p.write_bytes(good.read_bytes()[: good.stat().st_size // 3])
    out["truncated"] = (p, "truncated")
    p = tmp_path / "missing_tables.db"
    shutil.copy(good, p)
    conn = sqlite3.connect(p)
    conn.execute("DROP TABLE traced_files")
    conn.execute("DROP VIEW premise_uses")
    conn.commit()
    conn.close()
    out["missing_tables"] = (p, "table(s) premise_uses, traced_files are missing")
    p = tmp_path / "malformed.db"
    data = bytearray(good.read_bytes())
    data[4096:-4096] = os.urandom(len(data) - 8192)
    p.write_bytes(bytes(data))
    out["malformed"] = (p, "damaged")
    p = tmp_path / "dir.db"
    p.mkdir()
    out["directory"] = (p, "is a directory")
    return out


@pytest.mark.slow
def test_every_subcommand_refuses_bad_databases_in_one_line_and_touches_nothing(tmp_path, capsys):
    src = _source(tmp_path / "src")
    (tmp_path / "OUT").mkdir()
    for name, (path, message) in _bad_databases(tmp_path).items():
        before = _tree(tmp_path)
        for cmd, extra in SUBCOMMANDS.items():
            argv = [a.replace("SRC", str(src)).replace("OUT", str(tmp_path / "OUT")) for a in extra]
            code, err = _cli(capsys, cmd, *argv, "--db", str(path))
            assert code == 1, (name, cmd, err)
            _one_line_error(err, str(path), message)
            assert _tree(tmp_path) == before, (name, cmd)
        assert not list((tmp_path / "OUT").iterdir())


def test_db_paths_that_cannot_be_a_database(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file.txt").write_text("x")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # reading it would hang: refused without opening it
    cases = [
        ("", "the database path is empty"),
        ("/dev/null", "not a regular file"),
        (str(fifo), "not a regular file"),
        ("/proc/leantrain.db", "system directory|no database here"),
        ("file.txt/lt.db", "cannot open or create|no database here"),
    ]
    for db, message in cases:
        for cmd in ("import", "stats"):
            argv = ["--sample"] if cmd == "import" else []
            code, err = _cli(capsys, cmd, *argv, "--db", db)
            assert code == 1, (db, cmd)
            _one_line_error(err)
            assert any(m in err for m in message.split("|")), err
    assert sorted(os.listdir(tmp_path)) == ["fifo", "file.txt"]


def test_foreign_database_stays_byte_identical_and_gets_no_tables(tmp_path):
    path = _foreign_db(tmp_path / "app.db")
    before = path.read_bytes()
    for create in (True, False):
        with pytest.raises(DataError, match="not a leantrain database"):
            Database(path, create=create)
    assert path.read_bytes() == before
    assert not Path(str(path) + "-wal").exists()
    conn = sqlite3.connect(path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"users"} and conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_new_and_empty_files_become_leantrain_databases(tmp_path, capsys):
    src = _source(tmp_path / "src")
    empty = tmp_path / "empty.db"
    empty.touch()
    tableless = tmp_path / "tableless.db"
    sqlite3.connect(tableless).execute("VACUUM")
    for path in (tmp_path / "new.db", empty, tableless):
        if path != tmp_path / "new.db":
            # reading commands do not make an empty file a database
            code, err = _cli(capsys, "stats", "--db", str(path))
            assert code == 1
            _one_line_error(err, "holds no leantrain data yet", "export import")
        assert _cli(capsys, "import", str(src), "--db", str(path))[0] == 0
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT COUNT(*) FROM theorems").fetchone()[0] == 6
        conn.close()


def _old_dev_database(path: Path, version: int, *, application_id: bool) -> Path:
    """A database as a development version (schema ``version`` < 5) left it: leantrain's
    tables, with ``application_id`` only from the versions that set it."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE repositories (id INTEGER PRIMARY KEY, url TEXT, commit_hash TEXT);"
        "CREATE TABLE theorems (id INTEGER PRIMARY KEY, repo_id INTEGER);"
        "CREATE TABLE tactics (id INTEGER PRIMARY KEY, theorem_id INTEGER);"
        "CREATE TABLE premise_files (id INTEGER PRIMARY KEY, path TEXT);"
        "CREATE TABLE traced_files (repo_id INTEGER, idx INTEGER, path TEXT);"
        "INSERT INTO repositories VALUES (1, 'https://e/old', 'c0');"
    )
    conn.execute(f"PRAGMA user_version = {version}")
    if application_id:
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.commit()
    conn.close()
    return path


def test_a_database_of_a_development_schema_is_refused_with_the_fix(tmp_path, capsys):
    """Schema versions 1–4 never shipped: no migration, one line saying to import again, and
    the file stays as it was (with or without the application id, which version 1 lacked)."""
    assert SCHEMA_VERSION == 5
    src = _source(tmp_path / "src")
    for version, app in ((1, False), (2, True), (4, True)):
        path = _old_dev_database(tmp_path / f"v{version}.db", version, application_id=app)
        before = path.read_bytes()
        with pytest.raises(DataError, match=f"schema version {version} was written by a dev"):
            Database(path)
        for cmd, extra in (("stats", []), ("merge", ["--out", str(tmp_path / "m")]),
                           ("import", [str(src)])):  # fmt: skip
            code, err = _cli(capsys, cmd, *extra, "--db", str(path))
            assert code == 1, (version, cmd)
            _one_line_error(err, str(path), "development version", "export import PATH --db new.db")
        assert path.read_bytes() == before
        assert not (tmp_path / "m").exists()
    # leantrain's table names in another application's file at version 5: not adopted
    other = _old_dev_database(tmp_path / "mixed.db", 5, application_id=False)
    with pytest.raises(DataError, match="another application's tables"):
        Database(other)


@pytest.mark.slow
def test_non_utf8_paths(tmp_path):
    """``--db`` and ``--out`` that are not valid UTF-8 work, and errors about them are one line."""
    if sys.platform == "darwin":
        pytest.skip("macOS file names must be UTF-8")
    base = os.fsencode(tmp_path)
    src = str(_source(tmp_path / "src")).encode()
    exe = [
        sys.executable,
        "-c",
        "import sys; from leantrain.core.cli import main; sys.exit(main())",
    ]
    env = {**os.environ, "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}

    def run(*args: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [*exe, b"export", *args], capture_output=True, env=env, cwd=tmp_path, timeout=120
        )

    db = base + b"/\xff.db"
    r = run(b"import", src, b"--db", db)
    assert r.returncode == 0, r.stderr
    r = run(b"merge", b"--db", db, b"--out", base + b"/o\xfe")
    assert r.returncode == 0, r.stderr
    assert os.path.isfile(base + b"/o\xfe/metadata.json")
    r = run(b"dump-json", b"--db", db, b"--out", base + b"/d\xfe.json")
    assert r.returncode == 0 and r.stdout.startswith(b"wrote "), r.stderr  # stdout is strict
    r = run(b"list", b"--db", base + b"/n\xfeope.db")
    assert r.returncode == 1 and r.stderr.count(b"\n") == 1 and b"Traceback" not in r.stderr


# -- concurrency -------------------------------------------------------------------------------

_IMPORTER = textwrap.dedent("""
    import sys, time
    from leantrain.core.cli import main
    start = float(sys.argv[1])
    while time.time() < start:  # all importers open the new database at the same moment
        time.sleep(0.001)
    sys.exit(main(["export", "import", "--sample", "--db", sys.argv[2]]))
""")


def _counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        counts = {
            t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in sorted(TABLES)
        }
        counts["tactics"] = conn.execute("SELECT SUM(num_tactics) FROM theorems").fetchone()[0]
        return counts
    finally:
        conn.close()


@pytest.mark.slow
def test_four_concurrent_importers_into_a_new_database(tmp_path):
    from leantrain.core.sample import sample_repo_dirs

    if not sample_repo_dirs():
        pytest.skip("leantrain-core ships no sample data")
    with Database(tmp_path / "once.db") as db:
        db.import_sample()
    once = _counts(tmp_path / "once.db")
    for attempt in range(2):  # a fresh database, then the same (existing) one again
        db_path = tmp_path / "c.db"
        start = time.time() + 3.0
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _IMPORTER, str(start), str(db_path)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]
        for p in procs:
            p.stdout.close()
            p.stderr.close()
        for code, out, err in results:
            assert code == 0, (attempt, err)
            assert err == "" and out.strip().endswith(
                f"{once['repositories']} repositories, {once['theorems']} theorems, "
                f"{once['tactics']} tactics"
            ), (out, err)
        # the same sample imported 4 times: each repository once, nothing lost or doubled
        assert _counts(db_path) == once
        with Database(db_path) as db:
            assert db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            ids = [r.id for r in db.list_repositories()]
            assert len(ids) == len(set(ids)) == once["repositories"]


def test_a_table_name_that_is_not_utf8_is_a_damaged_database(tmp_path):
    """Random damage can leave bytes in sqlite_master that do not decode (seen in the fuzzed
    test above, which overwrites a database with random bytes): a DataError, not a traceback."""
    p = tmp_path / "bad.db"
    conn = sqlite3.connect(p)
    conn.execute("CREATE TABLE tabXYZ (a)")
    conn.commit()
    conn.close()
    data = p.read_bytes()
    assert b"tabXYZ" in data
    p.write_bytes(data.replace(b"tabXYZ", b"tab\xf2\x28\xa1"))
    with pytest.raises(DataError, match="damaged"):
        Database(p)
