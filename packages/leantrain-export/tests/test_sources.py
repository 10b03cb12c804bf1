"""Import sources are read by core's one strict reader: one bad file per class is a DataError
naming the file (and record / field), the database is left unchanged, and the CLI prints one
line and exits non-zero."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from export_helpers import tactic, theorem, write_export
from leantrain.core import json_reader
from leantrain.core.errors import DataError
from leantrain.export import Database, iter_json_array

URL, COMMIT = "https://github.com/o/r", "c0ffee"


def test_the_reader_is_cores():
    assert iter_json_array is json_reader.iter_json_array


def _good() -> dict:
    return theorem(URL, COMMIT, "t", [tactic("exact foo", ["foo"])])


def _write(name: str, data: bytes) -> Callable[[Path], object]:
    return lambda root: (root / name).write_bytes(data)


def _meta(**from_repo) -> Callable[[Path], object]:
    meta = {"from_repo": {"url": URL, "commit": COMMIT, **from_repo}}
    return _write("metadata.json", json.dumps(meta).encode())


def _theorem(**change) -> Callable[[Path], object]:
    return _write("random/train.json", json.dumps([_good(), {**_good(), **change}]).encode())


TRAIN = "random/train.json"
CORPUS = "corpus.jsonl"
# (case, the file it breaks, how, the message): one hand-made bad file per class.
CASES = [
    ("binary_split", TRAIN, _write(TRAIN, bytes(range(256)) * 8), "binary"),
    ("non_utf8_split", TRAIN, _write(TRAIN, b'[{"url": "caf\xe9"}]'), "not UTF-8"),
    ("utf16_split", TRAIN, _write(TRAIN, json.dumps([_good()]).encode("utf-16")), "UTF-16"),
    ("utf16_no_bom", TRAIN, _write(TRAIN, json.dumps([_good()]).encode("utf-16-le")), "UTF-16"),
    ("deep_split", TRAIN, _write(TRAIN, b"[" * 100_000 + b"]" * 100_000), "nested too deeply"),
    (
        "trailing_garbage",
        TRAIN,
        _write(TRAIN, json.dumps([_good()]).encode() + b"\n}garbage"),
        "unexpected data after the end of the JSON array",
    ),
    (
        "two_arrays",
        TRAIN,
        _write(TRAIN, json.dumps([_good()]).encode() * 2),
        "unexpected data after the end of the JSON array",
    ),
    ("empty_split_file", TRAIN, _write(TRAIN, b""), "the file is empty"),
    ("huge_start", TRAIN, _theorem(start=[10**30, 1]), "less than or equal to"),
    ("negative_start", TRAIN, _theorem(start=[-4, 1]), "greater than or equal to 0"),
    ("reversed", TRAIN, _theorem(start=[9, 1], end=[3, 1]), "end .* is before start"),
    ("binary_corpus", CORPUS, _write(CORPUS, b"\x00\x01\x02" * 100), "binary"),
    ("non_utf8_corpus", CORPUS, _write(CORPUS, b'{"path": "\xff"}\n'), "not UTF-8"),
    (
        "utf16_corpus",
        CORPUS,
        _write(CORPUS, b'{"path": "A.lean"}\n'.decode().encode("utf-16")),
        "UTF-16",
    ),
    (
        "deep_corpus",
        CORPUS,
        _write(CORPUS, b"[" * 100_000 + b"]" * 100_000 + b"\n"),
        "nested too deeply",
    ),
    (
        "reversed_premise",
        CORPUS,
        _write(
            CORPUS,
            json.dumps(
                {"path": "A.lean", "premises": [{"full_name": "p", "start": [5, 0], "end": [1, 0]}]}
            ).encode(),
        ),
        "is before start",
    ),
    (
        "metadata_url_int",
        "metadata.json",
        _meta(url=5),
        "from_repo.url.*expected a non-empty string, got int",
    ),
    ("metadata_commit_list", "metadata.json", _meta(commit=[1]), "from_repo.commit"),
    (
        "metadata_utf16",
        "metadata.json",
        _write("metadata.json", b'{"a": 1}'.decode().encode("utf-16")),
        "UTF-16",
    ),
    (
        "metadata_repositories_url",
        "metadata.json",
        _write("metadata.json", json.dumps({"repositories": [{"url": 5, "commit": "c"}]}).encode()),
        r"repositories\[0\].url",
    ),
    (
        "metadata_repositories_not_list",
        "metadata.json",
        _write("metadata.json", json.dumps({"repositories": {"url": URL}}).encode()),
        "expected a list of repositories",
    ),
    (
        "metadata_without_repository",
        "metadata.json",
        _write("metadata.json", json.dumps({"theorems": {"creation_time": "x"}}).encode()),
        "neither 'from_repo' nor 'repositories'",
    ),
    ("corpus_empty", CORPUS, _write(CORPUS, b""), "the file is empty: no Lean files"),
    ("corpus_blank", CORPUS, _write(CORPUS, b"  \n\t\n"), "the file is empty: no Lean files"),
    ("start_bool", TRAIN, _theorem(start=[True, 1]), r"start\[0\].*valid integer"),
]


@pytest.mark.parametrize(("case", "file", "mutate", "message"), CASES, ids=[c[0] for c in CASES])
def test_bad_files_are_data_errors_naming_the_file(tmp_path, case, file, mutate, message):
    root = tmp_path / "src"
    write_export(root, URL, COMMIT, [_good()])
    mutate(root)
    db = Database(tmp_path / "lt.db")
    with pytest.raises(DataError, match=message) as e:
        db.import_path(root)
    assert str(root / file) in str(e.value)
    assert db.stats()["repositories"] == 0


def test_empty_splits_and_empty_dynamic_database_say_so(tmp_path):
    root = tmp_path / "src"
    write_export(root, URL, COMMIT, [])
    db = Database(tmp_path / "lt.db")
    with pytest.raises(DataError, match="no theorems") as e:
        db.import_path(root)
    assert str(root) in str(e.value)
    bare = tmp_path / "test.json"
    bare.write_text("[]")
    with pytest.raises(DataError, match="no theorems: the file holds an empty array"):
        db.import_path(bare)
    dyn = tmp_path / "dynamic_database.json"
    dyn.write_text('{"repositories": []}')
    with pytest.raises(DataError, match="no repositories"):
        db.import_path(dyn)


@pytest.mark.parametrize(
    ("repo", "field"),
    [
        ({"url": 5, "commit": "c"}, "repositories[0].url"),
        ({"url": URL, "commit": "c", "name": 7}, "repositories[0].name"),
        ({"url": URL, "commit": "c", "metadata": [1]}, "repositories[0].metadata"),
        ({"url": URL, "commit": "c", "proven_theorems": "x"}, "repositories[0].proven_theorems"),
        ({"url": URL, "commit": "c", "files_traced": [1]}, "repositories[0].files_traced"),
        ("a string", "repositories[0]"),
        ({"url": URL, "commit": "c", "total_theorems": -5}, "repositories[0].total_theorems"),
        ({"url": URL, "commit": "c", "num_premises": 1.5}, "repositories[0].num_premises"),
        ({"url": URL, "commit": "c", "num_premises": True}, "repositories[0].num_premises"),
    ],
)
def test_bad_dynamic_database_repositories(tmp_path, repo, field):
    dyn = tmp_path / "dynamic_database.json"
    dyn.write_text(json.dumps({"repositories": [repo]}))
    with pytest.raises(DataError) as e:
        Database(tmp_path / "lt.db").import_path(dyn)
    assert e.value.field == field and str(dyn) in str(e.value)


def _leantrain(*args: str) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "leantrain"
    return subprocess.run([str(script), *args], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["utf16_split", "metadata_url_int", "reversed"])
def test_cli_import_prints_one_line_and_fails(tmp_path, case):
    _, file, mutate, _ = next(c for c in CASES if c[0] == case)
    root = tmp_path / "src"
    write_export(root, URL, COMMIT, [_good()])
    mutate(root)
    out = _leantrain("export", "import", str(root), "--db", str(tmp_path / "lt.db"))
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "Traceback" not in out.stderr and str(root / file) in lines[0]
