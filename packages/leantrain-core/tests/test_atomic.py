"""Atomic writes: a failure leaves the previous version whole and no temp files behind."""

from __future__ import annotations

import json
import os

import pytest
from leantrain.core import (
    atomic_directory,
    atomic_write_json,
    atomic_write_jsonl,
    atomic_write_text,
)


def test_writes_and_overwrites(tmp_path):
    p = tmp_path / "sub" / "f.json"
    atomic_write_json(p, {"a": "ℕ"})
    assert json.loads(p.read_text(encoding="utf-8")) == {"a": "ℕ"} and "ℕ" in p.read_text(
        encoding="utf-8"
    )
    atomic_write_text(p, "new")
    assert p.read_text() == "new"
    atomic_write_jsonl(tmp_path / "r.jsonl", ({"i": i} for i in range(3)))
    assert [json.loads(x)["i"] for x in (tmp_path / "r.jsonl").read_text().splitlines()] == [
        0,
        1,
        2,
    ]
    assert sorted(os.listdir(tmp_path)) == ["r.jsonl", "sub"]


def test_failure_mid_write_keeps_old_file(tmp_path):
    p = tmp_path / "rows.jsonl"
    atomic_write_jsonl(p, [{"old": 1}])

    def rows():
        yield {"new": 1}
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        atomic_write_jsonl(p, rows())
    assert p.read_text() == '{"old": 1}\n'
    assert os.listdir(tmp_path) == ["rows.jsonl"]
    with pytest.raises(TypeError):
        atomic_write_json(p, {"x": object()})
    assert p.read_text() == '{"old": 1}\n' and os.listdir(tmp_path) == ["rows.jsonl"]


def test_atomic_directory_swaps_or_keeps_old(tmp_path):
    target = tmp_path / "export"
    with atomic_directory(target) as d:
        (d / "a.txt").write_text("v1")
        assert not target.exists()  # nothing visible until the block ends
    assert (target / "a.txt").read_text() == "v1"
    with pytest.raises(RuntimeError), atomic_directory(target) as d:
        (d / "a.txt").write_text("half")
        raise RuntimeError("boom")
    assert (target / "a.txt").read_text() == "v1"
    with atomic_directory(target) as d:
        (d / "b.txt").write_text("v2")
    assert sorted(os.listdir(target)) == ["b.txt"]
    assert os.listdir(tmp_path) == ["export"]


def test_atomic_directory_cleans_stale_temp_dirs(tmp_path):
    stale = tmp_path / ".export.tmp-dead"
    stale.mkdir()
    with atomic_directory(tmp_path / "export") as d:
        (d / "x").write_text("1")
    assert not stale.exists()
