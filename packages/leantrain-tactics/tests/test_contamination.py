"""The contamination guard: a planted benchmark statement (renamed, re-spaced, with its header)
in the training data is found and refused, naming it; allowed, it is one warning."""

from __future__ import annotations

import json
import logging

import pytest
from leantrain.core.errors import DataError
from leantrain.tactics.contamination import (
    check_contamination,
    guard_training_data,
    read_statements,
)

MINIF2F = [
    {
        "name": "mathd_algebra_478",
        "split": "test",
        "header": "import Mathlib\nopen Real\n",
        "formal_statement": "theorem mathd_algebra_478 (b h v : ℝ) (h₀ : 0 < b ∧ 0 < h ∧ 0 < v)"
        " (h₁ : v = 1 / 3 * (b * h)) (h₂ : b = 30) (h₃ : h = 13 / 2) : v = 65 := by\n",
    },
    {
        "name": "amc12_2000_p1",
        "split": "test",
        "formal_statement": "theorem amc12_2000_p1 : 1 = 1 := by",
    },
]


def _record(name, statement, make):
    record = make.theorem(name, [make.traced("norm_num", "⊢ p")])
    record["theorem_statement"] = statement
    return record


@pytest.fixture
def export(tmp_path, make):
    planted = (
        "theorem my_volume   (b h v : ℝ)\n  (h₀ : 0 < b ∧ 0 < h ∧ 0 < v) -- a comment\n"
        "  (h₁ : v = 1 / 3 * (b * h)) (h₂ : b = 30) (h₃ : h = 13 / 2) :\n    v = 65 :="
    )
    train = [
        _record("clean", "theorem clean (n : ℕ) : n + 0 = n :=", make),
        _record("my_volume", planted, make),
    ]
    root = tmp_path / "export"
    (root / "random").mkdir(parents=True)
    (root / "random" / "train.json").write_text(json.dumps(train))
    (root / "random" / "test.json").write_text(
        json.dumps([_record("held", "theorem held : 2 = 2 :=", make)])
    )
    bench = tmp_path / "minif2f.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in MINIF2F))
    return root, bench


def test_a_renamed_respaced_benchmark_statement_is_refused_naming_it(export):
    root, bench = export
    with pytest.raises(DataError) as e:
        guard_training_data(root, eval_sets=[bench])
    line = e.value.one_line()
    assert "\n" not in line and "1 training statement(s)" in line
    assert "my_volume" in line and f"mathd_algebra_478 ({bench})" in line
    assert "--allow-contamination" in line
    assert guard_training_data(root) == []  # the test split alone: clean


def test_allowed_contamination_is_one_warning(export, caplog):
    root, bench = export
    with caplog.at_level(logging.WARNING, logger="leantrain.tactics"):
        pairs = guard_training_data(root, eval_sets=[bench], allow=True)
    assert [(t.name, h.name) for t, h in pairs] == [("my_volume", "mathd_algebra_478")]
    assert "--allow-contamination" in caplog.text


def test_the_runs_test_split_is_held_out(export, make):
    root, _ = export
    train = json.loads((root / "random" / "train.json").read_text())
    train.append(_record("copy_of_held", "theorem copy_of_held :\n 2 = 2 := by", make))
    (root / "random" / "train.json").write_text(json.dumps(train))
    with pytest.raises(DataError, match=r"copy_of_held .* = held "):
        guard_training_data(root)


def test_the_refusal_names_only_the_first_few(make):
    from leantrain.tactics.contamination import Statement

    held = [Statement(f"b{i}", f"theorem b{i} : {i} = {i}", "bench.jsonl") for i in range(5)]
    train = [Statement(f"t{i}", f"lemma t{i} : {i} = {i} := by", "train.json") for i in range(5)]
    with pytest.raises(DataError) as e:
        check_contamination(train, held)
    line = e.value.one_line()
    assert "5 training statement(s)" in line and "t2 (train.json) = b2" in line
    assert "t3" not in line and "and 2 more" in line


def test_a_malformed_eval_set_is_one_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "a", "formal_statement": "theorem a : True"}\n{"name": "b"}\n')
    with pytest.raises(DataError) as e:
        read_statements(bad)
    line = e.value.one_line()
    assert str(bad) in line and "record 1" in line and "formal_statement" in line
    with pytest.raises(DataError, match="no such evaluation-set file"):
        read_statements(tmp_path / "missing.jsonl")
    proofs = tmp_path / "proofs.json"  # a JSON array of theorem records
    proofs.write_text(json.dumps([{"full_name": "x", "theorem_statement": "theorem x : True"}]))
    assert [s.name for s in read_statements(proofs)] == ["x"]


def _lb4_export(tmp_path, make, train_states, test_states):
    """An export of statement-less records (as LeanDojo Benchmark 4's): only initial states."""

    def records(states, prefix):
        out = []
        for i, state in enumerate(states):
            record = make.theorem(f"{prefix}{i}", [make.traced("simp", state)])
            record["theorem_statement"] = None
            out.append(record)
        return out

    root = tmp_path / "lb4"
    (root / "random").mkdir(parents=True)
    for split, states, prefix in (("train", train_states, "t"), ("test", test_states, "h")):
        (root / "random" / f"{split}.json").write_text(json.dumps(records(states, prefix)))
    return root


def test_statement_less_theorems_are_compared_by_their_initial_state(tmp_path, make, caplog):
    root = _lb4_export(
        tmp_path,
        make,
        ["n : ℕ\n⊢ n + 0 = n", "a b : ℕ\n⊢ a * b = b * a"],
        ["a b : ℕ ⊢ a * b = b * a"],
    )
    with pytest.raises(DataError) as e:  # the same state, re-spaced, in train and test
        guard_training_data(root)
    assert "1 training statement(s)" in e.value.one_line() and "t1 (" in e.value.one_line()
    # a benchmark statement of the same goal is a different form: never matched (needs Lean)
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"name": "b", "formal_statement": "theorem b (n : ℕ) : n + 0 = n"}))
    clean = _lb4_export(tmp_path / "c", make, ["n : ℕ\n⊢ n + 0 = n"], ["⊢ True"])
    with caplog.at_level(logging.INFO, logger="leantrain.tactics"):
        assert guard_training_data(clean, eval_sets=[bench]) == []
    assert "1 training theorems are stated only by their initial proof state" in caplog.text
    # an eval set of LeanDojo records without statements is read by its states
    held = tmp_path / "lb4_test.json"
    held.write_text((root / "random" / "test.json").read_text())
    [s] = read_statements(held)
    assert (s.name, s.form) == ("h0", "state")
    assert [t.name for t, _ in guard_training_data(clean, eval_sets=[held], allow=True)] == []
