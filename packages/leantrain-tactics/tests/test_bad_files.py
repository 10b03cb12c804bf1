"""Tactic datasets read split files through core's one strict reader: a bad file is a DataError
naming it, never a traceback and never silently accepted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from leantrain.core import json_reader
from leantrain.core.errors import DataError
from leantrain.tactics import create_rl_dataset, create_sft_dataset, iter_json_array, iter_theorems


def test_the_reader_is_cores():
    assert iter_json_array is json_reader.iter_json_array


def _export(tmp_path: Path, train: bytes) -> Path:
    root = tmp_path / "export"
    (root / "random").mkdir(parents=True)
    (root / "random" / "train.json").write_bytes(train)
    return root


def _theorem(theorems, **change):
    return {**theorems[0], **change}


BAD = {
    "binary": (lambda t: bytes(range(256)), "binary"),
    "latin1": (
        lambda t: (
            json.dumps(t, ensure_ascii=False)
            .replace("⊢", "\udce9")
            .encode("utf-8", "surrogateescape")
        ),
        "not UTF-8",
    ),
    "utf16": (lambda t: json.dumps(t, ensure_ascii=False).encode("utf-16"), "UTF-16"),
    "utf16_no_bom": (lambda t: json.dumps(t).encode("utf-16-le"), "UTF-16"),
    "deep": (lambda t: b"[" * 50_000 + b"]" * 50_000, "nested too deeply"),
    "trailing_garbage": (lambda t: json.dumps(t).encode() + b" }", "unexpected data after"),
    "two_arrays": (lambda t: (json.dumps(t) * 2).encode(), "unexpected data after"),
    "empty": (lambda t: b"", "the file is empty"),
    "huge_start": (lambda t: json.dumps([_theorem(t, start=[10**30, 0])]).encode(), "start"),
    "negative_end": (lambda t: json.dumps([_theorem(t, end=[-2, 0])]).encode(), "end"),
    "reversed": (
        lambda t: json.dumps([_theorem(t, start=[9, 0], end=[3, 0])]).encode(),
        "is before start",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_split_files_are_data_errors(tmp_path: Path, theorems, case):
    make, message = BAD[case]
    root = _export(tmp_path, make(theorems))
    split = root / "random" / "train.json"
    for build in (
        lambda: list(iter_theorems(root, "train", chunk_chars=64)),
        lambda: create_sft_dataset(root, split="train"),
        lambda: create_rl_dataset(split, split="train"),
    ):
        with pytest.raises(DataError, match=message) as e:
            build()
        assert str(split) in str(e.value)


def test_an_empty_split_says_so(tmp_path: Path):
    root = _export(tmp_path, b"[]")
    with pytest.raises(DataError, match=r"no|empty"):
        create_sft_dataset(root, split="train")
