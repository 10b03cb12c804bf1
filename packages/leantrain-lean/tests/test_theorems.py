"""Benchmark JSONL rows → theorems; the declaration text → name, statement, proof code."""

from __future__ import annotations

import json

import pytest
from leantrain.core.errors import DataError
from leantrain.lean import LeanTheorem, load_theorems

# DeepSeek-Prover-V1.5's miniF2F row (as its prompts and tests quote it)
DEEPSEEK = {
    "name": "mathd_algebra_478",
    "split": "test",
    "informal_prefix": "/-- The volume of a cone is given by the formula $V = \\frac{1}{3}Bh$ … Show that it is 65.-/\n",
    "formal_statement": "theorem mathd_algebra_478 (b h v : ℝ) (h₀ : 0 < b ∧ 0 < h ∧ 0 < v) (h₁ : v = 1 / 3 * (b * h))\n    (h₂ : b = 30) (h₃ : h = 13 / 2) : v = 65 := by\n",
    "goal": "b h v : ℝ\n⊢ v = 65",
    "header": "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n\n",
}
# the older miniF2F copies: "id", a term-mode ":= sorry", statement broken over lines
OLDER = {
    "id": "mathd_algebra_478",
    "split": "test",
    "formal_statement": "theorem mathd_algebra_478\n  (b h v : ℝ)\n  (h₀ : 0 < b ∧ 0 < h ∧ 0 < v)\n  (h₁ : v = 1 / 3 * (b * h))\n  (h₂ : b = 30)\n  (h₃ : h = 13 / 2) :\n  v = 65 := sorry",
    "header": "import Mathlib.Data.Real.Basic\nopen BigOperators Real Nat Topology",
}
# NuminaMath-LEAN: the imports inside formal_statement, ending in ':= by sorry'
NUMINA = {
    "uuid": "0b9b2a3c-0000-5000-8000-000000000001",
    "formal_statement": "import Mathlib\n\nopen Real\n\ntheorem algebra_9413 {x : ℝ} (hx : 2 * x + 3 = 7) : x = 2 := by sorry",
}


def write(tmp_path, rows):
    p = tmp_path / "bench.jsonl"
    p.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows)
        + "\n"
    )
    return p


def test_the_benchmark_formats_load(tmp_path):
    a, c = load_theorems(write(tmp_path, [DEEPSEEK, NUMINA]))
    (b,) = load_theorems(write(tmp_path, [OLDER]))
    assert a.name == "mathd_algebra_478" and a.split == "test"
    assert a.statement.endswith("(h₃ : h = 13 / 2) : v = 65")
    assert a.header.startswith("import Mathlib\nimport Aesop") and a.informal.startswith(
        "/-- The volume"
    )
    assert a.source.endswith("bench.jsonl:1") and c.source.endswith("bench.jsonl:2")
    assert b.statement.endswith(":\n  v = 65") and b.name == "mathd_algebra_478"
    assert c.name == "algebra_9413"
    assert c.header == "import Mathlib\n\nopen Real"
    assert c.statement == "theorem algebra_9413 {x : ℝ} (hx : 2 * x + 3 = 7) : x = 2"


def test_code_puts_a_one_line_proof_on_the_declaration_line_and_indents_a_longer_one():
    t = LeanTheorem.parse("theorem t (n : Nat) : n + 0 = n := by")
    assert t.code("simp") == "theorem t (n : Nat) : n + 0 = n := by simp"
    assert (
        t.code("intro\n  simp\nrfl")
        == "theorem t (n : Nat) : n + 0 = n := by\n  intro\n    simp\n  rfl"
    )


def test_an_example_is_checked_under_the_row_name():
    t = LeanTheorem.parse("example : 1 = 1 := by sorry", name="ex_one")
    assert t.name == "ex_one" and t.statement == "theorem ex_one : 1 = 1"


def test_docstring_and_attributes_before_the_declaration():
    t = LeanTheorem.parse("/-- doc -/\n@[simp] theorem foo.bar₁ : True")
    assert t.name == "foo.bar₁"


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ("{not json", "bench.jsonl:2: not JSON"),
        ("[1, 2]", "bench.jsonl:2: not a JSON object"),
        ({"name": "x"}, "bench.jsonl:2, field 'formal_statement': missing"),
        ({"name": "x", "formal_statement": 3}, "field 'formal_statement': expected a string"),
        ({"name": "x", "formal_statement": "lemma := by"}, "the declaration has no name"),
        ({"name": "x", "formal_statement": "theorem x : 1 = 1 := rfl"}, "holds a proof"),
        (
            {"name": "x", "formal_statement": "theorem x : 1 = 1", "header": ["import"]},
            "field 'header'",
        ),
        (DEEPSEEK, "two theorems are named 'mathd_algebra_478'"),
    ],
)
def test_a_malformed_row_is_one_line_naming_file_line_and_field(tmp_path, row, words):
    with pytest.raises(DataError) as e:
        load_theorems(write(tmp_path, [DEEPSEEK, row]))
    assert words in e.value.one_line()
    assert "\n" not in e.value.one_line()


def test_an_empty_or_missing_file_is_one_line(tmp_path):
    (tmp_path / "e.jsonl").write_text("\n")
    with pytest.raises(DataError, match="holds no theorems"):
        load_theorems(tmp_path / "e.jsonl")
    with pytest.raises(DataError, match="cannot read it"):
        load_theorems(tmp_path / "absent.jsonl")
