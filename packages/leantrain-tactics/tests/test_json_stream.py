from __future__ import annotations

import json
from pathlib import Path

import pytest
from leantrain.core.errors import DataError
from leantrain.tactics import iter_json_array


@pytest.mark.parametrize("chunk", [16, 17, 50, 1 << 20])
def test_stream_equals_json_load_for_any_chunk_size(tmp_path: Path, theorems, chunk):
    path = tmp_path / "a.json"
    # Unicode, nested arrays and strings holding brackets/commas cross the chunk boundaries.
    data = [*theorems, {"s": "], [ ,{", "n": [1, [2, 3]], "u": "ι → ℝ ⊢ ∀"}, 42, "x"]
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    got = list(iter_json_array(path, chunk_chars=chunk))
    assert [i for i, _ in got] == list(range(len(data)))
    assert [obj for _, obj in got] == data


def test_empty_array_and_whitespace(tmp_path: Path):
    path = tmp_path / "e.json"
    path.write_text("  \n [ \n ]  ", encoding="utf-8")
    assert list(iter_json_array(path, chunk_chars=16)) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1}', "expected a JSON array"),
        ("", "empty file"),
        ('[{"a": 1}, {"b": ', "malformed JSON in element 1"),
        ('[{"a": 1} {"b": 2}]', "expected ',' or ']'"),
        ('[{"a": 1},]', "trailing comma"),
        ('[{"a": 1}', "found end of file"),
    ],
)
def test_malformed_files_are_data_errors_naming_the_file(tmp_path: Path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=message) as e:
        list(iter_json_array(path, chunk_chars=16))
    assert str(path) in str(e.value)


def test_elements_are_yielded_before_the_file_is_read_whole(tmp_path: Path):
    # A file that is broken at the very end still yields its leading elements first: the
    # reader never needs the whole array in memory.
    path = tmp_path / "big.json"
    path.write_text(
        "[" + ",".join(json.dumps({"i": i, "pad": "x" * 100}) for i in range(200)) + ",",
        encoding="utf-8",
    )
    it = iter_json_array(path, chunk_chars=256)
    assert next(it) == (0, {"i": 0, "pad": "x" * 100})
    with pytest.raises(DataError):
        list(it)


def test_missing_and_non_utf8(tmp_path: Path):
    with pytest.raises(DataError, match="file not found"):
        list(iter_json_array(tmp_path / "none.json"))
    path = tmp_path / "latin1.json"
    path.write_bytes(b'["\xe9"]')
    with pytest.raises(DataError, match="UTF-8"):
        list(iter_json_array(path))
