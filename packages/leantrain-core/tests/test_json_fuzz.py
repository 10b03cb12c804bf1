"""Property-based tests: the orjson fast path of the strict JSON reader reads exactly what the
standard library reads, for any array of objects, however it is cut into pieces.

The fast path cuts a JSON array at byte patterns that look like the opening of an element
(``{"url":``) without a tokenizer, and trusts orjson only where it agrees with the standard
library. A wrong cut or a value orjson reads differently (a big integer as a float, a lone
surrogate) would be silent data corruption, so the reader is compared with ``json.loads`` on
generated files built to contain those traps: element openings inside strings and inside
nested objects, escapes, surrogates, 19+ digit integers, floats, and varied whitespace.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from leantrain.core import json_fast
from leantrain.core.json_reader import iter_json_array

pytestmark = pytest.mark.skipif(not json_fast.enabled(), reason="orjson not installed")

TRAPS = [
    '{"url": "x"}',
    ', {"url": ',
    '{"url":',
    '"',
    "\\",
    "\n",
    "\u2028",
    "ℤ ⊢ ≤",
    "\ud800",  # a lone surrogate: orjson refuses it, the standard library reads it
    "1234567890123456789012",
    "\x00\x1f",
]

texts = st.one_of(
    st.text(max_size=30),
    st.sampled_from(TRAPS),
    st.lists(st.sampled_from(TRAPS), max_size=4).map("".join),
)
numbers = st.one_of(
    st.integers(min_value=-(10**25), max_value=10**25),  # beyond 64 bits too
    st.floats(allow_nan=False, allow_infinity=False),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["url", "a", "full_name", '{"url":']), inner, max_size=3),
    ),
    max_leaves=12,
)
elements = st.fixed_dictionaries(
    {"url": texts}, optional={"full_name": texts, "start": values, "traced_tactics": values}
)
layouts = st.sampled_from(
    [
        {},
        {"indent": 2},
        {"separators": (",", ":")},
        {"separators": (" ,\n ", " : ")},
        {"ensure_ascii": False},
    ]
)


def _typed(value: Any) -> Any:
    """``value`` with the type of every leaf kept, so that 1, 1.0 and True differ."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return (type(value).__name__, value)


@pytest.mark.slow
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(elements, min_size=1, max_size=25), layouts, st.sampled_from([256, 512, 4096]))
def test_fast_reader_reads_what_the_standard_library_reads(tmp_path, records, layout, chunk):
    text = json.dumps(records, **layout)
    ensure_ascii = layout.get("ensure_ascii", True)
    path = Path(tmp_path) / "records.json"
    # a lone surrogate cannot be written as UTF-8 unescaped: such files hold it escaped
    path.write_bytes(text.encode("utf-8", "surrogatepass" if not ensure_ascii else "strict"))
    try:
        want = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        return  # not valid UTF-8 (an unescaped surrogate): both readers refuse it, tested apart
    got = [value for _, value in iter_json_array(path, chunk_chars=chunk)]
    assert _typed(got) == _typed(want)
