"""``sft --mode whole`` (loss only on the proof; ``mode`` saved in ``prompt.json``) and the
contamination guard of training (``--eval-set``, the data's test split)."""

from __future__ import annotations

import json

import pytest
from leantrain.core.errors import DataError
from leantrain.llm import SFTTrainer
from leantrain.tactics.model_prompt import read_prompt
from leantrain.tactics.whole_proof import WHOLE_PROOF_SYSTEM_PROMPT


def _record(name, statement, proof):
    return {
        "url": "u", "commit": "c", "file_path": "W.lean", "full_name": name,
        "theorem_statement": statement, "start": [1, 1], "end": [1, 9],
        "formal_proof": proof, "proof_origin": "imported", "header": "import Mathlib",
    }  # fmt: skip


@pytest.fixture
def whole_export(tmp_path):
    rows = [
        _record("a", "theorem a (n : ℕ) : n + 0 = n :=", "by simp"),
        _record("b", "theorem b (p : Prop) (hp : p) : p :=", "hp"),
        _record("c", "theorem c : 2 + 2 = 4 :=", "by norm_num"),
    ]
    root = tmp_path / "w"
    (root / "random").mkdir(parents=True)
    (root / "random" / "train.json").write_text(json.dumps(rows))
    (root / "random" / "test.json").write_text(
        json.dumps([_record("t", "theorem t : 1 = 1 :=", "rfl")])
    )
    return root


def _trainer(tmp_path, **kw):
    args = {"model_name": "tiny", "output_dir": tmp_path / "run", "max_steps": 2,
            "batch_size": 3, "evaluate_each_repo": False, "save_steps": 1000, "mode": "whole"}  # fmt: skip
    return SFTTrainer(**(args | kw))


@pytest.mark.slow
def test_whole_mode_trains_on_proofs_and_saves_its_mode(whole_export, tmp_path):
    trainer = _trainer(tmp_path)
    result = trainer.train(whole_export)
    (step,) = result["per_repo"].values()
    assert step["num_examples"] == 3
    prompt = read_prompt(result["model_dir"])
    assert (prompt.mode, prompt.system_prompt) == ("whole", WHOLE_PROOF_SYSTEM_PROMPT)
    metrics = trainer.evaluate(whole_export, "test")
    assert metrics["num_examples"] == 1 and metrics["eval_loss"] > 0


def test_a_planted_benchmark_statement_is_refused_before_training(whole_export, tmp_path):
    bench = tmp_path / "minif2f.jsonl"
    row = {"name": "mathd_1", "split": "test", "header": "import Mathlib\n",
           "formal_statement": "theorem mathd_1 (p : Prop)\n    (hp : p) :   p := by\n"}  # fmt: skip
    bench.write_text(json.dumps(row) + "\n")
    with pytest.raises(DataError) as e:
        _trainer(tmp_path, eval_set=[str(bench)]).train(whole_export)
    line = e.value.one_line()
    assert "b (" in line and f"mathd_1 ({bench})" in line and "--allow-contamination" in line
    assert not (tmp_path / "run" / "sft").exists()  # nothing trained


def test_the_cli_check_reads_a_whole_proof_example(whole_export, tmp_path):
    """``leantrain sft --mode whole``'s light check accepts data without traced tactics."""
    from leantrain.llm import SFTConfig
    from leantrain.llm.runner import check_first

    whole = SFTConfig(output_dir=str(tmp_path / "o"), data_path=str(whole_export), mode="whole")
    check_first(whole)
    tactic = SFTConfig(output_dir=str(tmp_path / "o"), data_path=str(whole_export))
    with pytest.raises(DataError, match="no traced tactics"):
        check_first(tactic)


def _lb4_record(name, state, tactics):
    """A LeanDojo Benchmark 4 record: no statement, traced tactics from the initial state."""
    traced = [{"tactic": t, "state_before": state, "state_after": "no goals"} for t in tactics]
    return {"url": "u", "commit": "c", "file_path": "M.lean", "full_name": name,
            "start": [1, 1], "end": [3, 9], "traced_tactics": traced}  # fmt: skip


def test_statement_less_traced_theorems_train_from_their_initial_state(tmp_path):
    from leantrain.llm import SFTConfig
    from leantrain.llm.runner import check_first
    from leantrain.llm.training_data import whole_proof_dataset, whole_rows
    from leantrain.tactics.model_prompt import ModelPrompt
    from leantrain.tactics.whole_proof import STATE_MARKER

    root = tmp_path / "lb4"
    (root / "random").mkdir(parents=True)
    train = [_lb4_record("Nat.foo", "n : ℕ\n⊢ n + 0 = n", ["simp"]), _lb4_record("term", "", [])]
    (root / "random" / "train.json").write_text(json.dumps(train))
    cfg = SFTConfig(output_dir=str(tmp_path / "o"), data_path=str(root), mode="whole")
    check_first(cfg)
    prompt = ModelPrompt(system_prompt=WHOLE_PROOF_SYSTEM_PROMPT, mode="whole")
    [row] = whole_proof_dataset(root, "train", cfg, prompt, None)
    assert row["prompt"][1]["content"] == f"theorem Nat.foo\n{STATE_MARKER}\nn : ℕ\n⊢ n + 0 = n"
    assert row["completion"][0]["content"] == "by\n  simp"
    [rl] = whole_rows(root, "train", cfg)
    assert (rl["form"], rl["formal_statement"], rl["reference"]) == ("state", None, "by\n  simp")
    # nothing to state or prove: one line naming the split file
    (root / "random" / "train.json").write_text(json.dumps([_lb4_record("term", "", [])]))
    with pytest.raises(DataError) as e:
        whole_proof_dataset(root, "train", cfg, prompt, None)
    line = e.value.one_line()
    assert "\n" not in line and "train.json" in line and "traced initial state" in line
