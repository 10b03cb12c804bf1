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


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_written_files_and_dirs_get_the_modes_the_umask_gives(tmp_path, mask):
    """mkstemp/mkdtemp create 0600/0700: what lands must be what open()/mkdir() would give."""
    import os
    import stat

    from leantrain.core.atomic import (
        apply_umask_modes,
        atomic_directory,
        atomic_write_json,
        atomic_write_jsonl,
        current_umask,
    )

    old = os.umask(mask)
    try:
        assert current_umask() == mask
        f = atomic_write_json(tmp_path / "a.json", {"x": 1})
        g = atomic_write_jsonl(tmp_path / "b.jsonl", [{"x": 1}])
        with atomic_directory(tmp_path / "ckpt") as d:
            (d / "sub").mkdir()
            private = d / "sub" / "weights.bin"
            private.write_bytes(b"w")
            os.chmod(private, 0o600)  # as a library may write it
            apply_umask_modes(d)
        plain_file = tmp_path / "plain"
        plain_file.write_text("x")
        plain_dir = tmp_path / "plain-dir"
        plain_dir.mkdir()
    finally:
        os.umask(old)

    def mode(p):
        return stat.S_IMODE(p.stat().st_mode)

    assert mode(f) == mode(g) == mode(plain_file) == 0o666 & ~mask
    assert mode(tmp_path / "ckpt") == mode(tmp_path / "ckpt" / "sub") == mode(plain_dir)
    assert mode(plain_dir) == 0o777 & ~mask
    assert mode(tmp_path / "ckpt" / "sub" / "weights.bin") == 0o666 & ~mask
