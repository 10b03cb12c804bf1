"""leantrain writes only new, empty or its own directories, and says how to proceed."""

from __future__ import annotations

from pathlib import Path

import pytest
from leantrain.core.errors import ConfigError
from leantrain.core.output_dir import check_output_file, claim_output_dir, output_kind


@pytest.mark.parametrize("bad", ["", " ", ".", "/", "~", ".."])
def test_current_parent_root_home_and_empty_are_refused(
    bad: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(ConfigError, match="--out"):
        claim_output_dir(bad, kind="export", flag="--out")
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_files_system_dirs_and_foreign_dirs_are_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        claim_output_dir(tmp_path / "file", kind="run")
    with pytest.raises(ConfigError, match="system directory"):
        claim_output_dir("/proc/leantrain-test", kind="run")
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "notes.md").write_text("x")
    with pytest.raises(ConfigError, match="did not write"):
        claim_output_dir(tmp_path / "theirs", kind="run", overwrite=True)
    assert (tmp_path / "theirs" / "notes.md").is_file()


def test_own_output_is_reused_or_overwritten_but_not_another_kind(tmp_path: Path) -> None:
    out = claim_output_dir(tmp_path / "new", kind="export")
    assert output_kind(out) == "export"
    (out / "corpus.jsonl").write_text("")
    assert claim_output_dir(out, kind="export") == out and (out / "corpus.jsonl").exists()
    with pytest.raises(ConfigError, match="a leantrain export"):
        claim_output_dir(out, kind="run")
    claim_output_dir(out, kind="export", overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == [".leantrain"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert output_kind(claim_output_dir(empty, kind="run")) == "run"


def test_only_the_marker_makes_a_directory_leantrain_s(tmp_path: Path) -> None:
    """Files leantrain writes (index.json, metadata.json …) without the ``.leantrain`` marker
    do not make a directory its own."""
    index = tmp_path / "index"
    index.mkdir()
    (index / "index.json").write_text("{}")
    with pytest.raises(ConfigError, match="did not write"):
        claim_output_dir(index, kind="index", overwrite=True)
    assert sorted(p.name for p in index.iterdir()) == ["index.json"]


def _ours(path: Path) -> bool:
    return path.read_text().startswith("OURS")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("", "is empty"),
        (".", "is a directory"),
        ("..", "is a directory"),
        ("/", "is a directory"),
        ("theirs", "is a directory"),
        ("keep.txt", "is not a file this command wrote"),
        ("keep.txt/sub.jsonl", "which is a file"),
        ("/proc/leantrain-test.jsonl", "system directory"),
    ],
)
def test_output_file_refuses_directories_system_paths_and_other_files(
    target: str, message: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("mine")
    (tmp_path / "theirs").mkdir()
    with pytest.raises(ConfigError, match=message) as e:
        check_output_file(target, is_own=_ours, flag="--out", example="rows.jsonl")
    assert str(e.value).startswith("--out") and "rows.jsonl" in (e.value.hint or "")
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_output_file_may_be_new_or_the_commands_own(tmp_path: Path) -> None:
    assert (
        check_output_file(tmp_path / "new" / "r.jsonl", is_own=_ours)
        == tmp_path / "new" / "r.jsonl"
    )
    (tmp_path / "r.jsonl").write_text("OURS\n")
    assert check_output_file(tmp_path / "r.jsonl", is_own=_ours) == tmp_path / "r.jsonl"
