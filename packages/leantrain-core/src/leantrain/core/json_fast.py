"""The orjson fast path of :mod:`leantrain.core.json_reader`, used when orjson is installed.

orjson is optional (core depends on nothing for it; leantrain-export installs it). It parses
LeanDojo split files 1.9x as fast as the standard library (JSONL lines 1.4x), but it cannot
stream a JSON array and a few of its answers differ, so it is only trusted where it reads
exactly what the strict standard-library reader would:

* it refuses what that reader refuses (malformed JSON, ``NaN`` / ``Infinity``, bytes that are
  not UTF-8, trailing data) and nesting deeper than 1,024 levels (the standard library's
  limit is the interpreter's recursion limit, ~1,000: nesting in between is now read);
* it also refuses what that reader accepts: escaped lone surrogates (``"\\ud800"``), numbers
  beyond the range of a double (``1e400``) and integers of thousands of digits;
* it reads integers beyond 64 bits as floats: any run of 19 or more digits (even inside a
  string) sends the text to the standard library instead, which keeps them exact.

Whatever orjson refuses goes to the standard-library reader, which accepts it or raises its
precise one-line error (file, line, element index, byte offset): the messages do not change.
In a JSON array the standard library takes over at the first element of the piece orjson
refused and reads the rest of the file.

A JSON array is cut into pieces of about 64 KiB at element boundaries found without a
tokenizer: a piece ends before a ``,`` that is followed by the opening bytes of the first
element (``{"url":`` in a LeanDojo split file). Inside a JSON string such bytes cannot occur
(the quote would end the string), but they can inside a nested object; a piece cut there does
not parse (``[`` + piece + ``]`` is then unbalanced), and an earlier cut is tried. A piece that
parses was cut at a top-level boundary: JSON parsing is deterministic, so the bytes of the
piece parse the same inside the file as alone. Memory holds one piece and its elements.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from typing import Any, BinaryIO

try:
    import orjson
except ImportError:  # pragma: no cover - core does not depend on orjson
    orjson = None  # type: ignore[assignment]

__all__ = ["MISS", "enabled", "iter_array", "loads"]

#: ``loads`` could not read the text exactly: use the standard-library reader.
MISS: Any = object()

# Digits to "0", everything else to " ": 19 zeros in a row is a run of 19 digits (one C pass).
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * 19
# The opening of an element: an object and its first key (no escapes, so found by bytes).
_HEAD = re.compile(rb'\{[ \t\n\r]*"[^"\\]{1,64}"[ \t\n\r]*:')
_WS = b" \t\n\r"
# Bytes per piece: its elements are consumed while still in the CPU's caches (1 MiB pieces
# made the 32k-theorem import slower than the standard library's element-by-element path).
_PIECE = 64 << 10
# Cuts tried per piece before the rest of the file goes to the standard-library reader.
_TRIES = 4
# No element boundary in this many bytes: the elements are huge (or their first keys all
# differ); stream them instead (a piece's objects take ~4x its bytes).
_MAX_PIECE = 16 << 20

#: ``(byte offset, element index, newlines before the offset)`` where the standard-library
#: reader must take over; offset 0: from the start of the file. The newlines are counted
#: then (not while reading: an error path may pay for it).
Handover = tuple[int, int, int]


def enabled() -> bool:
    """Whether orjson is installed (the fast path is used)."""
    return orjson is not None


def _has_long_number(data: bytes) -> bool:
    """Whether ``data`` holds a run of 19+ digits (orjson would read an integer of it inexactly)."""
    return data.translate(_DIGITS).find(_LONG_RUN) >= 0


def loads(data: bytes, std_decode: Callable[[str], Any] | None = None) -> Any:
    """The JSON value of ``data`` as the strict reader reads it, or :data:`MISS`.

    :data:`MISS` when orjson is missing or refuses ``data``. Text with 19+ digit runs is
    decoded by ``std_decode`` (:data:`MISS` without it, or when it raises).
    """
    if orjson is None:
        return MISS
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return MISS
    if _has_long_number(data):
        if std_decode is None:
            return MISS
        try:
            return std_decode(data.decode("utf-8"))
        except (ValueError, RecursionError):
            return MISS
    return value


def iter_array(
    f: BinaryIO,
    start: int,
    chunk: int,
    std_decode: Callable[[str], Any],
    decode_piece: Callable[[bytes], list[Any]] | None = None,
) -> Generator[tuple[int, Any], None, Handover | None]:
    """Yield ``(index, element)`` of the JSON array in ``f`` from byte ``start`` (after a BOM).

    Pieces are about ``chunk`` bytes (at most 64 KiB; bigger when an element is).
    ``decode_piece`` (optional) decodes a piece, a JSON array of whole elements, into the
    caller's own types (typed decoding, e.g. msgspec); it must raise ``ValueError`` for
    anything it does not read exactly as the strict reader would, and that piece is then read
    as plain JSON (so elements may be of either kind).

    Returns ``None`` when the whole file was read and checked (one array, then whitespace), or
    the :data:`Handover` where the standard-library reader must go on: anything unusual (an
    empty array, elements that are not objects, bad JSON, what orjson reads differently).
    """
    chunk = max(min(chunk, _PIECE), 256)
    f.seek(start)
    buf = f.read(chunk)
    eof = not buf
    base = start  # file offset of buf[0]
    p = 0  # where the next element starts in buf

    def more(size: int) -> None:
        """Drop ``buf[:p]`` and append up to ``size`` bytes (sets ``eof`` at the end)."""
        nonlocal buf, base, p, eof
        data = f.read(size)
        eof = not data
        base += p
        buf = buf[p:] + data
        p = 0

    while True:  # '[', whitespace, and the opening of the first element
        q = p
        while q < len(buf) and buf[q] in _WS:
            q += 1
        if q + 1 < len(buf) and buf[q] == 0x5B:  # '['
            q += 1
            while q < len(buf) and buf[q] in _WS:
                q += 1
            m = _HEAD.match(buf, q)
            if m is not None:
                break
        if eof or len(buf) > 4096:
            return 0, 0, 0  # not an array of objects (or empty): from the start, streamed
        more(chunk)
    head = m.group()
    p = q
    index = 0
    while True:
        if not eof and len(buf) - p < chunk:
            more(max(chunk, len(buf) - p))
        if eof:
            values = _decode(b"[" + buf[p:], std_decode, decode_piece)
            if values is MISS:
                return _handover(f, base + p, index)
            for value in values:
                yield index, value
                index += 1
            return None
        hi, tries, values = len(buf), 0, MISS
        while tries < _TRIES:
            c = buf.rfind(head, p + 1, hi)
            if c < 0:
                break
            hi = k = c
            while buf[k - 1] in _WS:
                k -= 1
            if buf[k - 1] != 0x2C:  # ',': not between two elements
                continue
            tries += 1
            values = _decode(b"[" + buf[p : k - 1] + b"]", std_decode, decode_piece)
            if values is not MISS:
                break
        if values is MISS:
            if tries or len(buf) - p > _MAX_PIECE:
                return _handover(f, base + p, index)
            more(max(chunk, len(buf) - p))  # no boundary yet: a bigger piece
            continue
        for value in values:
            yield index, value
            index += 1
        p = c


def _decode(
    piece: bytes,
    std_decode: Callable[[str], Any],
    decode_piece: Callable[[bytes], list[Any]] | None,
) -> Any:
    """The elements of ``piece`` by ``decode_piece`` when it reads it, else by :func:`loads`."""
    if decode_piece is not None:
        try:
            return decode_piece(piece)
        except ValueError:
            pass  # not its shape (or not whole JSON: a cut inside an element)
    return loads(piece, std_decode)


def _handover(f: BinaryIO, offset: int, index: int) -> Handover:
    """The :data:`Handover` at byte ``offset`` of ``f``, element ``index``."""
    f.seek(0)
    lines = 0
    while offset > 0:
        data = f.read(min(offset, 1 << 20))
        if not data:
            break
        lines += data.count(b"\n")
        offset -= len(data)
    return f.tell(), index, lines
