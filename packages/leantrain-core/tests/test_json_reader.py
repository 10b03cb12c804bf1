"""The one strict reader of LeanDojo files: every bad file is a DataError naming it."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from leantrain.core import json_fast
from leantrain.core.errors import DataError
from leantrain.core.json_reader import iter_json_array, iter_json_records, iter_jsonl, read_json

HAVE_ORJSON = json_fast.enabled()


@pytest.fixture(autouse=True, params=["orjson", "stdlib"])
def json_path(request, monkeypatch):
    """Every test runs with orjson's fast path (when installed) and with the standard library."""
    if request.param == "stdlib":
        monkeypatch.setattr(json_fast, "orjson", None)
    elif not HAVE_ORJSON:
        pytest.skip("orjson is not installed")
    return request.param


THEOREM = {
    "url": "https://github.com/o/r",
    "commit": "abc",
    "file_path": "A.lean",
    "full_name": "t",
    "start": [1, 0],
    "end": [2, 5],
    "traced_tactics": [],
}


@pytest.mark.parametrize("chunk", [3, 16, 17, 50, 1 << 20])
def test_stream_equals_json_load_for_any_chunk_size(tmp_path: Path, chunk):
    path = tmp_path / "a.json"
    # Unicode, nested arrays, numbers and strings holding brackets/commas cross chunk boundaries.
    data = [THEOREM, {"s": "], [ ,{", "n": [1, [2, 3]], "u": "ι → ℝ ⊢ ∀"}, 42, 23456, "x", True]
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    got = list(iter_json_array(path, chunk_chars=chunk))
    assert [i for i, _ in got] == list(range(len(data)))
    assert [obj for _, obj in got] == data


def test_empty_array_whitespace_and_utf8_bom(tmp_path: Path):
    path = tmp_path / "e.json"
    path.write_text("  \n [ \n ]  ", encoding="utf-8")
    assert list(iter_json_array(path, chunk_chars=16)) == []
    with pytest.raises(DataError, match="no theorems: the file holds an empty array") as e:
        list(iter_json_array(path, what="theorems", allow_empty=False))
    assert str(path) in str(e.value)
    path.write_bytes(codecs.BOM_UTF8 + b"[1]")
    assert list(iter_json_array(path)) == [(0, 1)]
    assert read_json(path) == [1]


def test_elements_are_yielded_before_the_file_is_read_whole(tmp_path: Path):
    # A file broken at the very end still yields its leading elements first: the reader never
    # needs the whole array in memory.
    path = tmp_path / "big.json"
    path.write_text(
        "[" + ",".join(json.dumps({"i": i, "pad": "x" * 100}) for i in range(200)) + ",",
        encoding="utf-8",
    )
    it = iter_json_array(path, chunk_chars=256)
    assert next(it) == (0, {"i": 0, "pad": "x" * 100})
    with pytest.raises(DataError):
        list(it)


def test_an_early_syntax_error_is_reported_without_reading_on(tmp_path: Path):
    path = tmp_path / "early.json"
    path.write_text('[{"a": 1 "b": 2},\n' + ",\n".join(["1"] * 5000) + "]", encoding="utf-8")
    with pytest.raises(DataError, match="malformed JSON at line 1: Expecting ',' delimiter") as e:
        list(iter_json_array(path, chunk_chars=256))
    assert e.value.index == 0


# One small hand-made bad file per class: (file name, bytes, expected message).
BAD_FILES = [
    ("empty.json", b"", "the file is empty"),
    ("blank.json", b" \n\t ", "the file is empty"),
    ("object.json", b'{"a": 1}', "expected a JSON array"),
    ("binary.json", bytes(range(256)) * 4, "binary"),
    ("binary_no_nul.json", bytes(range(128, 256)) * 4, "not UTF-8 text"),
    ("latin1.json", b'[{"a": "caf\xe9"}]', r"not UTF-8 text: .* at byte 11"),
    ("utf16_bom.json", json.dumps([THEOREM]).encode("utf-16"), "UTF-16"),
    (
        "utf16_be_bom.json",
        codecs.BOM_UTF16_BE + json.dumps([THEOREM]).encode("utf-16-be"),
        "UTF-16",
    ),
    ("utf16_no_bom.json", json.dumps([THEOREM]).encode("utf-16-le"), "UTF-16"),
    ("utf32.json", json.dumps([THEOREM]).encode("utf-32"), "UTF-32"),
    ("deep.json", b"[" + b"[" * 100_000 + b"]" * 100_000 + b"]", "nested too deeply"),
    ("trailing.json", b"[1, 2] garbage", "unexpected data after the end of the JSON array"),
    ("two_arrays.json", b"[1, 2]\n[3]", "unexpected data after the end of the JSON array"),
    ("truncated.json", b'[{"a": 1}, {"b": ', "malformed JSON"),
    ("missing_comma.json", b'[{"a": 1} {"b": 2}]', "expected ',' or ']'"),
    ("trailing_comma.json", b'[{"a": 1},]', "trailing comma"),
    ("unclosed.json", b'[{"a": 1}', "found the end of the file"),
    ("nan.json", b"[NaN]", "NaN is not valid JSON"),
    ("infinity.json", b'[{"start": -Infinity}]', "-Infinity is not valid JSON"),
    ("huge_int.json", b"[" + b"9" * 5000 + b"]", "a number with thousands of digits"),
]


@pytest.mark.parametrize(("name", "data", "message"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_array_files_are_data_errors_naming_the_file(tmp_path: Path, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    for chunk in (16, 1 << 20):
        with pytest.raises(DataError, match=message) as e:
            list(iter_json_array(path, chunk_chars=chunk))
        assert str(path) in str(e.value)
        assert "\n" not in str(e.value)


BAD_JSONL = [
    ("binary.jsonl", bytes(range(256)), "binary"),
    ("utf16.jsonl", b'{"a": 1}\n'.decode().encode("utf-16"), "UTF-16"),
    ("utf16_no_bom.jsonl", b'{"a": 1}\n{"b": 2}\n'.decode().encode("utf-16-le"), "UTF-16"),
    ("latin1.jsonl", b'{"a": 1}\n{"b": "\xe9"}\n', r"not UTF-8 text: .* at byte 16"),
    ("bad_line.jsonl", b'{"a": 1}\nnot json\n', "malformed JSON in line 2"),
    ("deep.jsonl", b"[" * 100_000 + b"]" * 100_000 + b"\n", "nested too deeply in line 1"),
    ("nan.jsonl", b'{"a": NaN}\n', "NaN is not valid JSON"),
    ("two_on_a_line.jsonl", b'{"a": 1} {"b": 2}\n', "Extra data"),
]


@pytest.mark.parametrize(("name", "data", "message"), BAD_JSONL, ids=[b[0] for b in BAD_JSONL])
def test_bad_jsonl_files_are_data_errors_naming_the_file(tmp_path: Path, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(DataError, match=message) as e:
        list(iter_jsonl(path))
    assert str(path) in str(e.value)


def test_jsonl_records_and_empty(tmp_path: Path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"a": 1}\n\n{"b": 2}\n', encoding="utf-8")
    assert list(iter_json_records(path)) == [(0, {"a": 1}), (2, {"b": 2})]
    path.write_text("\n \n", encoding="utf-8")
    assert list(iter_jsonl(path)) == []
    with pytest.raises(DataError, match="no corpus files: the file is empty"):
        list(iter_jsonl(path, what="corpus files", allow_empty=False))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the file is empty"),
        (b'{"a": 1} {"b": 2}', "unexpected data after the JSON value"),
        (b'{"a": 1', "malformed JSON at line 1"),
        ('{"url": "x"}'.encode("utf-16"), "UTF-16"),
        (b'{"a": "\xff"}', "not UTF-8"),
        (b'{"a": ' * 100_000, "nested too deeply"),
    ],
)
def test_read_json_is_strict(tmp_path: Path, data, message):
    path = tmp_path / "metadata.json"
    path.write_bytes(data)
    with pytest.raises(DataError, match=message) as e:
        read_json(path)
    assert str(path) in str(e.value)


def test_missing_file_and_directory(tmp_path: Path):
    for read in (read_json, lambda p: list(iter_json_array(p)), lambda p: list(iter_jsonl(p))):
        with pytest.raises(DataError, match="file not found"):
            read(tmp_path / "none.json")
        with pytest.raises(DataError, match="not a file"):
            read(tmp_path)


def _read_all(read, path: Path):
    """What ``read(path)`` returns, or its error message."""
    try:
        return read(path)
    except DataError as e:
        return f"DataError: {e}"


def _stdlib(read, path: Path):
    """``read(path)`` by the standard-library path alone (the reference)."""
    saved, json_fast.orjson = json_fast.orjson, None
    try:
        return _read_all(read, path)
    finally:
        json_fast.orjson = saved


def _records(n: int) -> list:
    """Theorem-like records whose nested objects and strings look like element boundaries."""
    out = []
    for i in range(n):
        rec = dict(THEOREM, full_name=f"t{i}")
        rec["traced_tactics"] = [
            # a nested object opening with the same key as the elements
            {"url": "nested", "tactic": "simp [f] at h ⊢", "annotated_tactic": ["x", []]},
            {"tactic": '}, {"url": "inside a string", "s": "\\"}, {', "n": [i, [i, {}]]},
        ]
        out.append(rec)
    return out


@pytest.mark.parametrize("chunk", [1, 300, 1000, 4096, 1 << 20])
@pytest.mark.parametrize("indent", [None, 2])
def test_pieces_cut_at_element_boundaries_only(tmp_path: Path, chunk, indent):
    data = _records(60)
    path = tmp_path / "a.json"
    path.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    got = list(iter_json_array(path, chunk_chars=chunk))
    assert [i for i, _ in got] == list(range(len(data)))
    assert [obj for _, obj in got] == data


# What orjson reads differently from (or refuses where) the standard library accepts it,
# deep inside a file: read exactly as the standard library reads it.
ODD_VALUES = [
    2**64,
    -(2**63) - 1,
    10**30,
    "9" * 25,  # a long digit run in a string: correct either way
    "\ud800 lone surrogate",
    float("inf"),  # written as 1e400 below
]


@pytest.mark.parametrize("odd", ODD_VALUES, ids=[str(v)[:12] for v in ODD_VALUES])
def test_what_orjson_reads_differently_is_read_as_the_stdlib_does(tmp_path: Path, odd):
    data = _records(80)
    data[50]["start"] = [1, odd]
    text = json.dumps(data).replace("Infinity", "1e400")
    for name, read in [
        ("a.json", lambda p: list(iter_json_array(p, chunk_chars=2000))),
        ("a.jsonl", lambda p: list(iter_jsonl(p))),
        ("m.json", lambda p: list(enumerate(read_json(p)))),
    ]:
        path = tmp_path / name
        body = "\n".join(json.dumps(d).replace("Infinity", "1e400") for d in data)
        path.write_text(body if name.endswith(".jsonl") else text, encoding="utf-8")
        got = _read_all(read, path)
        assert got == _stdlib(read, path)
        values = [v for _, v in got]
        assert values[50]["start"][1] == odd
        assert type(values[50]["start"][1]) is type(odd)


@pytest.mark.parametrize(
    "bad",
    [
        "NaN",
        '{"a": 1 "b": 2}',
        '"tab\tin a string"',
        "[" * 2000 + "]" * 2000,
        '"\\x"',
        "01",
        "9" * 5000,
    ],
)
def test_errors_deep_in_a_file_are_the_stdlib_messages(tmp_path: Path, bad):
    # A bad element after many good ones, across pieces: same message, line and index.
    good = [json.dumps(r, indent=1) for r in _records(70)]
    path = tmp_path / "bad.json"
    path.write_text("[" + ",\n".join([*good[:40], bad, *good[40:]]) + "]", encoding="utf-8")
    for chunk in (500, 1 << 20):
        read = lambda p, chunk=chunk: list(iter_json_array(p, chunk_chars=chunk))  # noqa: E731
        got = _read_all(read, path)
        assert isinstance(got, str) and got.startswith("DataError")
        assert got == _stdlib(read, path)
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text("\n".join([json.dumps(r) for r in _records(5)] + [bad]), encoding="utf-8")
    got = _read_all(lambda p: list(iter_jsonl(p)), jsonl)
    assert isinstance(got, str) and "line 6" in got
    assert got == _stdlib(lambda p: list(iter_jsonl(p)), jsonl)


def test_not_utf8_deep_in_a_file_names_the_byte(tmp_path: Path):
    head = json.dumps(_records(50)).encode()[:-1]
    data = head + b', {"a": "caf\xe9"}]'
    path = tmp_path / "latin1.json"
    path.write_bytes(data)
    with pytest.raises(DataError, match=f"not UTF-8 text: .* at byte {len(head) + 12}"):
        list(iter_json_array(path, chunk_chars=1000))


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        ("] garbage", "unexpected data after the end of the JSON array"),
        ("]\n[1]", "unexpected data after the end of the JSON array"),
        (",]", "trailing comma"),
        ("", "found the end of the file"),
    ],
)
def test_the_end_of_an_array_of_objects_is_checked(tmp_path: Path, tail, message):
    path = tmp_path / "end.json"
    path.write_bytes(codecs.BOM_UTF8 + json.dumps(_records(30)).encode()[:-1] + tail.encode())
    for chunk in (700, 1 << 20):
        with pytest.raises(DataError, match=message) as e:
            list(iter_json_array(path, chunk_chars=chunk))
        assert str(e.value) == _stdlib(lambda p: list(iter_json_array(p)), path)[11:]
    path.write_bytes(codecs.BOM_UTF8 + json.dumps(_records(30)).encode() + b"\n\t ")
    assert [v for _, v in iter_json_array(path, chunk_chars=700)] == _records(30)


def _typed(piece: bytes) -> list:
    """A typed decoder for the tests: ``("T", name)`` for records whose names start with
    ``t``; ValueError for a piece with any other element (or that is not whole JSON)."""
    values = json.loads(piece)
    if not all(isinstance(v, dict) and str(v.get("full_name")).startswith("t") for v in values):
        raise ValueError("not my shape")
    return [("T", v["full_name"]) for v in values]


def _typed_line(line: bytes) -> tuple:
    """:func:`_typed` of one JSONL line (ValueError for a blank one: nothing to unpack)."""
    (value,) = _typed(b"[" + line + b"]")
    return value


@pytest.mark.parametrize("chunk", [300, 2000, 1 << 20])
def test_a_typed_decoder_reads_the_pieces_it_can(tmp_path: Path, chunk, json_path):
    """Pieces the decoder reads come typed, the others as plain JSON; every element once, in
    order (the records' nested objects look like element openings: mis-cut pieces are not
    whole JSON, so the decoder refuses them too)."""
    data = _records(120)
    for i in range(0, 120, 37):
        data[i]["full_name"] = f"odd{i}x"  # spoils its piece for the decoder
    path = tmp_path / "a.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    got = list(iter_json_array(path, chunk_chars=chunk, decode_piece=_typed))
    assert [i for i, _ in got] == list(range(120))
    for (_, value), record in zip(got, data, strict=True):
        assert value in (record, ("T", record["full_name"]))
    typed = sum(isinstance(v, tuple) for _, v in got)
    if json_path == "orjson":  # the fast path is the one that cuts pieces
        assert 0 < typed <= 120 - 4 if chunk < 1 << 20 else typed == 0
    else:
        assert typed == 0
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text("\n".join(json.dumps(d) for d in data) + "\n\n", encoding="utf-8")
    lines = list(iter_jsonl(jsonl, decode_line=_typed_line))
    assert [i for i, _ in lines] == list(range(120))
    assert sum(isinstance(v, tuple) for _, v in lines) == 120 - 4  # per line, without orjson too


def test_a_typed_decoder_leaves_the_errors_as_they_were(tmp_path: Path):
    good = [json.dumps(r, indent=1) for r in _records(70)]
    path = tmp_path / "bad.json"
    path.write_text("[" + ",\n".join([*good[:40], "NaN", *good[40:]]) + "]", encoding="utf-8")
    plain = _read_all(lambda p: list(iter_json_array(p, chunk_chars=500)), path)
    typed = _read_all(
        lambda p: list(iter_json_array(p, chunk_chars=500, decode_piece=_typed)), path
    )
    assert typed.startswith("DataError") and typed == plain
