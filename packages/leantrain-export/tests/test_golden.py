"""Golden test: the full export of a fixed input hashes to a recorded value.

It pins what ``export_merged_data`` writes — both split strategies, ``corpus.jsonl``,
``traced_files.jsonl``, ``metadata.json`` (less its creation time and output path) — so that
speed work on the importer and the exporter cannot change a single value or the order of
anything. The hash is over the *parsed* JSON of each file, re-serialised with the keys in
the order the file has them: whitespace between tokens may change, values and order may not.

The input mixes the synthetic generator (3 repositories that share corpus files) with hand
written edge cases: unknown extra fields on theorems, tactics and premises, tactics without an
annotation, dropped tactics (``no goals`` states, focusing dots), theorems duplicated across
repositories (the newest wins), sorry proofs, a repository without ``corpus.jsonl`` (imports
unknown), a ``dynamic_database.json`` with ``"Pos(l, c)"`` strings, and non-ASCII text.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from export_helpers import tactic, theorem, write_export
from leantrain.export import Database, export_merged_data

# Recorded with leantrain-export before the speed work of issue 14 (see CHANGELOG).
GOLDEN = {
    "all": "12f89079e35b44846695ad6c92f0deff50ba7ad083faf72199a23e58c81c042e",
    "subset": "220c7952fcb2be9258fa81d74e024896024881cd48cf65b95cc93f37573bdc80",
    "no_drop": "04be42677e0397508daabed4c4a6d0949c58218a55ed3b14375833590138d66c",
}


def _canonical(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    data = json.loads(text)
    if path.name == "metadata.json":
        data.pop("creation_time")
        data["leantrain"].pop("out_dir")
    return data


def export_digest(out: Path) -> str:
    """SHA-256 over every file of an export (parsed JSON, key order kept), by relative path;
    ``statement_hashes.json`` (added by issue 35, after the hashes were recorded) is left out."""
    h = hashlib.sha256()
    for p in sorted(out.rglob("*")):
        if p.is_file() and p.name not in (".leantrain", "statement_hashes.json"):
            h.update(str(p.relative_to(out)).encode() + b"\0")
            h.update(json.dumps(_canonical(p), ensure_ascii=False).encode() + b"\0")
    return h.hexdigest()


def _edge_sources(root: Path) -> list[Path]:
    """Hand-written sources that exercise every branch of the import and the export."""
    url_a, url_b = "https://github.com/o/älpha", "https://github.com/o/beta"
    odd = tactic("simp [Foo.bar, Nat.add_comm]", ["Foo.bar", "Nat.add_comm"], before="x : ℕ\n⊢ p")
    odd["extra_tactic_field"] = {"nested": [1, 2.5, None, True]}
    unannotated = {"tactic": "omega", "state_before": "⊢ 1 = 1", "state_after": "no goals"}
    done = tactic("rfl", before="no goals")
    dot = tactic("· exact Foo.bar", ["Foo.bar"])
    thm_a = theorem(url_a, "c1", "A.t₁", [odd, unannotated, done, dot])
    thm_a["extra_theorem_field"] = "kept ✓"
    sorry = theorem(url_a, "c1", "A.s", [tactic("sorry")], line=20)
    empty = theorem(url_a, "c1", "A.term", [], line=40)
    shared_old = theorem(url_a, "c1", "Shared.t", [tactic("simp")], file="Lib/Shared.lean")
    a = write_export(root / "a", url_a, "c1", [thm_a, sorry, empty, shared_old])  # no corpus
    corpus_b = [
        {"path": "Lib/Defs.lean", "imports": [], "premises": [
            {"full_name": "Foo.bar", "code": "theorem Foo.bar : p", "start": [1, 1],
             "end": [1, 9], "kind": "theorem", "extra_premise_field": "x"},
            {"full_name": "Foo.baz", "code": "def Foo.baz := 1", "start": [3, 1], "end": [3, 16]},
        ]},
        {"path": "Lib/Main.lean", "imports": ["Lib/Defs.lean"], "premises": []},
    ]  # fmt: skip
    shared_new = theorem(url_b, "c2", "Shared.t", [tactic("omega")], file="Lib/Shared.lean")
    thm_b = theorem(url_b, "c2", "B.t", [tactic("exact Foo.baz", ["Foo.baz"])], line=7)
    b = write_export(
        root / "b", url_b, "c2", [thm_b, shared_new], date="2024-06-01T00:00:00", corpus=corpus_b
    )
    dyn = {
        "repositories": [
            {
                "url": "https://github.com/o/dyn",
                "commit": "c3",
                "name": "dyn",
                "metadata": {"date_processed": "2024-03-01T00:00:00"},
                "proven_theorems": [
                    {
                        "file_path": "Dyn/A.lean",
                        "full_name": "Dyn.a",
                        "start": "Pos(1, 1)",
                        "end": "Pos(2, 5)",
                        "traced_tactics": [
                            {
                                "tactic": "exact Foo.bar",
                                "annotated_tactic": [
                                    "exact <a>Foo.bar</a>",
                                    [{"full_name": "Foo.bar", "def_path": "Lib/Defs.lean",
                                      "def_pos": "Pos(1, 1)", "def_end_pos": "Pos(1, 9)"}],
                                ],
                                "state_before": "⊢ p",
                                "state_after": "no goals",
                            }
                        ],
                    }
                ],
                "sorry_theorems_unproved": [
                    {"file_path": "Dyn/A.lean", "full_name": "Dyn.b", "start": [4, 1],
                     "end": [5, 9], "traced_tactics": []}
                ],
                "premise_files": [
                    {"path": "Dyn/A.lean", "imports": ["Lib/Defs.lean"], "premises": [
                        {"full_name": "Dyn.a", "code": "theorem Dyn.a", "start": "Pos(1, 1)",
                         "end": "Pos(2, 5)"}]}
                ],
                "files_traced": ["Dyn/A.lean"],
            }
        ]
    }  # fmt: skip
    (root / "dyn.json").write_text(json.dumps(dyn, ensure_ascii=False), encoding="utf-8")
    return [a, b, root / "dyn.json"]


@pytest.fixture(scope="module")
def golden_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from leantrain_tools.synthetic import generate_synthetic

    root = tmp_path_factory.mktemp("golden")
    synth = generate_synthetic(root / "synth", 300, n_repos=3, seed=7)
    db_path = root / "lt.db"
    with Database(db_path) as db:
        for src in [*synth, *_edge_sources(root / "edge")]:
            db.import_path(src)
    return db_path


@pytest.mark.parametrize(
    ("case", "repos", "overrides"),
    [
        ("all", None, {}),
        ("subset", [1, 3, 4], {"seed": 5, "val_fraction": 0.25, "test_fraction": 0.15}),
        ("no_drop", None, {"drop_tactics": False, "novel_premise_rate": 0.3}),
    ],
)
def test_export_output_matches_the_golden_hash(golden_db, tmp_path, case, repos, overrides):
    with Database(golden_db) as db:
        ids = [r.id for r in db.list_repositories()]
        res = export_merged_data(
            db, None if repos is None else [ids[i] for i in repos], tmp_path / case, **overrides
        )
    assert res.num_theorems > 0
    assert export_digest(tmp_path / case) == GOLDEN[case]
