"""Read the elements of a JSON array file one at a time, without loading the whole file.

LeanDojo split files are one JSON array that can be larger than memory; this parses it
incrementally with :meth:`json.JSONDecoder.raw_decode` over fixed-size chunks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError

_WS = " \t\n\r"


def iter_json_array(path: str | Path, *, chunk_chars: int = 1 << 20) -> Iterator[tuple[int, Any]]:
    """Yield ``(index, element)`` for each element of the JSON array stored in ``path``.

    Malformed JSON, a top-level value that is not an array, or a missing file raise
    :class:`~leantrain.core.errors.DataError` naming the file (and the element index).
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found", hint="check the path")
    decoder = json.JSONDecoder()
    try:
        with path.open(encoding="utf-8") as f:
            buf = ""
            pos = 0
            eof = False

            def fill() -> bool:
                nonlocal buf, pos, eof
                if eof:
                    return False
                chunk = f.read(chunk_chars)
                if not chunk:
                    eof = True
                    return False
                buf = (
                    buf[pos:] + chunk
                )  # drop what was consumed so memory stays one element + chunk
                pos = 0
                return True

            def skip_ws() -> str:
                """Advance past whitespace; return the next character ('' at end of file)."""
                nonlocal pos
                while True:
                    while pos < len(buf) and buf[pos] in _WS:
                        pos += 1
                    if pos < len(buf):
                        return buf[pos]
                    if not fill():
                        return ""

            first = skip_ws()
            if first != "[":
                what = "an empty file" if first == "" else f"{first!r}"
                raise DataError(
                    path,
                    f"expected a JSON array of theorems, found {what} at the start",
                    hint="LeanDojo split files (train.json …) hold a list of theorems; use .jsonl for one per line",
                )
            pos += 1
            index = 0
            if skip_ws() == "]":
                return
            while True:
                while True:
                    try:
                        obj, end = decoder.raw_decode(buf, pos)
                        break
                    except json.JSONDecodeError as e:
                        # An element cut by the chunk boundary: read more and retry.
                        if not fill():
                            raise DataError(
                                path,
                                f"malformed JSON in element {index}: {e.msg}",
                                index=index,
                                hint="the file must be a valid JSON array",
                            ) from None
                pos = end
                yield index, obj
                index += 1
                sep = skip_ws()
                if sep == ",":
                    pos += 1
                    if skip_ws() in ("", "]"):
                        raise DataError(
                            path, f"malformed JSON after element {index - 1}: trailing comma"
                        )
                    continue
                if sep == "]":
                    return
                found = "end of file" if sep == "" else repr(sep)
                raise DataError(
                    path,
                    f"malformed JSON after element {index - 1}: expected ',' or ']', found {found}",
                    index=index - 1,
                    hint="the file must be a valid JSON array (is it truncated?)",
                )
    except UnicodeDecodeError as e:
        raise DataError(path, f"not UTF-8 text ({e.reason})", hint="save it as UTF-8") from None
