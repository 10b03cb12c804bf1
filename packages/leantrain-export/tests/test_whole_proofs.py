"""Whole-proof sources (issue 35): DeepSeek-Prover / miniF2F JSONL, NuminaMath-LEAN (JSONL and
parquet), Lean Workbook JSON and ``prove``'s ``proofs.json`` import as pseudo-repositories whose
merged export carries ``formal_proof`` / ``proof_origin`` / ``difficulty``; a malformed row is
one line naming file, row and field, and nothing of the file is kept."""

from __future__ import annotations

import json
import sys

import pytest
from leantrain.core.errors import DataError, MissingDependencyError
from leantrain.export.database import Database
from leantrain.export.export_merged import STATEMENT_HASHES, export_merged_data

HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen Real\n\n"

DEEPSEEK = [  # DeepSeek-Prover-V1: the statement ends ':= by', the proof continues it
    {
        "name": "mathd_algebra_10",
        "split": "valid",
        "informal_prefix": "/-- Show that 2 + 2 = 4. -/\n",
        "formal_statement": "theorem mathd_algebra_10 : (2 : ℝ) + 2 = 4 := by\n",
        "goal": "⊢ (2 : ℝ) + 2 = 4",
        "header": HEADER,
        "formal_proof": "  norm_num",
    },
    {  # a benchmark row without a proof: a statement only
        "name": "amc12_2000_p5",
        "split": "test",
        "formal_statement": "theorem amc12_2000_p5 (x : ℝ) (h : x = 1) : x + 1 = 2 := by\n",
        "header": HEADER,
    },
]

NUMINA = [
    {
        "uuid": "7a1b",
        "formal_statement": "import Mathlib\n\ntheorem algebra_1 (a : ℕ) (h : a = 2) : a * a = 4 "
        ":= by sorry",
        "formal_proof": "import Mathlib\n\ntheorem algebra_1 (a : ℕ) (h : a = 2) : a * a = 4 := by\n"
        "  subst h\n  rfl",
        "formal_ground_truth": "",
        "ground_truth_type": "statement",
        "rl_data": {"n_proofs": 4, "n_correct_proofs": 1, "win_rate": 0.25},
    },
    {
        "uuid": "9c2d",
        "formal_statement": "import Mathlib\n\ntheorem number_theory_2 : 7 ∣ 49 := by sorry",
        "formal_proof": "",
        "formal_ground_truth": "import Mathlib\n\ntheorem number_theory_2 : 7 ∣ 49 := by\n  decide",
        "ground_truth_type": "complete",
        "rl_data": {"n_proofs": 0, "n_correct_proofs": 0, "win_rate": None},
    },
]

WORKBOOK = [
    {
        "natural_language_statement": "Prove that a^2 + b^2 >= 2ab",
        "answer": "",
        "tags": ["inequality"],
        "formal_statement": "theorem lean_workbook_1 (a b : ℝ) : a ^ 2 + b ^ 2 ≥ 2 * a * b := by",
        "split": "lean_workbook",
        "proof": ["nlinarith [sq_nonneg (a - b)]"],
        "id": "lean_workbook_1",
    },
    {
        "natural_language_statement": "unproved",
        "formal_statement": "theorem lean_workbook_2 (x : ℝ) : x ^ 2 ≥ 0 := by",
        "split": "lean_workbook",
        "proof": [],
        "id": "lean_workbook_2",
    },
]


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def _import_and_export(tmp_path, *files):
    with Database(tmp_path / "w.db") as db:
        ids = []
        for f in files:
            ids += db.import_path(f)
        export_merged_data(db, None, tmp_path / "out")
    records = {}
    for split in ("train", "val", "test"):
        for r in json.loads((tmp_path / "out" / "random" / f"{split}.json").read_text()):
            records[r["full_name"]] = r
    return ids, records


def test_deepseek_rows_import_with_their_proofs(tmp_path):
    src = _jsonl(tmp_path / "minif2f.jsonl", DEEPSEEK)
    ids, records = _import_and_export(tmp_path, src)
    assert len(ids) == 1 and ids[0].startswith("minif2f.jsonl@")
    proved = records["mathd_algebra_10"]
    assert proved["theorem_statement"] == "theorem mathd_algebra_10 : (2 : ℝ) + 2 = 4 :="
    assert proved["formal_proof"] == "by\n  norm_num"
    assert proved["proof_origin"] == "imported" and proved["split"] == "valid"
    assert proved["header"].startswith("import Mathlib\nimport Aesop")
    assert proved["start"] == [1, 1] and proved["traced_tactics"] == []
    bare = records["amc12_2000_p5"]
    assert "formal_proof" not in bare and "proof_origin" not in bare
    hashes = json.loads((tmp_path / "out" / STATEMENT_HASHES).read_text())["splits"]
    names = [n for split in ("train", "val", "test") for _, n in hashes[f"random/{split}"]]
    assert sorted(names) == ["amc12_2000_p5", "mathd_algebra_10"]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_numina_rows_give_proofs_and_difficulty(tmp_path, fmt):
    if fmt == "parquet":
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        src = tmp_path / "numina.parquet"
        pq.write_table(pa.Table.from_pylist(NUMINA), src)
    else:
        src = _jsonl(tmp_path / "numina.jsonl", NUMINA)
    _, records = _import_and_export(tmp_path, src)
    first = records["7a1b"]
    assert first["theorem_statement"] == "theorem algebra_1 (a : ℕ) (h : a = 2) : a * a = 4 :="
    assert first["formal_proof"] == "by\n  subst h\n  rfl" and first["header"] == "import Mathlib"
    assert first["difficulty"] == 0.75
    second = records["9c2d"]  # the human proof, no win rate
    assert second["formal_proof"] == "by\n  decide" and "difficulty" not in second


def test_lean_workbook_json_takes_the_first_proof(tmp_path):
    src = tmp_path / "lean_workbook.json"
    src.write_text(json.dumps(WORKBOOK))
    _, records = _import_and_export(tmp_path, src)
    assert records["lean_workbook_1"]["formal_proof"] == "by\n  nlinarith [sq_nonneg (a - b)]"
    assert "formal_proof" not in records["lean_workbook_2"]
    with Database(tmp_path / "w.db") as db:
        assert db.stats()["proven_theorems"] == 1  # the unproved statement is not 'proven'


def test_proofs_json_of_prove_keeps_tactics_and_gets_the_whole_proof(tmp_path):
    run = tmp_path / "pw"
    run.mkdir()
    found = {
        "url": "https://github.com/x/y", "commit": "abc", "file_path": "Y.lean",
        "full_name": "y_add", "theorem_statement": "theorem y_add (n : ℕ) : n + 0 = n :=",
        "start": [3, 1], "end": [4, 10],
        "traced_tactics": [{"tactic": "simp", "annotated_tactic": ["simp", []],
                            "state_before": "n : ℕ\n⊢ n + 0 = n", "state_after": "no goals"}],
    }  # fmt: skip
    (run / "proofs.json").write_text(json.dumps([found]))
    ids, records = _import_and_export(tmp_path, run / "proofs.json")
    assert ids[0].startswith("pw/proofs.json@")
    rec = records["y_add"]
    assert rec["formal_proof"] == "by\n  simp" and rec["proof_origin"] == "found"
    assert rec["source_repo"] == "https://github.com/x/y@abc"
    assert [t["state_before"] for t in rec["traced_tactics"]] == ["n : ℕ\n⊢ n + 0 = n"]


def test_reimporting_a_file_replaces_its_pseudo_repository(tmp_path):
    src = _jsonl(tmp_path / "minif2f.jsonl", DEEPSEEK)
    with Database(tmp_path / "w.db") as db:
        first = db.import_path(src)
        assert db.import_path(src) == first and db.stats()["theorems"] == 2


@pytest.mark.parametrize(
    ("rows", "named"),
    [
        ([DEEPSEEK[0], {"name": "x", "header": ""}], ["minif2f.jsonl:2", "formal_statement"]),
        ([DEEPSEEK[0], {**DEEPSEEK[1], "formal_proof": 3}], [":2", "formal_proof", "got int"]),
        ([{**NUMINA[0], "rl_data": {"win_rate": 1.5}}], [":1", "rl_data.win_rate", "[0, 1]"]),
        ([{**WORKBOOK[0], "proof": [1]}], [":1", "field 'proof'"]),
        ([DEEPSEEK[0], {**DEEPSEEK[1], "formal_statement": "lemma : True"}], [":2"]),
    ],
)
def test_a_malformed_row_is_one_line_and_nothing_is_kept(tmp_path, rows, named):
    src = _jsonl(tmp_path / "minif2f.jsonl", rows)
    with Database(tmp_path / "w.db") as db:
        with pytest.raises(DataError) as e:
            db.import_path(src)
        line = e.value.one_line()
        assert "\n" not in line and str(src) in line, line
        assert all(n in line for n in named), line
        assert db.stats()["theorems"] == 0 and db.stats()["repositories"] == 0


def test_parquet_without_pyarrow_is_one_line(tmp_path, monkeypatch):
    src = tmp_path / "numina.parquet"
    src.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with Database(tmp_path / "w.db") as db, pytest.raises(MissingDependencyError) as e:
        db.import_path(src)
    assert "leantrain-export[parquet]" in e.value.one_line() and str(src) in e.value.one_line()


def test_a_damaged_parquet_is_one_line(tmp_path):
    pytest.importorskip("pyarrow")
    src = tmp_path / "numina.parquet"
    src.write_bytes(b"not parquet at all")
    with Database(tmp_path / "w.db") as db, pytest.raises(DataError) as e:
        db.import_path(src)
    assert "not a readable parquet file" in e.value.one_line()


LEAN_FILE = """import Mathlib
open Nat

/-- a doc comment -/
theorem add_zero' (n : ℕ) : n + 0 = n := by
  simp

theorem uses_sorry : 1 = 2 := by
  sorry

theorem term_proof (p : Prop) (hp : p) : p := hp
"""


def _span(name, text=LEAN_FILE):
    """LeanDojo's [line, column] span (1-based, end exclusive) of the declaration of ``name``."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(f"theorem {name} "))
    last = first
    while last + 1 < len(lines) and lines[last + 1].startswith("  "):
        last += 1
    return [first + 1, 1], [last + 1, len(lines[last]) + 1]


def test_proofs_are_read_from_the_lean_sources(tmp_path):
    checkout = tmp_path / "repo"
    checkout.mkdir()
    (checkout / "A.lean").write_text(LEAN_FILE)
    records = []
    for name in ("add_zero'", "uses_sorry", "term_proof", "gone"):
        start, end = _span(name) if name != "gone" else ([1, 1], [1, 5])
        records.append({
            "url": "https://github.com/o/r", "commit": "c1", "full_name": name,
            "file_path": "A.lean" if name != "gone" else "Missing.lean", "start": start, "end": end,
            "traced_tactics": [{"tactic": "simp", "annotated_tactic": ["simp", []],
                                "state_before": "⊢ p", "state_after": "no goals"}],
        })  # fmt: skip
    (tmp_path / "split.json").write_text(json.dumps(records))
    with Database(tmp_path / "w.db") as db:
        db.import_path(tmp_path / "split.json", lean_sources=checkout)
        export_merged_data(db, None, tmp_path / "out")
    got = {}
    for split in ("train", "val", "test"):
        for r in json.loads((tmp_path / "out" / "random" / f"{split}.json").read_text()):
            got[r["full_name"]] = r
    first = got["add_zero'"]
    assert first["theorem_statement"] == "theorem add_zero' (n : ℕ) : n + 0 = n :="
    assert (first["formal_proof"], first["proof_origin"]) == ("by\n  simp", "source")
    assert first["header"] == "import Mathlib\nopen Nat"
    assert got["term_proof"]["formal_proof"] == "hp"
    for name in ("uses_sorry", "gone"):  # a sorry proof, a missing file: the traced tactics
        assert "formal_proof" not in got[name] and "proof_origin" not in got[name]
    assert len(got["gone"]["traced_tactics"]) == 1
    with Database(tmp_path / "w.db") as db, pytest.raises(DataError, match="no such directory"):
        db.import_path(tmp_path / "split.json", lean_sources=tmp_path / "nowhere")


def test_statement_less_traced_theorems_record_the_hash_of_their_initial_state(tmp_path):
    """LeanDojo Benchmark 4 records have no statement: the export hashes the initial state
    (the form their whole-proof prompt shows), in a domain of its own, under ``states``."""
    from leantrain.core.lean_text import state_hash

    def record(name, state):
        return {
            "url": "https://github.com/x/y", "commit": "c0", "file_path": "M.lean",
            "full_name": name, "start": [1, 1], "end": [2, 9],
            "traced_tactics": [{"tactic": "simp", "annotated_tactic": ["simp", []],
                                "state_before": state, "state_after": "no goals"}],
        }  # fmt: skip

    src = tmp_path / "lb4.json"
    src.write_text(json.dumps([record("A.a", "n : ℕ\n⊢ n + 0 = n"), record("A.b", "⊢ True")]))
    _, records = _import_and_export(tmp_path, src)
    assert set(records) == {"A.a", "A.b"}
    saved = json.loads((tmp_path / "out" / STATEMENT_HASHES).read_text())
    assert all(rows == [] for rows in saved["splits"].values())  # no statement text
    states = {
        n: h for split in ("train", "val", "test") for h, n in saved["states"][f"random/{split}"]
    }
    assert states == {"A.a": state_hash("n : ℕ\n⊢ n + 0 = n"), "A.b": state_hash("⊢ True")}


def test_the_curriculum_classes_imported_theorems_by_their_difficulty(tmp_path):
    """NuminaMath's ``1 - win_rate`` (no traced steps) decides Easy / Medium / Hard at fixed
    thirds: the file of often-solved problems comes first, though its name sorts last."""
    from leantrain.export.curriculum import order_repositories

    def rows(rates, prefix):
        return [
            {
                "uuid": f"{prefix}{i}",
                "formal_statement": f"theorem {prefix}_{i} : {i} = {i} := by sorry",
                "formal_proof": f"theorem {prefix}_{i} : {i} = {i} := by\n  rfl",
                "ground_truth_type": "statement",
                "rl_data": {"n_proofs": 4, "n_correct_proofs": 1, "win_rate": rate},
            }
            for i, rate in enumerate(rates)
        ]

    with Database(tmp_path / "w.db") as db:
        db.import_path(_jsonl(tmp_path / "a_hard.jsonl", rows([0.1, 0.2, 0.5], "h")))
        db.import_path(_jsonl(tmp_path / "b_easy.jsonl", rows([0.9, 0.8, 0.5, None], "e")))
        order = order_repositories(db)
    assert [d.repo_id.split("@")[0] for d in order] == ["b_easy.jsonl", "a_hard.jsonl"]
    easy, hard = order
    # difficulties 0.1, 0.2 → Easy, 0.5 → Medium; the row without a rate is dealt (Hard here)
    assert (easy.easy, easy.medium, easy.hard) == (2, 1, 1)
    assert (hard.easy, hard.medium, hard.hard) == (0, 1, 2)
