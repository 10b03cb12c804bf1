"""Fuzz suite: hundreds of malformed inputs across every ``leantrain`` command.

Every case is malformed (a bad data file, YAML config, flag value, database or path) and
must give: no traceback, a non-zero exit, exactly one line on stderr naming what is wrong,
no hang, and no file written or removed outside the case's own output (each case runs with a
fresh sandbox directory as its cwd, snapshotted before and after).

Cases are a table of mutation classes crossed with the commands that read the input
(``CASES``; no property-based tier yet). Most cases run in-process through
:func:`leantrain.core.cli.main` (an exception escaping it is a traceback); a representative
subset also runs as real subprocesses (``python -m leantrain.core.cli``).

``python tests-integration/tests/test_fuzz.py`` prints the number of cases by class and command.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# ---------------------------------------------------------------------------------------------
# the case table

#: Seconds a single in-process case may take (a hang is a failure); the watchdog kills the
#: whole run (with a stack dump) at HARD_TIMEOUT_S so that a real hang cannot stall CI.
CASE_TIMEOUT_S = 60
HARD_TIMEOUT_S = 180
SUBPROCESS_TIMEOUT_S = 180

SPLIT_FILES = [
    f"{s}/{p}.json" for s in ("random", "novel_premises") for p in ("train", "val", "test")
]
EXP = "exp"  # the (mutated) export directory inside a sandbox


@dataclass
class Case:
    id: str
    cls: str  # data / yaml / flags / database / paths / run-dir
    command: str  # "export import", "sft", ...
    argv: list[str]
    setup: Callable[[Path], None] = lambda sb: None
    outputs: list[str] = field(default_factory=list)  # sandbox paths the case may write
    needles: list[str] = field(default_factory=list)  # one of them must be in the message


def _bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _sample_dir() -> Path:
    from leantrain.core.sample import sample_repo_dirs

    return sample_repo_dirs()[0]


def _copy_export(sb: Path) -> Path:
    dst = sb / EXP
    shutil.copytree(_sample_dir(), dst)
    return dst


# --- byte-level mutations of a JSON document / JSONL file --------------------------------------

DEEP = 100_000


def _json_bytes_mutations(jsonl: bool) -> dict[str, Callable[[bytes], bytes]]:
    m: dict[str, Callable[[bytes], bytes]] = {
        "binary": lambda b: bytes(range(256)) * 8,
        "nul-bytes": lambda b: b"\x00" * 4096,
        "truncated-half": lambda b: b[: len(b) // 2],
        "truncated-1": lambda b: b.rstrip()[:-2] if jsonl else b.rstrip()[:-1],
        "utf16": lambda b: b.decode("utf-8").encode("utf-16"),
        "utf16le-nobom": lambda b: b.decode("utf-8").encode("utf-16-le"),
        "utf32": lambda b: b.decode("utf-8").encode("utf-32"),
        "latin1": lambda b: (
            b.decode("utf-8").replace("ℕ", "é").replace("α", "é").encode("latin-1", "replace")
            + b"\xe9\xff"
        ),
        "invalid-utf8-in-string": lambda b: (
            b.replace(b'"', b'"\xff\xfe', 1) if b.count(b'"') > 0 else b"\xff"
        ),
        "trailing-garbage": lambda b: b + b" garbage!",
        "empty": lambda b: b"",
        "whitespace": lambda b: b"   \n\t\n",
        "deep-nesting": lambda b: b"[" * DEEP + b"]" * DEEP,
        "deep-nesting-object": lambda b: b'{"a":' * DEEP + b"1" + b"}" * DEEP,
        # a JSON array gets a NaN element; a JSON-lines file (no "[") a NaN line
        "nan-literal": lambda b: (
            b.replace(b"[", b"[NaN, ", 1) if b.lstrip().startswith(b"[") else b"NaN\n" + b
        ),
        "bom-garbage": lambda b: b"\xef\xbb\xbf\xef\xbb\xbf" + b,
        "html": lambda b: b"<!DOCTYPE html><html><body>404 Not Found</body></html>\n",
        "gzip": lambda b: b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + bytes(range(200)),
        "single-quote-json": lambda b: b.replace(b'"', b"'"),
    }
    if jsonl:
        m.update(
            {
                "line-not-object": lambda b: b"[1, 2, 3]\n" + b,
                "line-string": lambda b: b'"just a string"\n' + b,
                "line-null": lambda b: b"null\n" + b,
                "broken-middle-line": lambda b: b.replace(b"\n", b"\n{broken\n", 1),
                "two-objects-one-line": lambda b: b.replace(b"}\n", b"} {}\n", 1),
            }
        )
    else:
        m.update(
            {
                "object-not-array": lambda b: b'{"theorems": ' + b + b"}",
                "null": lambda b: b"null",
                "number": lambda b: b"42",
                "string": lambda b: b'"theorems"',
                "array-of-ints": lambda b: b"[1, 2, 3]",
                "array-of-arrays": lambda b: b"[[], [1]]",
                "doubled": lambda b: b + b,
                "jsonl-instead": lambda b: b"\n".join(
                    json.dumps(r).encode() for r in json.loads(b)
                ),
            }
        )
    return m


# --- record-level mutations of one theorem of a split --------------------------------------------


def _set(path: str, value: object) -> Callable[[dict], None]:
    keys = path.split(".")

    def f(rec: dict) -> None:
        obj: object = rec
        for k in keys[:-1]:
            obj = obj[int(k)] if isinstance(obj, list) else obj[k]  # type: ignore[index]
        last = keys[-1]
        if isinstance(obj, list):
            obj[int(last)] = value
        else:
            obj[last] = value  # type: ignore[index]

    return f


def _del(path: str) -> Callable[[dict], None]:
    keys = path.split(".")

    def f(rec: dict) -> None:
        obj: object = rec
        for k in keys[:-1]:
            obj = obj[int(k)] if isinstance(obj, list) else obj[k]  # type: ignore[index]
        del obj[keys[-1]]  # type: ignore[arg-type, union-attr]

    return f


THEOREM_MUTATIONS: dict[str, Callable[[dict], None]] = {
    "missing-full_name": _del("full_name"),
    "missing-file_path": _del("file_path"),
    "missing-tactic": _del("traced_tactics.0.tactic"),
    "missing-state_before": _del("traced_tactics.0.state_before"),
    "full_name-int": _set("full_name", 5),
    "full_name-null": _set("full_name", None),
    "full_name-list": _set("full_name", ["a"]),
    "file_path-int": _set("file_path", 7),
    "traced_tactics-int": _set("traced_tactics", 5),
    "traced_tactics-string": _set("traced_tactics", "rfl"),
    "traced_tactics-dict": _set("traced_tactics", {"tactic": "rfl"}),
    "tactic-null": _set("traced_tactics.0.tactic", None),
    "tactic-int": _set("traced_tactics.0.tactic", 3),
    "tactic-list": _set("traced_tactics.0.tactic", ["rfl"]),
    "state_before-int": _set("traced_tactics.0.state_before", 1),
    "start-huge": _set("start", [10**30, 1]),
    "start-huge-col": _set("start", [1, 10**30]),
    "start-negative": _set("start", [-3, 1]),
    "end-before-start": _set("end", [1, 1]),
    "start-string": _set("start", "25:1"),
    "start-3-items": _set("start", [1, 2, 3]),
    "start-float": _set("start", [1.5, 2]),
    "start-bool": _set("start", [True, 1]),
    "start-null": _set("start", None),
    "url-int": _set("url", 5),
    "commit-list": _set("commit", ["x"]),
    "annotated_tactic-int": _set("traced_tactics.0.annotated_tactic", 5),
    "record-is-list": lambda rec: (rec.clear(), rec.update({"__list__": True})),
}


def _mutate_records(data: bytes, name: str) -> bytes:
    records = json.loads(data)
    if name == "record-is-list":
        records[0] = ["not", "a", "theorem"]
    else:
        THEOREM_MUTATIONS[name](records[0])
    return json.dumps(records).encode()


# --- record-level mutations of corpus.jsonl / progress rows / metadata / dynamic DB -------------

CORPUS_MUTATIONS: dict[str, Callable[[dict], None]] = {
    "missing-path": _del("path"),
    "path-int": _set("path", 3),
    "premises-int": _set("premises", 4),
    "premises-string": _set("premises", "x"),
    "imports-int": _set("imports", 2),
    "premise-missing-full_name": _del("premises.0.full_name"),
    "premise-full_name-int": _set("premises.0.full_name", 9),
    "premise-start-huge": _set("premises.0.start", [10**30, 1]),
    "premise-start-negative": _set("premises.0.start", [-1, 1]),
    "premise-end-before-start": _set("premises.0.end", [0, 1]),
    "premise-code-list": _set("premises.0.code", ["x"]),
}

PROGRESS_ROW_MUTATIONS: dict[str, Callable[[dict], None]] = {
    "missing-goal": _del("goal"),
    "missing-tactic": _del("tactic"),
    "missing-steps": _del("steps_remaining"),
    "steps-negative": _set("steps_remaining", -4),
    "steps-string": _set("steps_remaining", "3"),
    "steps-float": _set("steps_remaining", 2.5),
    "steps-huge": _set("steps_remaining", 10**30),
    "steps-null": _set("steps_remaining", None),
    "steps-bool": _set("steps_remaining", True),
    "goal-int": _set("goal", 1),
    "tactic-list": _set("tactic", ["rfl"]),
    "prefix-int": _set("prefix", 2),
}

METADATA_MUTATIONS: dict[str, Callable[[dict], None]] = {
    "url-int": _set("from_repo.url", 5),
    "url-null": _set("from_repo.url", None),
    "url-empty": _set("from_repo.url", ""),
    "commit-int": _set("from_repo.commit", 12),
    "commit-list": _set("from_repo.commit", []),
    "from_repo-list": _set("from_repo", ["https://x", "abc"]),
    "from_repo-string": _set("from_repo", "https://x@abc"),
    "missing-from_repo": _del("from_repo"),
    "missing-url": _del("from_repo.url"),
    "missing-commit": _del("from_repo.commit"),
    "creation_time-int": _set("creation_time", 10**30),
    "leandojo_version-dict": _set("leandojo_version", {"a": 1}),
}

DYNDB_MUTATIONS: dict[str, Callable[[dict], None]] = {
    "repositories-dict": _set("repositories", {"a": 1}),
    "repositories-string": _set("repositories", "x"),
    "repositories-null": _set("repositories", None),
    "missing-repositories": _del("repositories"),
    "repo-is-int": _set("repositories.0", 5),
    "repo-url-int": _set("repositories.0.url", 5),
    "repo-missing-url": _del("repositories.0.url"),
    "repo-commit-null": _set("repositories.0.commit", None),
    "repo-theorems-int": _set("repositories.0.proven_theorems", 3),
    "repo-theorem-full_name-int": _set("repositories.0.proven_theorems.0.full_name", 3),
    "repo-theorem-start-huge": _set("repositories.0.proven_theorems.0.start", [10**30, 0]),
    "repo-theorem-tactics-string": _set("repositories.0.proven_theorems.0.traced_tactics", "x"),
    "repo-premise_files-int": _set("repositories.0.premise_files", 1),
    "repo-total_theorems-negative": _set("repositories.0.total_theorems", -5),
    "repo-metadata-list": _set("repositories.0.metadata", []),
}


# --- commands that read an export directory (and which files they read) -------------------------

# command -> (argv after "leantrain", outputs)
SPLIT_READERS: dict[str, tuple[list[str], list[str]]] = {
    "export import": (
        ["export", "import", EXP, "--db", "lt.db"],
        ["lt.db", "lt.db-wal", "lt.db-shm", "lt.db-journal"],
    ),
    "sft": (
        ["sft", "--model", "tiny", "--data", EXP, "--output-dir", "out", "--max-steps", "1"],
        ["out"],
    ),
    "grpo": (
        ["grpo", "--model", "tiny", "--data", EXP, "--output-dir", "out", "--max-steps", "1"],
        ["out"],
    ),
    "llm eval": (["llm", "eval", "--model", "tiny", "--data", EXP, "--split", "test"], []),
    "retrieval train": (
        [
            "retrieval",
            "train",
            "--model",
            "tiny",
            "--data",
            EXP,
            "--output-dir",
            "out",
            "--max-steps",
            "1",
        ],
        ["out"],
    ),
    "retrieval evaluate": (["retrieval", "evaluate", "--model", "tiny", "--data", EXP], []),
    "progress make-data": (
        ["progress", "make-data", "--data", EXP, "--out", "rows.jsonl"],
        ["rows.jsonl"],
    ),
    "progress train": (
        [
            "progress",
            "train",
            "--model",
            "tiny",
            "--data",
            EXP,
            "--output-dir",
            "out",
            "--max-steps",
            "1",
        ],
        ["out"],
    ),
}
CORPUS_READERS: dict[str, tuple[list[str], list[str]]] = {
    "export import": SPLIT_READERS["export import"],
    "retrieval train": SPLIT_READERS["retrieval train"],
    "retrieval evaluate": SPLIT_READERS["retrieval evaluate"],
    "retrieval index": (
        ["retrieval", "index", "--model", "tiny", "--data", EXP, "--output", "idx"],
        ["idx"],
    ),
    "retrieval retrieve": (
        [
            "retrieval",
            "retrieve",
            "--model",
            "tiny",
            "--data",
            EXP,
            "--state",
            "⊢ True",
            "--file",
            "ListBasics/Sum.lean",
            "-k",
            "3",
        ],
        [],
    ),
}

_CACHE: dict[str, bytes] = {}


def _valid(name: str) -> bytes:
    """Valid inputs made once per session: lt.db, dyn.json, rows.jsonl."""
    if name not in _CACHE:
        import tempfile

        from leantrain.core.cli import main

        with tempfile.TemporaryDirectory() as td, _captured() as (_out, err):
            old = os.getcwd()
            os.chdir(td)
            try:
                assert main(["export", "import", "--sample", "--db", "lt.db"]) == 0, err.getvalue()
                assert main(["export", "dump-json", "--db", "lt.db", "--out", "dyn.json"]) == 0
                src = _sample_dir()
                assert (
                    main(["progress", "make-data", "--data", str(src), "--out", "rows.jsonl"]) == 0
                )
                for n in ("lt.db", "dyn.json", "rows.jsonl"):
                    _CACHE[n] = Path(n).read_bytes()
            finally:
                os.chdir(old)
    return _CACHE[name]


def _export_with(files: dict[str, Callable[[bytes], bytes]]) -> Callable[[Path], None]:
    def setup(sb: Path) -> None:
        exp = _copy_export(sb)
        for rel, fn in files.items():
            p = exp / rel
            p.write_bytes(fn(p.read_bytes()))

    return setup


#: Readers that are cheap to start (no model): every mutation class goes to them; each class
#: also goes to one of the other readers, in turn, so that every reader sees every kind of
#: mutation across the table while the suite stays fast (``LEANTRAIN_FUZZ_FULL=1``: all of them).
CHEAP = {"export import", "progress make-data", "pipeline"}
FULL = bool(os.environ.get("LEANTRAIN_FUZZ_FULL"))
_turn: Counter[str] = Counter()


def _crossed(kind: str, readers: dict) -> list:
    """The readers a mutation class of ``kind`` goes to: the cheap ones and the next other one."""
    cheap = [k for k in readers if k in CHEAP]
    other = [k for k in readers if k not in CHEAP]
    if FULL or not other:
        return list(readers)
    pick = other[_turn[kind] % len(other)]
    _turn[kind] += 1
    return [*cheap, pick]


def _data_cases() -> list[Case]:
    cases: list[Case] = []
    # split files: byte-level and record-level mutations, on every split file
    for mname, fn in _json_bytes_mutations(jsonl=False).items():
        for cmd in _crossed("split", SPLIT_READERS):
            argv, outs = SPLIT_READERS[cmd]
            cases.append(
                Case(
                    f"split-{mname}",
                    "data: split JSON",
                    cmd,
                    argv,
                    _export_with(dict.fromkeys(SPLIT_FILES, fn)),
                    outs,
                    [".json"],
                )
            )
    for mname in THEOREM_MUTATIONS:
        for cmd in _crossed("split", SPLIT_READERS):
            argv, outs = SPLIT_READERS[cmd]
            cases.append(
                Case(
                    f"theorem-{mname}",
                    "data: split JSON",
                    cmd,
                    argv,
                    _export_with(
                        dict.fromkeys(SPLIT_FILES, lambda b, m=mname: _mutate_records(b, m))
                    ),
                    outs,
                    [".json"],
                )
            )
    # corpus.jsonl
    for mname, fn in _json_bytes_mutations(jsonl=True).items():
        for cmd in _crossed("corpus", CORPUS_READERS):
            argv, outs = CORPUS_READERS[cmd]
            cases.append(
                Case(
                    f"corpus-{mname}",
                    "data: corpus.jsonl",
                    cmd,
                    argv,
                    _export_with({"corpus.jsonl": fn}),
                    outs,
                    ["corpus.jsonl"],
                )
            )

    def corpus_record(m: str) -> Callable[[bytes], bytes]:
        def f(b: bytes) -> bytes:
            lines = [json.loads(x) for x in b.splitlines() if x.strip()]
            CORPUS_MUTATIONS[m](lines[0])
            return b"\n".join(json.dumps(x).encode() for x in lines) + b"\n"

        return f

    for mname in CORPUS_MUTATIONS:
        for cmd in _crossed("corpus", CORPUS_READERS):
            argv, outs = CORPUS_READERS[cmd]
            cases.append(
                Case(
                    f"corpus-{mname}",
                    "data: corpus.jsonl",
                    cmd,
                    argv,
                    _export_with({"corpus.jsonl": corpus_record(mname)}),
                    outs,
                    ["corpus.jsonl"],
                )
            )
    # metadata.json (read by export import)
    imp_argv, imp_outs = SPLIT_READERS["export import"]
    for mname, fn in {
        **_json_bytes_mutations(jsonl=False),
        "array": lambda b: b"[" + b + b"]",
    }.items():
        if mname in ("array-of-ints", "array-of-arrays", "jsonl-instead"):
            continue
        cases.append(
            Case(
                f"metadata-{mname}",
                "data: metadata.json",
                "export import",
                imp_argv,
                _export_with({"metadata.json": fn}),
                imp_outs,
                ["metadata.json"],
            )
        )

    def meta_record(m: str) -> Callable[[bytes], bytes]:
        def f(b: bytes) -> bytes:
            d = json.loads(b)
            METADATA_MUTATIONS[m](d)
            return json.dumps(d).encode()

        return f

    for mname in METADATA_MUTATIONS:
        cases.append(
            Case(
                f"metadata-{mname}",
                "data: metadata.json",
                "export import",
                imp_argv,
                _export_with({"metadata.json": meta_record(mname)}),
                imp_outs,
                ["metadata.json"],
            )
        )

    # dynamic_database.json (export import FILE)
    def dyn(fn: Callable[[bytes], bytes]) -> Callable[[Path], None]:
        return lambda sb: _bytes(sb / "dynamic_database.json", fn(_valid("dyn.json")))

    dyn_argv = ["export", "import", "dynamic_database.json", "--db", "lt.db"]
    for mname, fn in _json_bytes_mutations(jsonl=False).items():
        if mname in ("jsonl-instead", "deep-nesting"):
            continue
        cases.append(
            Case(
                f"dyndb-{mname}",
                "data: dynamic_database.json",
                "export import",
                dyn_argv,
                dyn(fn),
                imp_outs,
                ["dynamic_database.json"],
            )
        )

    def dyn_record(m: str) -> Callable[[bytes], bytes]:
        def f(b: bytes) -> bytes:
            d = json.loads(b)
            DYNDB_MUTATIONS[m](d)
            return json.dumps(d).encode()

        return f

    for mname in DYNDB_MUTATIONS:
        cases.append(
            Case(
                f"dyndb-{mname}",
                "data: dynamic_database.json",
                "export import",
                dyn_argv,
                dyn(dyn_record(mname)),
                imp_outs,
                ["dynamic_database.json"],
            )
        )

    # progress rows (progress train / evaluate --data rows.jsonl)
    def rows(fn: Callable[[bytes], bytes]) -> Callable[[Path], None]:
        return lambda sb: _bytes(sb / "rows.jsonl", fn(_valid("rows.jsonl")))

    def row_record(m: str) -> Callable[[bytes], bytes]:
        def f(b: bytes) -> bytes:
            lines = [json.loads(x) for x in b.splitlines() if x.strip()]
            PROGRESS_ROW_MUTATIONS[m](lines[0])
            return b"\n".join(json.dumps(x).encode() for x in lines) + b"\n"

        return f

    row_cmds = {
        "progress train": (
            [
                "progress",
                "train",
                "--model",
                "tiny",
                "--data",
                "rows.jsonl",
                "--output-dir",
                "out",
                "--max-steps",
                "1",
            ],
            ["out"],
        ),
        "progress evaluate": (
            ["progress", "evaluate", "--model", "tiny", "--data", "rows.jsonl"],
            [],
        ),
    }
    row_muts = {
        **{k: v for k, v in _json_bytes_mutations(jsonl=True).items()},
        **{k: row_record(k) for k in PROGRESS_ROW_MUTATIONS},
    }
    for mname, fn in row_muts.items():
        for cmd in _crossed("rows", row_cmds):
            argv, outs = row_cmds[cmd]
            cases.append(
                Case(
                    f"rows-{mname}",
                    "data: progress rows",
                    cmd,
                    argv,
                    rows(fn),
                    outs,
                    [] if cmd == "progress evaluate" else ["rows.jsonl"],
                )
            )
    return cases


# --- YAML configs --------------------------------------------------------------------------------

ALIAS_BOMB = "a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)

# command -> (argv without --config, outputs, an int key of its config, a str key)
YAML_COMMANDS: dict[str, tuple[list[str], list[str], str, str]] = {
    "sft": (
        ["sft", "--model", "tiny", "--data", "SAMPLE", "--output-dir", "out", "--max-steps", "1"],
        ["out"],
        "per_device_train_batch_size",
        "model_name",
    ),
    "grpo": (
        ["grpo", "--model", "tiny", "--data", "SAMPLE", "--output-dir", "out", "--max-steps", "1"],
        ["out"],
        "per_device_train_batch_size",
        "model_name",
    ),
    "llm eval": (["llm", "eval", "--model", "tiny", "--data", "SAMPLE"], [], "eval_k", "split"),
    "retrieval train": (
        [
            "retrieval",
            "train",
            "--model",
            "tiny",
            "--data",
            "SAMPLE",
            "--output-dir",
            "out",
            "--max-steps",
            "1",
        ],
        ["out"],
        "batch_size",
        "model_name",
    ),
    "progress make-data": (
        ["progress", "make-data", "--data", "SAMPLE", "--out", "rows.jsonl"],
        ["rows.jsonl"],
        "seed",
        "strategy",
    ),
    "progress train": (
        [
            "progress",
            "train",
            "--model",
            "tiny",
            "--data",
            "SAMPLE",
            "--output-dir",
            "out",
            "--max-steps",
            "1",
        ],
        ["out"],
        "per_device_train_batch_size",
        "model_name",
    ),
    "progress evaluate": (
        ["progress", "evaluate", "--model", "tiny", "--data", "SAMPLE"],
        [],
        "batch_size",
        "model",
    ),
    "progress predict": (
        ["progress", "predict", "--model", "tiny", "--goal", "⊢ True", "--tactic", "trivial"],
        [],
        "goal",
        "goal",
    ),
    "pipeline": (["pipeline"], ["runs", "leantrain-runs"], "seed", "name"),
}


def _yaml_mutations(int_key: str, str_key: str, command: str) -> dict[str, bytes]:
    m = {
        "empty": b"",
        "whitespace": b"  \n\n",
        "comment-only": b"# nothing here\n",
        "null": b"null\n",
        "tilde": b"~\n",
        "binary": bytes(range(256)) * 4,
        "utf16": f"{str_key}: x\n".encode("utf-16"),
        "non-utf8": f"{str_key}: caf".encode() + b"\xe9\xff\n",
        "top-list": b"- a\n- b\n",
        "top-scalar": b"just a string\n",
        "top-int": b"42\n",
        "unknown-key": b"no_such_option_xyz: 1\n",
        "typo-key": (int_key[:-1] + ": 1\n").encode(),
        "wrong-type-int": f"{int_key}: [1, 2]\n".encode(),
        "wrong-type-str": f"{str_key}: {{a: 1}}\n".encode(),
        "syntax-tab": f"{str_key}:\n\t- x\n".encode(),
        "syntax-unclosed": f"{str_key}: 'abc\n".encode(),
        "syntax-bad-indent": f"{str_key}: a\n  b: c\n d: e\n".encode(),
        "alias-bomb": (ALIAS_BOMB + f"{str_key}: *i\n").encode(),
        "python-tag": b"!!python/object/apply:os.system ['echo pwned > pwned.txt']\n",
        "python-tag-value": f"{str_key}: !!python/object/apply:os.getcwd []\n".encode(),
        "deep-nesting": f"{str_key}: ".encode() + b"[" * 5000 + b"]" * 5000 + b"\n",
        "key-null": b"null: 1\n",
        "key-int": b"1: 2\n",
        "key-list": b"? [a, b]\n: 1\n",
    }
    if command != "progress predict":
        m["negative-int"] = f"{int_key}: -7\n".encode()
        m["huge-int"] = f"{int_key}: {10**400}\n".encode()
    return m


def _yaml_cases() -> list[Case]:
    cases = []
    names = list(_yaml_mutations("k", "k", "sft"))
    per_command: dict[str, list[str]] = {cmd: [] for cmd in YAML_COMMANDS}
    for mname in names:
        for cmd in _crossed("yaml", YAML_COMMANDS):
            per_command[cmd].append(mname)
    for cmd, (argv, outs, int_key, str_key) in YAML_COMMANDS.items():
        for mname, data in _yaml_mutations(int_key, str_key, cmd).items():
            if mname not in per_command[cmd]:
                continue

            def setup(sb: Path, data: bytes = data) -> None:
                _copy_export(sb)
                _bytes(sb / "c.yaml", data)

            full = [EXP if a == "SAMPLE" else a for a in argv] + ["--config", "c.yaml"]
            needles = (
                []
                if cmd in ("progress evaluate", "progress predict")
                else ["c.yaml", int_key, str_key]
            )
            cases.append(Case(f"yaml-{mname}", "yaml", cmd, full, setup, outs, needles))
    # pipeline-specific sections
    pipe_sections = {
        "trainers-unknown": b"trainers: [sft, nosuch]\nsources: [sample]\n",
        "trainers-string": b"trainers: 5\nsources: [sample]\n",
        "sources-int": b"sources: 5\n",
        "sources-missing-dir": b"sources: [does/not/exist]\n",
        "sft-unknown-key": b"sources: [sample]\ntrainers: [sft]\nsft: {no_such_key: 1}\n",
        "sft-not-dict": b"sources: [sample]\ntrainers: [sft]\nsft: [1, 2]\n",
        "retrieval-trainer-bad": b"sources: [sample]\ntrainers: [retrieval]\nretrieval: {trainer: {max_steps: -5}}\n",
        "section-without-trainer": b"sources: [sample]\ntrainers: [sft]\nprogress: {epochs: 1}\n",
        "name-traversal": b"name: ../../escape\nsources: [sample]\n",
        "name-absolute": b"name: /tmp/escape\nsources: [sample]\n",
        "repos-unknown": b"sources: [sample]\nrepos: [no-such-repo]\n",
        "repos-dict": b"sources: [sample]\nrepos: {a: 1}\n",
        "reward-code": b"sources: [sample]\ntrainers: [grpo]\ngrpo: {reward_funcs: [{name: 'os:system', command: 'echo pwned > pwned.txt'}]}\n",
        "batch-zero": b"sources: [sample]\ntrainers: [sft]\nsft: {per_device_train_batch_size: 0}\n",
        "lr-string": b"sources: [sample]\ntrainers: [sft]\nsft: {learning_rate: fast}\n",
        "run_dir-file": b"sources: [sample]\nrun_dir: c.yaml\n",
        "run_dir-proc": b"sources: [sample]\nrun_dir: /proc/leantrain-fuzz\n",
        "run_dir-cwd": b"sources: [sample]\nrun_dir: .\n",
    }
    for mname, data in pipe_sections.items():
        cases.append(
            Case(
                f"yaml-pipeline-{mname}",
                "yaml",
                "pipeline",
                ["pipeline", "--config", "c.yaml"],
                lambda sb, d=data: _bytes(sb / "c.yaml", d),
                ["runs", "leantrain-runs"],
                [],
            )
        )
    return cases


# --- flags ---------------------------------------------------------------------------------------


def _flag_cases() -> list[Case]:
    S = EXP
    table: dict[str, tuple[list[str], list[str], list[list[str]]]] = {
        # command: (base argv, outputs, list of bad flag lists appended / replacing)
        "sft": (
            ["sft", "--model", "tiny", "--data", S, "--output-dir", "out", "--max-steps", "1"],
            ["out"],
            [
                ["--per_device_train_batch_size", "0"],
                ["--per_device_train_batch_size", "-3"],
                ["--per_device_train_batch_size", "x"],
                ["--learning_rate", "-1"],
                ["--learning_rate", "nan"],
                ["--learning_rate", "fast"],
                ["--max_steps", "abc"],
                ["--max_steps", "1e400"],
                ["--num_train_epochs", "-2"],
                ["--gradient_accumulation_steps", "0"],
                ["--modle", "tiny"],
                ["--no-such-flag"],
                ["--bf16", "maybe"],
                ["--eval_k", "0"],
                ["--max_eval_samples", "-4"],
                ["--lora_r", "0"],
                ["--reward_funcs", "os:system"],
                ["extra-positional"],
                ["--split_strategy", "nosuch"],
                ["--train_split", "nosuch"],
                ["--logging_steps", "-1"],
                ["--seed", "x"],
            ],
        ),
        "grpo": (
            ["grpo", "--model", "tiny", "--data", S, "--output-dir", "out", "--max-steps", "1"],
            ["out"],
            [
                ["--num_generations", "0"],
                ["--num_generations", "-2"],
                ["--reward_funcs", "nosuch_reward"],
                ["--reward_funcs", "os:system"],
                ["--max_completion_length", "0"],
                ["--per_device_train_batch_size", "0"],
                ["--temperature", "-1"],
                ["--beta", "x"],
                ["--algorithm", "nosuch"],
                ["--no-such-flag"],
                ["--learning_rate", "-0.1"],
                ["--advantage", "os:getcwd"],
            ],
        ),
        "llm eval": (
            ["llm", "eval", "--model", "tiny", "--data", S],
            [],
            [
                ["--eval_k", "0"],
                ["--eval_k", "-1"],
                ["--eval_k", "x"],
                ["--split", "nosuch"],
                ["--split_strategy", "nosuch"],
                ["--max_eval_samples", "-1"],
                ["--max_eval_samples", "0"],
                ["--eval_max_new_tokens", "0"],
                ["--no-such-flag"],
                ["--model", "does/not/exist"],
            ],
        ),
        "retrieval train": (
            [
                "retrieval",
                "train",
                "--model",
                "tiny",
                "--data",
                S,
                "--output-dir",
                "out",
                "--max-steps",
                "1",
            ],
            ["out"],
            [
                ["--max-steps", "-5"],
                ["--max-steps", "0"],
                ["--max-steps", "x"],
                ["--batch_size", "0"],
                ["--batch_size", "-1"],
                ["--learning_rate", "-1"],
                ["--temperature", "0"],
                ["--temperature", "-1"],
                ["--num_negatives", "-1"],
                ["--accelerator", "gpu"],
                ["--devices", "0"],
                ["--devices", "-3"],
                ["--precision", "nosuch"],
                ["--max-epochs", "-2"],
                ["--loss", "nosuch"],
                ["--split", "nosuch"],
                ["--no-such-flag"],
                ["--context_max_len", "0"],
                ["--ewc_lambda", "-1"],
                ["--trainer", "5"],
                ["--strategy", "nosuch"],
                ["--model_name", "os:system"],
                ["--num_workers", "-1"],
            ],
        ),
        "retrieval evaluate": (
            ["retrieval", "evaluate", "--model", "tiny", "--data", S],
            [],
            [
                ["--batch-size", "0"],
                ["--batch-size", "-1"],
                ["--batch-size", "x"],
                ["--no-such-flag"],
                ["--model", "does/not/exist"],
                ["--model", "os:system"],
            ],
        ),
        "retrieval index": (
            ["retrieval", "index", "--model", "tiny", "--data", S, "--output", "idx"],
            ["idx"],
            [
                ["--batch-size", "0"],
                ["--no-such-flag"],
                ["--model", "nosuch_dir"],
            ],
        ),
        "retrieval retrieve": (
            [
                "retrieval",
                "retrieve",
                "--model",
                "tiny",
                "--data",
                S,
                "--state",
                "⊢ True",
                "--file",
                "ListBasics/Sum.lean",
            ],
            [],
            [
                ["-k", "-1"],
                ["-k", "0"],
                ["-k", "x"],
                ["-k", "99999999999999999999999"],
                ["--file", "No/Such.lean"],
                ["--index", "nosuch_index_dir"],
                ["--no-such-flag"],
            ],
        ),
        "progress make-data": (
            ["progress", "make-data", "--data", S, "--out", "rows.jsonl"],
            ["rows.jsonl"],
            [
                ["--split", "nosuch"],
                ["--strategy", "nosuch"],
                ["--sorry_policy", "nosuch"],
                ["--max_oversample", "-1"],
                ["--max_oversample", "x"],
                ["--seed", "x"],
                ["--no-such-flag"],
                ["--rebalance", "maybe"],
            ],
        ),
        "progress train": (
            [
                "progress",
                "train",
                "--model",
                "tiny",
                "--data",
                S,
                "--output-dir",
                "out",
                "--max-steps",
                "1",
            ],
            ["out"],
            [
                ["--per_device_train_batch_size", "0"],
                ["--eval_ratio", "2"],
                ["--eval_ratio", "-0.5"],
                ["--max_length", "0"],
                ["--learning_rate", "-1"],
                ["--padding", "nosuch"],
                ["--no-such-flag"],
                ["--eval_data_path", "does/not/exist.jsonl"],
            ],
        ),
        "progress evaluate": (
            ["progress", "evaluate", "--model", "tiny", "--data", S],
            [],
            [
                ["--batch_size", "0"],
                ["--batch_size", "-1"],
                ["--split", "nosuch"],
                ["--no-such-flag"],
                ["--model", "does/not/exist"],
            ],
        ),
        "progress predict": (
            ["progress", "predict", "--model", "tiny", "--goal", "⊢ True"],
            [],
            [
                ["--model", "does/not/exist"],
                ["--no-such-flag"],
                ["--tactic"],
            ],
        ),
        "pipeline": (
            ["pipeline"],
            ["runs", "leantrain-runs"],
            [
                [],
                ["--config"],
                ["--config", "does/not/exist.yaml"],
                ["--config", "."],
                ["--config", "/dev/null"],
                ["--no-such-flag"],
                ["--config", "c.yaml", "--quiet", "--jsonl"],
            ],
        ),
        "demo": (
            ["demo"],
            ["leantrain-runs", "runs"],
            [
                ["--no-such-flag"],
                ["--name", "../../escape"],
                ["--name", ""],
                ["--name", "/abs"],
                ["--quiet", "--jsonl"],
                ["--run-dir", ""],
                ["--run-dir", "."],
                ["--run-dir", "/"],
            ],
        ),
        "prove": (  # issue 36 item 3: a device this machine lacks, when the options are read
            ["prove", "--generator", "tiny", "--data", S, "--output-dir", "out"],
            ["out"],
            [
                ["--device", "tpu"],
                ["--device", "cuda:99"],
                ["--device", ""],
                ["--k", "0"],
                ["--split", "tset"],
                ["--no-such-flag"],
            ],
        ),
        "report": (["report"], [], [[], ["a", "b"], ["--no-such-flag", "x"]]),
        "compare": (["compare"], [], [[], ["a"], ["a", "b", "c"], ["--no-such-flag", "a", "b"]]),
        "export import": (
            ["export", "import", "--db", "lt.db"],
            ["lt.db"],
            [
                [],
                ["--sample", "--date-processed", "yesterday"],
                ["--sample", "--date-processed", "2025-13-45"],
                ["--no-such-flag"],
            ],
        ),
        "export merge": (
            ["export", "merge", "--db", "lt.db", "--out", "m"],
            ["m"],
            [
                ["--repo", "https://no/such@abc"],
                ["--repo", ""],
                ["--no-such-flag"],
            ],
        ),
        "export delete": (
            ["export", "delete", "--db", "lt.db"],
            [],
            [[], ["https://no/such@abc"], ["--no-such-flag"]],
        ),
        "export list": (
            ["export", "list", "--db", "lt.db"],
            [],
            [["--json", "x"], ["--no-such-flag"]],
        ),
        "export stats": (["export", "stats", "--db", "lt.db"], [], [["--no-such-flag"], ["extra"]]),
        "export curriculum": (
            ["export", "curriculum", "--db", "lt.db"],
            [],
            [["--no-such-flag"], ["extra"]],
        ),
        "export dump-json": (
            ["export", "dump-json", "--db", "lt.db"],
            [],
            [[], ["--no-such-flag"]],
        ),
        # a bare 'leantrain export' prints its usage (exit 0), as every command of commands does
        "export": (["export"], [], [["nosuch"], ["--no-such-flag"]]),
        "llm": (["llm"], [], [["nosuch"]]),
        "retrieval": (["retrieval"], [], [["nosuch"]]),
        "progress": (["progress"], [], [["nosuch"]]),
        "leantrain": ([], [], [["nosuch"], ["--no-such-flag"]]),
    }
    cases = []
    for cmd, (base, outs, bads) in table.items():
        for bad in bads:
            argv = [*base, *bad]
            if cmd == "pipeline" and bad[:1] == ["--config"] and "c.yaml" in bad:
                pass
            tag = "_".join(bad).strip("-") or "none"

            def setup(sb: Path, cmd: str = cmd) -> None:
                _copy_export(sb)
                if cmd.startswith("export ") and cmd != "export import":
                    _bytes(sb / "lt.db", _valid("lt.db"))
                _bytes(sb / "c.yaml", b"sources: [sample]\n")

            cases.append(Case(f"flag-{tag}", "flags", cmd, argv, setup, outs, []))
    return cases


# --- databases -----------------------------------------------------------------------------------


def _foreign_sqlite(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers VALUES (1, 'alice')")
    conn.commit()
    conn.close()


def _tableless_leantrain(path: Path) -> None:
    from leantrain.export.schema import APPLICATION_ID, SCHEMA_VERSION

    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    conn.execute("CREATE TABLE unrelated (x)")
    conn.commit()
    conn.close()


def _development_version(path: Path) -> None:
    """A database of schema version 4 (a development version: refused, import again)."""
    path.write_bytes(_valid("lt.db"))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    conn.close()


def _future_version(path: Path) -> None:
    path.write_bytes(_valid("lt.db"))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()


DB_MUTATIONS: dict[str, Callable[[Path], None]] = {
    "foreign-sqlite": _foreign_sqlite,
    "random-bytes": lambda p: p.write_bytes(bytes((i * 7919) % 256 for i in range(50_000))),
    "zero-bytes": lambda p: p.write_bytes(b"\x00" * 8192),
    "truncated": lambda p: p.write_bytes(_valid("lt.db")[:6000]),
    "header-only": lambda p: p.write_bytes(_valid("lt.db")[:100]),
    "text-file": lambda p: p.write_text("this is not a database\n"),
    "json-file": lambda p: p.write_bytes(_valid("dyn.json")[:4000]),
    "directory": lambda p: p.mkdir(),
    "tableless-leantrain": _tableless_leantrain,
    "development-version": _development_version,
    "future-version": _future_version,
    "corrupt-page": lambda p: p.write_bytes(
        _valid("lt.db")[:4096] + bytes(((i * 31) % 251) for i in range(len(_valid("lt.db")) - 4096))
    ),
    # issue 36: the repositories table whole, the pages after it overwritten ("malformed")
    "damaged-tail": lambda p: p.write_bytes(
        (b := _valid("lt.db"))[: len(b) // 3]
        + bytes((i * 7) % 256 for i in range(len(b) - len(b) // 3))
    ),
}


def _db_cases() -> list[Case]:
    cmds: dict[str, tuple[list[str], list[str]]] = {
        "export import": (["export", "import", EXP, "--db", "bad.db"], []),
        "export import --sample": (["export", "import", "--sample", "--db", "bad.db"], []),
        "export list": (["export", "list", "--db", "bad.db"], []),
        "export stats": (["export", "stats", "--db", "bad.db", "--json"], []),
        "export merge": (["export", "merge", "--db", "bad.db", "--out", "m"], ["m"]),
        "export curriculum": (["export", "curriculum", "--db", "bad.db"], []),
        "export dump-json": (
            ["export", "dump-json", "--db", "bad.db", "--out", "d.json"],
            ["d.json"],
        ),
        "export delete": (
            [
                "export",
                "delete",
                "--db",
                "bad.db",
                "https://github.com/leantrain-samples/list-basics",
            ],
            [],
        ),
        "sft": (
            [
                "sft",
                "--model",
                "tiny",
                "--database",
                "bad.db",
                "--output-dir",
                "out",
                "--max-steps",
                "1",
            ],
            ["out"],
        ),
        "retrieval train": (
            [
                "retrieval",
                "train",
                "--model",
                "tiny",
                "--database",
                "bad.db",
                "--output-dir",
                "out",
                "--max-steps",
                "1",
            ],
            ["out"],
        ),
        # issue 36: every command that takes --database refuses a damaged file in one line
        "grpo": (
            ["grpo", "--model", "tiny", "--database", "bad.db", "--output-dir", "out"],
            ["out"],
        ),
        "progress train": (
            ["progress", "train", "--model", "tiny", "--database", "bad.db", "--output-dir", "out"],
            ["out"],
        ),
        "pipeline --config": (["pipeline", "--config", "c.yaml"], ["run"]),
    }
    cases = []
    for mname, make in DB_MUTATIONS.items():
        for cmd, (argv, outs) in cmds.items():

            def setup(sb: Path, make: Callable[[Path], None] = make) -> None:
                _copy_export(sb)
                make(sb / "bad.db")
                _bytes(sb / "c.yaml", b"sources: [sample]\ndatabase: bad.db\nrun_dir: run\n")

            cases.append(
                Case(f"db-{mname}", "database", cmd.split(" --")[0], argv, setup, outs, ["bad.db"])
            )
    return cases


# --- paths (outputs that are files / dirs / system paths; inputs that are missing / wrong kind) --


def _path_cases() -> list[Case]:
    writers: dict[str, tuple[list[str], str]] = {
        # command: (argv with OUT placeholder, flag name)
        "export merge": (["export", "merge", "--db", "lt.db", "--out", "OUT"], "--out"),
        "export dump-json": (["export", "dump-json", "--db", "lt.db", "--out", "OUT"], "--out"),
        "sft": (
            ["sft", "--model", "tiny", "--data", EXP, "--output-dir", "OUT", "--max-steps", "1"],
            "--output",
        ),
        "grpo": (
            ["grpo", "--model", "tiny", "--data", EXP, "--output-dir", "OUT", "--max-steps", "1"],
            "--output",
        ),
        "retrieval train": (
            [
                "retrieval",
                "train",
                "--model",
                "tiny",
                "--data",
                EXP,
                "--output-dir",
                "OUT",
                "--max-steps",
                "1",
            ],
            "--output",
        ),
        "retrieval index": (
            ["retrieval", "index", "--model", "tiny", "--data", EXP, "--output", "OUT"],
            "--output",
        ),
        # issue 36 (5): the index cache of evaluate, the index read by retrieve
        "retrieval evaluate": (
            ["retrieval", "evaluate", "--model", "tiny", "--data", EXP, "--index", "OUT"],
            "--index",
        ),
        "retrieval retrieve": (
            [
                *["retrieval", "retrieve", "--model", "tiny", "--data", EXP, "--index", "OUT"],
                *["--state", "⊢ True", "--file", "ListBasics/Sum.lean"],
            ],
            "--index",
        ),
        "progress make-data": (["progress", "make-data", "--data", EXP, "--out", "OUT"], "--out"),
        "progress train": (
            [
                "progress",
                "train",
                "--model",
                "tiny",
                "--data",
                EXP,
                "--output-dir",
                "OUT",
                "--max-steps",
                "1",
            ],
            "--output",
        ),
        "pipeline": (["pipeline", "--config", "c.yaml", "--run-dir", "OUT"], "run"),
        "demo": (["demo", "--run-dir", "OUT"], "run"),
    }
    targets = {
        "cwd": ".",
        "empty": "",
        "root": "/",
        "parent": "..",
        "existing-file": "keep.txt",
        "under-file": "keep.txt/sub",
        "proc": "/proc/leantrain-fuzz",
        "dir-with-files": "mine",
        "db-file": "lt.db",
    }
    cases = []
    for cmd, (argv, _flag) in writers.items():
        for tname, target in targets.items():
            if cmd == "export dump-json" and tname in ("dir-with-files",):
                continue
            full = [target if a == "OUT" else a for a in argv]

            def setup(sb: Path) -> None:
                _copy_export(sb)
                _bytes(sb / "lt.db", _valid("lt.db"))
                _bytes(sb / "keep.txt", b"precious\n")
                _bytes(sb / "mine" / "notes.txt", b"mine\n")
                _bytes(
                    sb / "c.yaml",
                    b"name: fz\nsources: [sample]\ntrainers: [progress]\nrepos: [list-basics]\n"
                    b"progress: {model_name: tiny, max_steps: 1}\n",
                )

            cases.append(Case(f"out-{tname}", "paths", cmd, full, setup, [], []))
    # inputs of the wrong kind
    readers: dict[str, list[str]] = {
        "export import": ["export", "import", "IN", "--db", "lt2.db"],
        "sft": [
            "sft",
            "--model",
            "tiny",
            "--data",
            "IN",
            "--output-dir",
            "out",
            "--max-steps",
            "1",
        ],
        "llm eval": ["llm", "eval", "--model", "tiny", "--data", "IN"],
        "retrieval evaluate": ["retrieval", "evaluate", "--model", "tiny", "--data", "IN"],
        "retrieval retrieve": [
            "retrieval",
            "retrieve",
            "--model",
            "tiny",
            "--data",
            "IN",
            "--state",
            "s",
            "--file",
            "F.lean",
        ],
        "progress make-data": ["progress", "make-data", "--data", "IN", "--out", "rows.jsonl"],
        "progress evaluate": ["progress", "evaluate", "--model", "tiny", "--data", "IN"],
        "pipeline": ["pipeline", "--config", "IN"],
        "report": ["report", "IN"],
        "compare": ["compare", "IN", "IN"],
    }
    inputs = {
        "missing": "does/not/exist",
        "empty-dir": "emptydir",
        "text-file": "keep.txt",
        "dev-null": "/dev/null",
        "proc-file": "/proc/self/status",
        "empty-string": "",
        "dir-of-junk": "mine",
    }
    for cmd, argv in readers.items():
        for iname, target in inputs.items():
            full = [target if a == "IN" else a for a in argv]

            def setup(sb: Path) -> None:
                _bytes(sb / "keep.txt", b"precious\n")
                _bytes(sb / "mine" / "notes.txt", b"mine\n")
                (sb / "emptydir").mkdir()

            cases.append(
                Case(
                    f"in-{iname}",
                    "paths",
                    cmd,
                    full,
                    setup,
                    ["out", "rows.jsonl", "lt2.db", "lt2.db-wal", "lt2.db-shm", "lt2.db-journal"],
                    [],
                )
            )
    return cases


# --- run directories for report / compare ----------------------------------------------------------

RUN_DIR_MUTATIONS: dict[str, dict[str, bytes]] = {
    "metrics-binary": {"metrics.jsonl": bytes(range(256)) * 4},
    "metrics-utf16": {"metrics.jsonl": '{"event": "step"}\n'.encode("utf-16")},
    "metrics-garbage-line": {"metrics.jsonl": b'{"event": "start"}\n{oops\n'},
    "metrics-not-objects": {"metrics.jsonl": b"[1, 2]\n3\n"},
    "metrics-wrong-types": {"metrics.jsonl": b'{"event": 5, "trainer": [1], "metrics": "x"}\n'},
    "metrics-step-bad-metrics": {
        "metrics.jsonl": b'{"event": "step", "trainer": "sft", "k": "x", "metrics": [1]}\n'
    },
    "metrics-eval-bad": {
        "metrics.jsonl": b'{"event": "eval", "trainer": "sft", "k": 0, "j": "a", "metrics": {"x": "y"}}\n'
    },
    "metrics-deep": {"metrics.jsonl": b'{"a":' * DEEP + b"1" + b"}" * DEEP + b"\n"},
    "metrics-empty": {"metrics.jsonl": b""},
    "manifest-binary": {
        "metrics.jsonl": b'{"event": "start"}\n',
        "manifest.json": bytes(range(256)),
    },
    "manifest-list": {"metrics.jsonl": b'{"event": "start"}\n', "manifest.json": b"[1, 2, 3]"},
    "manifest-wrong-types": {
        "metrics.jsonl": b'{"event": "start"}\n',
        "manifest.json": b'{"steps": 5, "evals": "x", "order": 3}',
    },
    "manifest-truncated": {
        "metrics.jsonl": b'{"event": "start"}\n',
        "manifest.json": b'{"steps": {"sft/0": {"metr',
    },
    "metrics-dir": {"metrics.jsonl/x": b"1"},
}


def _run_dir_cases() -> list[Case]:
    cases = []
    for mname, files in RUN_DIR_MUTATIONS.items():

        def setup(sb: Path, files: dict[str, bytes] = files) -> None:
            for rel, data in files.items():
                _bytes(sb / "run" / rel, data)
            (sb / "other").mkdir()

        cases.append(
            Case(
                f"rundir-{mname}",
                "run dir",
                "report",
                ["report", "run"],
                setup,
                ["run/report.md", "run/plots"],
                ["run"],
            )
        )
        cases.append(
            Case(
                f"rundir-{mname}",
                "run dir",
                "compare",
                ["compare", "run", "other"],
                setup,
                [],
                ["run", "other"],
            )
        )
        cases.append(
            Case(
                f"rundir-{mname}-b",
                "run dir",
                "compare",
                ["compare", "other", "run"],
                setup,
                [],
                ["run", "other"],
            )
        )
    return cases


# --- model directories and batch sizes (issue 36: one line, naming the file or the flag) --------

#: --model values of a command that loads a progress model → a word the message must have
BAD_MODELS: dict[str, tuple[str, dict[str, bytes], str]] = {
    "missing-absolute": ("/nonexistent", {}, "no such model directory"),
    "missing-relative": ("does/not/exist", {}, "no such model directory"),
    "no-config": ("broken-model-dir", {"tokenizer.json": b"{}"}, "config.json"),
    "config-not-json": ("broken-model-dir", {"config.json": b'{"model_type": '}, "config.json"),
    "no-weights": (
        "broken-model-dir",
        {"config.json": b"{}", "tokenizer.json": b"{}"},
        "model.safetensors",
    ),
}


def _model_cases() -> list[Case]:
    rows = ["--data", "rows.jsonl"]
    out = ["--output-dir", "out", "--max-steps", "1"]
    loaders = {  # command → argv, its outputs, the flag naming the model (issue 36: every loader)
        "progress train": (["progress", "train", *rows, "--output-dir", "out"], ["out"], "--model"),
        "sft": (["sft", "--data", EXP, *out], ["out"], "--model"),
        "grpo": (["grpo", "--data", EXP, *out], ["out"], "--model"),
        "llm eval": (["llm", "eval", "--data", EXP, "--split", "test"], [], "--model"),
        "retrieval train": (["retrieval", "train", "--data", EXP, *out], ["out"], "--model"),
        "retrieval evaluate": (["retrieval", "evaluate", "--data", EXP], [], "--model"),
        "prove --generator": (["prove", "--data", EXP, "--output-dir", "p"], ["p"], "--generator"),
        "progress evaluate": (["progress", "evaluate", *rows], [], "--model"),
        "progress predict": (
            ["progress", "predict", "--goal", "⊢ True", "--tactic", "simp"],
            [],
            "--model",
        ),
        "prove": (
            ["prove", "--generator", "tiny", "--data", EXP, "--output-dir", "p"],
            ["p"],
            "--progress",
        ),
    }
    cases = []

    def data(sb: Path) -> None:
        _bytes(sb / "rows.jsonl", _valid("rows.jsonl"))
        _copy_export(sb)

    for cmd, (argv, outs, flag) in loaders.items():
        for mname, (model, files, needle) in BAD_MODELS.items():

            def setup(sb: Path, model: str = model, files: dict[str, bytes] = files) -> None:
                data(sb)
                for name, text in files.items():
                    _bytes(sb / model / name, text)

            full = [*argv, flag, model]
            name = cmd.split(" --")[0]
            cases.append(Case(f"model-{mname}", "models", name, full, setup, outs, [needle]))
        if cmd.startswith("progress"):
            for size in ("0", "-1"):
                full = [*argv, "--model", "tiny", "--batch_size", size]
                cases.append(Case(f"batch-{size}", "flags", cmd, full, data, outs, ["batch_size"]))
    return cases


def all_cases() -> list[Case]:
    cases = (
        _data_cases()
        + _yaml_cases()
        + _flag_cases()
        + _db_cases()
        + _path_cases()
        + _run_dir_cases()
        + _model_cases()
    )
    seen: Counter[str] = Counter()
    for c in cases:
        base = f"{c.command.replace(' ', '-')}:{c.id}"
        seen[base] += 1
        c.id = base if seen[base] == 1 else f"{base}#{seen[base]}"
    return cases


CASES = all_cases()

# ---------------------------------------------------------------------------------------------
# running a case


@contextlib.contextmanager
def _captured():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


def _snapshot(root: Path) -> dict[str, tuple]:
    snap: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            st = p.lstat()
            snap[rel] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return snap


def _inside(rel: str, outputs: list[str]) -> bool:
    return any(rel == o or rel.startswith(o.rstrip("/") + "/") for o in outputs)


def check_result(
    case: Case, code: int | None, stderr: str, before: dict, after: dict, elapsed: float
) -> list[str]:
    """The problems of one run of a case (empty: it passed)."""
    problems = []
    if "Traceback" in stderr:
        problems.append("traceback on stderr")
    if code == 0 or code is None:
        problems.append(f"exit code {code!r} (the malformed input was accepted)")
    lines = stderr.splitlines()
    if len(lines) != 1 or not lines[0].strip():
        problems.append(f"{len(lines)} lines on stderr, expected exactly one")
    if elapsed > CASE_TIMEOUT_S:
        problems.append(f"took {elapsed:.0f} s (hang?)")
    changed = sorted(
        rel
        for rel in set(before) | set(after)
        if before.get(rel) != after.get(rel) and not _inside(rel, case.outputs)
    )
    # a directory's mtime changes when an allowed output inside it appears or goes: its
    # children are compared one by one anyway
    changed = [
        r
        for r in changed
        if not (
            r in before and r in after and stat.S_ISDIR(before[r][0]) and stat.S_ISDIR(after[r][0])
        )
    ]
    if changed:
        problems.append(f"files written or removed outside the output: {changed[:5]}")
    if case.needles and lines and not any(n.lower() in stderr.lower() for n in case.needles):
        problems.append(f"the message names none of {case.needles}")
    return problems


def run_in_process(case: Case, sandbox: Path) -> tuple[int | None, str, str, float]:
    from leantrain.core.cli import main

    old = os.getcwd()
    os.chdir(sandbox)
    faulthandler.dump_traceback_later(HARD_TIMEOUT_S, exit=True)
    start = time.monotonic()
    code: int | None
    try:
        with _captured() as (out, err):
            try:
                code = main(case.argv)
            except SystemExit as e:  # argparse's own exit: its usage lines show up as >1 line
                code = e.code if isinstance(e.code, int) else 1
            except BaseException:
                import traceback

                traceback.print_exc(file=sys.stderr)
                code = None
    finally:
        faulthandler.cancel_dump_traceback_later()
        os.chdir(old)
    return code, out.getvalue(), err.getvalue(), time.monotonic() - start


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    sb = tmp_path / "sb"
    sb.mkdir()
    for var in ("LEANTRAIN_TRACEBACK", "LEANTRAIN_ALLOW_CODE", "LEANPROGRESS_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    monkeypatch.setenv("TRANSFORMERS_VERBOSITY", "error")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return sb


def test_at_least_500_cases_across_every_command():
    by_command = Counter(c.command.split(" ")[0] for c in CASES)
    assert len(CASES) >= 500, len(CASES)
    for name in (
        "export",
        "sft",
        "grpo",
        "llm",
        "retrieval",
        "progress",
        "pipeline",
        "demo",
        "report",
        "compare",
    ):
        assert by_command[name] > 0, name
    sub = Counter(c.command for c in CASES)
    for name in (
        "export import",
        "export merge",
        "export list",
        "export stats",
        "export curriculum",
        "export dump-json",
        "export delete",
        "retrieval train",
        "retrieval evaluate",
        "retrieval index",
        "retrieval retrieve",
        "progress make-data",
        "progress train",
        "progress predict",
        "progress evaluate",
        "llm eval",
    ):
        assert sub[name] > 0, name


#: Cases known to fail (expected to fail, not strict): empty since issue 9 was finished. A case
#: found failing later goes here, with its issue, until its fix lands.
KNOWN_FAILING: frozenset[str] = frozenset()


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=pytest.mark.xfail(reason="known, issue 9", strict=False))
        if c.id in KNOWN_FAILING
        else c
        for c in CASES
    ],
    ids=[c.id for c in CASES],
)
def test_in_process(case: Case, sandbox: Path):
    case.setup(sandbox)
    before = _snapshot(sandbox)
    code, _out, err, elapsed = run_in_process(case, sandbox)
    problems = check_result(case, code, err, before, _snapshot(sandbox), elapsed)
    log = os.environ.get("LEANTRAIN_FUZZ_LOG")  # one JSON line per case, for the figures
    if log:
        with open(log, "a", encoding="utf-8") as f:
            row = {
                "id": case.id,
                "cls": case.cls,
                "command": case.command,
                "argv": case.argv,
                "problems": problems,
                "stderr": err[-600:],
                "s": round(elapsed, 2),
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    assert not problems, f"{case.argv}: {problems}\nstderr:\n{err[-3000:]}"


# --- the subprocess tier: real processes, two at a time ---------------------------------------------


def _subprocess_sample(n_per_command: int = 2) -> list[Case]:
    picked: list[Case] = []
    seen: Counter[tuple[str, str]] = Counter()
    per_cmd: Counter[str] = Counter()
    for c in CASES:
        heavy = c.command.split(" ")[0] in ("sft", "grpo", "retrieval", "progress", "llm", "demo")
        limit = 1 if heavy else n_per_command
        if seen[(c.command, c.cls)] == 0 and per_cmd[c.command] < limit + (0 if heavy else 1):
            picked.append(c)
            seen[(c.command, c.cls)] += 1
            per_cmd[c.command] += 1
    return picked


SUBPROCESS_CASES = _subprocess_sample()


@pytest.mark.slow
def test_subprocess_tier(tmp_path: Path):
    assert len(SUBPROCESS_CASES) >= 30, len(SUBPROCESS_CASES)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LEANTRAIN_TRACEBACK", "LEANTRAIN_ALLOW_CODE")
    }
    env.update(TQDM_DISABLE="1", TRANSFORMERS_VERBOSITY="error", HF_HUB_OFFLINE="1")

    def one(i_case: tuple[int, Case]) -> str | None:
        i, case = i_case
        sb = tmp_path / f"c{i}"
        sb.mkdir()
        case.setup(sb)
        before = _snapshot(sb)
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "leantrain.core.cli", *case.argv],
                cwd=sb,
                env=env,
                capture_output=True,
                text=True,
                timeout=SUBPROCESS_TIMEOUT_S,
            )
            code, err = proc.returncode, proc.stderr
        except subprocess.TimeoutExpired:
            return f"{case.id}: no answer within {SUBPROCESS_TIMEOUT_S} s"
        # A hang here is "no answer within SUBPROCESS_TIMEOUT_S" (above), not the in-process
        # limit: a fresh interpreter importing torch on a loaded 2-core machine took 62-68 s to
        # print the right one-line error, which is slow, not hung.
        problems = check_result(case, code, err, before, _snapshot(sb), 0.0)
        return f"{case.id} {case.argv}: {problems}\n{err[-1500:]}" if problems else None

    _valid("lt.db")  # made before the threads start
    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = [f for f in pool.map(one, enumerate(SUBPROCESS_CASES)) if f]
    assert not failures, "\n".join(failures)


if __name__ == "__main__":  # the figures for RELIABILITY.md
    print(f"{len(CASES)} in-process cases, {len(SUBPROCESS_CASES)} also as subprocesses")
    for title, key in (("class", lambda c: c.cls), ("command", lambda c: c.command)):
        print(f"\nby {title}:")
        for k, n in sorted(Counter(map(key, CASES)).items()):
            print(f"  {k:<32} {n}")


# ---------------------------------------------------------------------------------------------
# valid variants: the same setting from a dict, a YAML file, --config and a flag gives the same
# typed value, for every trainer config (issue 24: one type system)


def _config_class(name: str) -> type:
    import importlib

    module, _, attr = name.partition(":")
    try:
        return getattr(importlib.import_module(module), attr)
    except ImportError as e:  # leantrain-verl lives in its own environment
        pytest.skip(f"{name}: {e}")


#: (config class, key, text as written in YAML / on the command line, expected typed value)
VALID_VARIANTS: list[tuple[str, str, str, object]] = [
    (cls, "learning_rate", text, value)
    for cls in (
        "leantrain.llm:SFTConfig",
        "leantrain.llm:GRPOConfig",
        "leantrain.progress:ProgressConfig",
    )
    for text, value in (("1e-5", 1e-5), ("1E-5", 1e-5), (".5", 0.5), ("5e3", 5000.0), ("3", 3.0))
] + [
    ("leantrain.llm:SFTConfig", "max_train_samples", "~", None),
    ("leantrain.llm:GRPOConfig", "max_train_samples", "null", None),
    ("leantrain.llm:SFTConfig", "max_train_samples", "7", 7),
    ("leantrain.progress:ProgressConfig", "eval_data_path", "~", None),
    ("leantrain.progress:ProgressConfig", "huber_delta", "2", 2.0),
    ("leantrain.llm.eval_config:EvalConfig", "max_eval_samples", "null", None),
    ("leantrain.llm.eval_config:EvalConfig", "max_eval_samples", "5", 5),
    ("leantrain.retrieval:RetrievalConfig", "learning_rate", "1e-5", 1e-5),
    ("leantrain.retrieval:RetrievalConfig", "ewc_gamma", ".5", 0.5),
    ("leantrain.retrieval:RetrievalConfig", "export_dir", "~", None),
    ("leantrain.retrieval.retrieval_config:DataModuleArgs", "batch_size", "4", 4),
    ("leantrain.retrieval.retrieval_config:RetrieverArgs", "temperature", "5e-2", 0.05),
    ("leantrain.retrieval.retrieval_config:EncodeArgs", "eval_batch_size", "8", 8),
    ("leantrain.retrieval.retrieval_config:RankArgs", "k", "3", 3),
    ("leantrain.retrieval.retrieval_config:RankArgs", "index", "null", None),
    ("leantrain.retrieval.retrieval_config:EvaluateArgs", "k", "1", 1),
    ("leantrain.verl.config:LeantrainSection", "eval_k", "3", 3),
    ("leantrain.verl.config:LeantrainSection", "max_eval_samples", "~", None),
]


def _python_value(text: str) -> object:
    """What an agent's JSON call would pass for ``text``: a number, or None for ~ / null."""
    if text in ("~", "null"):
        return None
    number = float(text)
    return (
        int(number)
        if number.is_integer() and "." not in text and "e" not in text.lower()
        else number
    )


@pytest.mark.parametrize(
    ("cls_name", "key", "text", "expected"),
    VALID_VARIANTS,
    ids=[f"{c.split(':')[1]}-{k}-{t}" for c, k, t, _ in VALID_VARIANTS],
)
def test_valid_variants_give_the_same_typed_value_from_every_source(
    cls_name: str, key: str, text: str, expected: object, tmp_path: Path, sandbox: Path
):
    from leantrain.core.config import config_from_dict, config_from_yaml
    from leantrain.core.parser import parse_cli

    cls = _config_class(cls_name)
    base = {"output_dir": str(tmp_path / "out")} if "output_dir" in cls.__dataclass_fields__ else {}
    path = tmp_path / "c.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in {**base, key: text}.items()))
    flags = [a for k, v in base.items() for a in (f"--{k}", v)]
    values = {
        "dict": config_from_dict(cls, {**base, key: _python_value(text)}),
        # an agent may send numbers as strings too ("~" / "null" stay strings in a dict)
        "dict of strings": None
        if text in ("~", "null")
        else config_from_dict(cls, {**base, key: text}),
        "yaml": config_from_yaml(cls, path),
        "--config": parse_cli(cls, ["--config", str(path)]),
        "flag": parse_cli(cls, [*flags, f"--{key}", text]),
    }
    got = {source: getattr(cfg, key) for source, cfg in values.items() if cfg is not None}
    assert all(v == expected and type(v) is type(expected) for v in got.values()), got


def test_valid_variants_in_a_pipeline_section(sandbox: Path):
    """A pipeline's trainer section reads the same values as the trainer's own config."""
    from leantrain.core.config import config_from_dict, load_yaml
    from leantrain.pipeline.pipeline_config import PipelineConfig

    for text, value in (("1e-5", 1e-5), ("1E-5", 1e-5), (".5", 0.5), ("5e3", 5000.0), ("3", 3.0)):
        path = sandbox / "p.yaml"
        path.write_text(
            "name: t\nsources: [sample]\ntrainers: [progress]\n"
            f"progress:\n  learning_rate: {text}\n  max_steps: 2\n  eval_data_path: ~\n"
        )
        from_yaml = config_from_dict(PipelineConfig, load_yaml(path))
        from_dict = config_from_dict(
            PipelineConfig,
            {"name": "t", "trainers": ["progress"], "progress": {"learning_rate": value}},
        )
        for cfg in (from_yaml, from_dict):
            assert cfg.progress.learning_rate == value
            assert type(cfg.progress.learning_rate) is float
        assert from_yaml.progress.eval_data_path is None
