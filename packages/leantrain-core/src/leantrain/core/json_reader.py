"""The one strict reader of LeanDojo JSON files: JSON arrays streamed, JSONL, whole documents.

Every LeanDojo file leantrain reads (split files ``train.json`` …, ``corpus.jsonl``,
``traced_files.jsonl``, ``metadata.json``, progress rows) goes through here, so that every
bad input is the same kind of error: a :class:`~leantrain.core.errors.DataError` naming the
file (and the record), never a traceback and never silently accepted. Checked:

* missing files, directories, empty files;
* binary files, UTF-16 / UTF-32 text (with or without a byte-order mark), bytes that are not
  UTF-8 (named by byte offset);
* malformed JSON, ``NaN`` / ``Infinity`` (not JSON), integers too long to convert, nesting too
  deep to parse;
* anything after the end of a JSON array or document (trailing garbage, two arrays back to back).

A JSON array is parsed element by element over fixed-size chunks, so memory holds one element
and one chunk, not the file: LeanDojo split files can be hundreds of megabytes.

When orjson is installed (it is optional: leantrain-export brings it), it parses what it can
read exactly as the standard library would, JSON arrays in pieces of about one chunk at
element boundaries (:mod:`leantrain.core.json_fast`); everything else, and every error, goes
through the standard-library path, so what is accepted and the messages are the same.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from leantrain.core import json_fast
from leantrain.core.errors import DataError

__all__ = ["iter_json_array", "iter_json_records", "iter_jsonl", "read_json"]

_WS = " \t\n\r"
_SNIFF_BYTES = 4096
# A decode error this far before the end of the buffer cannot be cured by reading more.
_TAIL = 64
_UTF8_HINT = "save it as UTF-8 JSON text"


class _NotJSON(ValueError):
    """``NaN`` / ``Infinity``: accepted by Python's json module, but not JSON."""


def _reject_constant(name: str) -> Any:
    raise _NotJSON(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _check_file(path: Path) -> None:
    if not path.exists():
        raise DataError(path, "file not found", hint="check the path")
    if not path.is_file():
        raise DataError(path, "not a file", hint="give the path of a JSON / JSONL file")


def _sniff(path: Path, head: bytes) -> int:
    """Reject binary and UTF-16/32 files from their first bytes; the number of BOM bytes to skip."""
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        raise DataError(path, "the file is UTF-32 text, not UTF-8", hint=_UTF8_HINT)
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise DataError(path, "the file is UTF-16 text, not UTF-8", hint=_UTF8_HINT)
    if b"\x00" in head:
        even, odd = head[0::2], head[1::2]
        if head and (even.count(0) > 0.9 * len(even) or odd.count(0) > 0.9 * len(odd)):
            raise DataError(
                path,
                "the file looks like UTF-16 text (no byte-order mark), not UTF-8",
                hint=_UTF8_HINT,
            )
        raise DataError(
            path, "the file is binary (it holds NUL bytes), not JSON text", hint=_UTF8_HINT
        )
    return len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0


def _decode_error(path: Path, e: UnicodeDecodeError, offset: int) -> DataError:
    return DataError(
        path,
        f"not UTF-8 text: {e.reason} at byte {offset + e.start}",
        hint=_UTF8_HINT,
    )


class _Chunks:
    """UTF-8 text of a binary file in chunks, with strict decoding and byte offsets in errors."""

    def __init__(self, path: Path, f: BinaryIO, chunk_bytes: int, *, sniff: bool = True) -> None:
        """Text of ``f`` from its start (checked by :func:`_sniff`), or from where it stands."""
        self.path = path
        self.f = f
        self.chunk_bytes = chunk_bytes
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.eof = False
        if not sniff:
            self.offset = f.tell()
            self.pending = b""
            return
        head = f.read(max(chunk_bytes, _SNIFF_BYTES))
        skip = _sniff(path, head[:_SNIFF_BYTES])
        self.offset = skip
        self.pending = head[skip:]

    def read(self, size: int | None = None) -> str:
        """The next piece of text ('' at the end of the file)."""
        while True:
            data = self.pending or self.f.read(size or self.chunk_bytes)
            self.pending = b""
            final = not data
            # e.start counts from the undecoded bytes the decoder held back, then ``data``.
            held = len(self.decoder.getstate()[0])
            try:
                text = self.decoder.decode(data, final=final)
            except UnicodeDecodeError as e:
                raise _decode_error(self.path, e, self.offset - held) from None
            self.offset += len(data)
            if final:
                self.eof = True
                return text
            if text:
                return text


def _json_error(
    path: Path, e: ValueError | RecursionError, *, index: int | None, where: str = ""
) -> DataError:
    """``e`` from the JSON decoder as a :class:`DataError`; ``where`` locates it (" in line 3")."""
    if isinstance(e, RecursionError):
        return DataError(
            path,
            f"JSON nested too deeply{where}",
            index=index,
            hint="LeanDojo records are a few levels deep; the file is corrupted",
        )
    if isinstance(e, json.JSONDecodeError):
        msg = e.msg
    elif "integer string conversion" in str(e):
        msg = "a number with thousands of digits"
    else:
        msg = str(e)
    return DataError(
        path, f"malformed JSON{where}: {msg}", index=index, hint="the file must be valid JSON"
    )


def iter_json_array(
    path: str | Path,
    *,
    what: str = "records",
    chunk_chars: int = 1 << 20,
    allow_empty: bool = True,
    decode_piece: Callable[[bytes], list[Any]] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(index, element)`` of the JSON array file ``path``, streaming it.

    ``what`` names the elements in messages ("theorems"). ``allow_empty=False`` makes ``[]`` an
    error. Anything that is not exactly one JSON array of valid JSON values is a
    :class:`DataError` naming the file (and the element index where it broke). With orjson
    installed, pieces of about ``chunk_chars`` bytes are parsed by it (:mod:`.json_fast`); the
    standard library reads on from the first piece it does not take, and raises the errors.
    ``decode_piece`` decodes those pieces into the caller's own types where it can (see
    :func:`.json_fast.iter_array`); elements it does not read come as plain JSON values.
    """
    path = Path(path)
    _check_file(path)
    with path.open("rb") as f:
        start: json_fast.Handover = (0, 0, 0)
        if json_fast.enabled():
            skip = _sniff(path, f.read(_SNIFF_BYTES))
            handover = yield from json_fast.iter_array(
                f, skip, chunk_chars, _DECODER.decode, decode_piece
            )
            if handover is None:
                return
            start = handover
        offset, index, lines = start
        f.seek(offset)
        src = _Chunks(path, f, chunk_chars, sniff=offset == 0)
        yield from _stream_array(
            path, src, what, chunk_chars, allow_empty, index=index, lines=lines, opened=offset > 0
        )


def _stream_array(
    path: Path,
    src: _Chunks,
    what: str,
    chunk_chars: int,
    allow_empty: bool,
    *,
    index: int,
    lines: int,
    opened: bool,
) -> Iterator[tuple[int, Any]]:
    """The elements of the array in ``src`` by the standard library, from element ``index``.

    ``opened``: ``src`` starts at an element (the ``[`` and elements before ``index`` were
    read); ``lines``: the newlines before ``src``'s start, for line numbers in errors.
    """
    buf = ""
    pos = 0

    def fill(size: int | None = None) -> bool:
        """Append the next chunk, dropping what was consumed; False at the end of the file."""
        nonlocal buf, pos, lines
        if src.eof:
            return False
        chunk = src.read(size)
        lines += buf.count("\n", 0, pos)
        buf = buf[pos:] + chunk
        pos = 0
        return bool(chunk)

    def skip_ws() -> str:
        """Advance past whitespace; the next character ('' at the end of the file)."""
        nonlocal pos
        while True:
            while pos < len(buf) and buf[pos] in _WS:
                pos += 1
            if pos < len(buf):
                return buf[pos]
            if not fill():
                return ""

    if not opened:
        first = skip_ws()
        if first == "":
            raise DataError(
                path,
                "the file is empty",
                hint=f"a LeanDojo split file holds a JSON array of {what}",
            )
        if first != "[":
            raise DataError(
                path,
                f"expected a JSON array of {what}, found {first!r} at the start",
                hint=f"the file must hold a JSON array of {what} (one per line: use .jsonl)",
            )
        pos += 1
    if skip_ws() == "]" and not opened:
        pos += 1
        if not allow_empty:
            raise DataError(
                path,
                f"no {what}: the file holds an empty array",
                hint=f"give a file with at least one of the {what}",
            )
    else:
        while True:
            while True:
                try:
                    obj, end = _DECODER.raw_decode(buf, pos)
                except json.JSONDecodeError as e:
                    cut = e.msg.startswith("Unterminated string") or e.pos >= len(buf) - _TAIL
                    # An element cut by the chunk boundary: read more (doubling) and retry.
                    if cut and fill(max(chunk_chars, len(buf))):
                        continue
                    line = lines + buf.count("\n", 0, e.pos) + 1
                    raise _json_error(path, e, index=index, where=f" at line {line}") from None
                except (ValueError, RecursionError) as e:
                    line = lines + buf.count("\n", 0, pos) + 1
                    where = f" in the element starting at line {line}"
                    raise _json_error(path, e, index=index, where=where) from None
                # A number or literal cut at the chunk end decodes "successfully", too short.
                if end == len(buf) and fill():
                    continue
                break
            pos = end
            yield index, obj
            index += 1
            sep = skip_ws()
            if sep == ",":
                pos += 1
                if skip_ws() in ("", "]"):
                    raise DataError(
                        path,
                        f"malformed JSON after element {index - 1}: trailing comma",
                        index=index - 1,
                        hint="the file must be a valid JSON array",
                    )
                continue
            if sep == "]":
                pos += 1
                break
            found = "the end of the file" if sep == "" else repr(sep)
            raise DataError(
                path,
                f"malformed JSON after element {index - 1}: expected ',' or ']', found {found}",
                index=index - 1,
                hint="the file must be a valid JSON array (is it truncated?)",
            )
    rest = skip_ws()
    if rest != "":
        raise DataError(
            path,
            f"unexpected data after the end of the JSON array (starting {buf[pos : pos + 20]!r})",
            hint="the file must hold exactly one JSON array (two files concatenated?)",
        )


def iter_jsonl(
    path: str | Path,
    *,
    what: str = "records",
    allow_empty: bool = True,
    decode_line: Callable[[bytes], Any] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_index, object)`` for each non-blank line of the JSONL file ``path``.

    ``allow_empty=False`` makes a file without a single record an error. ``decode_line``
    decodes a line into the caller's own types where it can (typed decoding, e.g. msgspec); it
    must raise ``ValueError`` for anything it does not read exactly as the strict reader
    would, and that line is then read as plain JSON.
    """
    path = Path(path)
    _check_file(path)
    count = 0
    with path.open("rb") as f:
        head = f.read(_SNIFF_BYTES)
        offset = _sniff(path, head)
        f.seek(offset)
        fast = json_fast.enabled()
        for i, raw in enumerate(f):
            if decode_line is not None:
                try:
                    obj = decode_line(raw)
                except ValueError:
                    pass  # not its shape: read as plain JSON below
                else:
                    offset += len(raw)
                    count += 1
                    yield i, obj
                    continue
            if fast:  # orjson, where it reads the line as the standard library would
                obj = json_fast.loads(raw)
                if obj is not json_fast.MISS:
                    offset += len(raw)
                    count += 1
                    yield i, obj
                    continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise _decode_error(path, e, offset) from None
            offset += len(raw)
            if not line.strip():
                continue
            try:
                obj = _DECODER.decode(line)
            except (ValueError, RecursionError) as e:
                err = _json_error(path, e, index=i, where=f" in line {i + 1}")
                err.hint = "each line of a .jsonl file must be one JSON value"
                raise err from None
            count += 1
            yield i, obj
    if count == 0 and not allow_empty:
        raise DataError(
            path, f"no {what}: the file is empty", hint=f"give a file with one of the {what} a line"
        )


def iter_json_records(
    path: str | Path, *, what: str = "records", allow_empty: bool = True
) -> Iterator[tuple[int, Any]]:
    """The records of a ``.jsonl`` file (one a line) or of a JSON array file (anything else)."""
    path = Path(path)
    if path.suffix == ".jsonl":
        return iter_jsonl(path, what=what, allow_empty=allow_empty)
    return iter_json_array(path, what=what, allow_empty=allow_empty)


def read_json(path: str | Path) -> Any:
    """The one JSON document of ``path`` (``metadata.json`` …), read whole and checked."""
    path = Path(path)
    _check_file(path)
    with path.open("rb") as f:
        if json_fast.enabled():
            data = f.read()
            skip = _sniff(path, data[:_SNIFF_BYTES])
            value = json_fast.loads(data[skip:] if skip else data, _DECODER.decode)
            if value is not json_fast.MISS:
                return value
            f.seek(0)
        src = _Chunks(path, f, 1 << 20)
        parts = []
        while piece := src.read():
            parts.append(piece)
    text = "".join(parts)
    if not text.strip():
        raise DataError(path, "the file is empty", hint="the file must hold one JSON value")
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data":
            raise DataError(
                path,
                f"unexpected data after the JSON value at line {e.lineno}, column {e.colno}",
                hint="the file must hold exactly one JSON value",
            ) from None
        raise DataError(
            path,
            f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}",
            hint="the file must be valid JSON",
        ) from None
    except (ValueError, RecursionError) as e:
        raise _json_error(path, e, index=None) from None
