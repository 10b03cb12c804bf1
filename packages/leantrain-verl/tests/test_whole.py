"""``mode: whole`` on VERL (issue 35): whole-proof rows in the parquet, GRPO's whole-proof
rewards (``lean`` at level ``whole``, ``replay`` offline) through ``compute_score``, the
contamination guard before converting, and the prompt saved with the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from leantrain.core.cli import main
from leantrain.core.errors import ConfigError, LeanTrainError
from leantrain.llm.training_data import whole_rows
from leantrain.tactics.dataset_config import SplitArgs
from leantrain.tactics.whole_proof import WHOLE_PROOF_SYSTEM_PROMPT
from leantrain.verl import VERLTrainingManager
from leantrain.verl.config import ConvertArgs
from leantrain.verl.data import (
    WHOLE_DATA_SOURCE,
    WHOLE_EXTRA_COLUMNS,
    convert_to_verl,
    parquet_dataset,
    read_parquet,
    to_verl_rows,
    write_parquet,
)
from leantrain.verl.rewards import compute_score

LEAN_REPLAY = {"name": "lean", "backend": "replay"}


def _whole(**values) -> ConvertArgs:
    return ConvertArgs(data_path="d", output_dir="o", mode="whole", **values)


def _record(name: str, statement: str, proof: str) -> dict:
    """An imported theorem record (its own statement and header), as export import writes."""
    return {
        "url": "u", "commit": "c", "file_path": "W.lean", "full_name": name,
        "theorem_statement": statement, "start": [1, 1], "end": [1, 9],
        "formal_proof": proof, "proof_origin": "imported", "header": "import Mathlib",
    }  # fmt: skip


@pytest.fixture
def planted(tmp_path) -> Path:
    """An export whose test split repeats a training statement (spacing aside)."""
    root = tmp_path / "planted"
    (root / "random").mkdir(parents=True)
    train = [
        _record("a", "theorem a (n : ℕ) : n + 0 = n :=", "by simp"),
        _record("b", "theorem b (p : Prop) (hp : p) : p :=", "hp"),
    ]
    (root / "random/train.json").write_text(json.dumps(train))
    test = [_record("t", "theorem t (p : Prop)\n   (hp : p) :  p :=", "hp")]
    (root / "random/test.json").write_text(json.dumps(test))
    return root


def test_convert_whole_writes_whole_proof_rows(export_dir, tmp_path):
    files = convert_to_verl(export_dir, tmp_path / "verl", settings=_whole())
    rows = read_parquet(files["train"])
    expected = whole_rows(export_dir, "train", SplitArgs())
    assert len(rows) == len(expected) > 0
    for row, ref in zip(rows, expected):
        assert row["data_source"] == WHOLE_DATA_SOURCE
        assert row["prompt"] == ref["prompt"]
        assert row["prompt"][0] == {"role": "system", "content": WHOLE_PROOF_SYSTEM_PROMPT}
        assert row["reward_model"]["ground_truth"] == ref["reference"]
        extra = row["extra_info"]
        assert set(extra) == {*WHOLE_EXTRA_COLUMNS, "split", "index"}
        assert extra["problem"] == row["prompt"][-1]["content"]  # the statement as asked
        for key in ("reference", "form", "origin", "full_name", "file_path", "url", "commit"):
            assert extra[key] == ref[key], key
        assert extra["start"] == ref["start"] and isinstance(extra["start"], list)
        assert extra["formal_statement"] is None  # traced: Lean reads it from the project
    assert read_parquet(files["val"])[0]["data_source"] == WHOLE_DATA_SOURCE
    back = parquet_dataset(files["train"])  # parquet → RL rows, for both kinds
    assert back[0]["reference"] == expected[0]["reference"]
    assert back[0]["prompt"] == expected[0]["prompt"]


def test_rows_with_and_without_a_statement_share_one_parquet(export_dir, planted, tmp_path):
    """A traced row (formal_statement None) and an imported one (a string) round-trip."""
    traced = whole_rows(export_dir, "train", SplitArgs(), max_samples=1)
    imported = whole_rows(planted, "train", SplitArgs(), max_samples=1)
    path = write_parquet(to_verl_rows(traced + imported, "train", whole=True), tmp_path / "m.pq")
    first, second = (r["extra_info"] for r in read_parquet(path))
    assert first["formal_statement"] is None and first["header"] is None
    assert second["formal_statement"] == imported[0]["formal_statement"]
    assert second["header"] == "import Mathlib" and second["start"] == [1, 1]


def _score(row: dict, text: str, rewards) -> dict:
    return compute_score(
        row["data_source"],
        text,
        row["reward_model"]["ground_truth"],
        row["extra_info"],
        rewards=rewards,
    )


@pytest.fixture
def whole_row(export_dir, tmp_path) -> dict:
    return read_parquet(convert_to_verl(export_dir, tmp_path / "w", settings=_whole())["train"])[0]


def test_lean_replay_scores_the_reference_proof_only(small, whole_row):
    small["leantrain"].update(mode="whole", rewards=["whole_format", LEAN_REPLAY])
    rewards = VERLTrainingManager(small).section.rewards
    assert rewards == ["whole_format", {**LEAN_REPLAY, "level": "whole"}]  # the mode's level
    reference = whole_row["reward_model"]["ground_truth"]
    assert _score(whole_row, reference, rewards) == {
        "score": 2.0,
        "whole_format": 1.0,
        "lean": 1.0,
    }
    fenced = f"```lean\n{reference}\n```"  # the proof read out of a code block
    assert _score(whole_row, fenced, rewards)["lean"] == 1.0
    other = _score(whole_row, "by simp", rewards)
    assert other["lean"] == 0.0 and other["whole_format"] == 1.0  # a lower bound
    sorry = _score(whole_row, "by\n  sorry", rewards)
    assert sorry == {"score": 0.0, "whole_format": 0.0, "lean": 0.0}


def test_the_verifier_section_in_mode_whole_scores_the_same(small, whole_row):
    small["leantrain"]["mode"] = "whole"
    small["verifier"] = {"type": "replay", "weight": 2.0}
    rewards = VERLTrainingManager(small).section.rewards
    lean = {**LEAN_REPLAY, "weight": 2.0, "level": "whole"}
    assert rewards == ["whole_format", "reference_match", lean]  # the whole defaults + lean
    reference = whole_row["reward_model"]["ground_truth"]
    good = _score(whole_row, reference, rewards)
    assert good["lean"] == 1.0 and good["score"] == 4.0
    assert _score(whole_row, "by simp", rewards)["lean"] == 0.0
    assert _score(whole_row, "by sorry", rewards)["lean"] == 0.0


def test_whole_mode_defaults_and_the_proof_length_shaping(small, whole_row):
    small["leantrain"]["mode"] = "whole"
    assert VERLTrainingManager(small).section.rewards == ["whole_format", "reference_match"]
    del small["leantrain"]["mode"]
    assert VERLTrainingManager(small).section.rewards is None  # tactic: compute_score's defaults
    shaping = [{"name": "proof_length", "max_chars": 40}]
    reference = whole_row["reward_model"]["ground_truth"]
    assert _score(whole_row, "by simp", shaping)["proof_length"] == 0.0
    assert _score(whole_row, reference + "\n" + "  simp\n" * 20, shaping)["proof_length"] < 0


@pytest.mark.parametrize(
    "where",
    [
        {"leantrain": {"rewards": [{**LEAN_REPLAY, "level": "tactic"}]}},
        {"leantrain": {"rewards": [{"name": "lean_verified", "level": "proof"}]}},
        {"verifier": {"type": "repl", "level": "tactic"}},
    ],
)
def test_an_explicit_tactic_level_in_mode_whole_is_one_line(small, where):
    small["leantrain"]["mode"] = "whole"
    small["leantrain"].update(where.get("leantrain", {}))
    small.update({k: v for k, v in where.items() if k != "leantrain"})
    with pytest.raises(ConfigError, match="and mode is whole") as info:
        VERLTrainingManager(small)
    assert len(info.value.one_line().splitlines()) == 1


def test_train_dry_run_then_a_stubbed_run_on_whole_rows_and_the_saved_prompt(
    small, export_dir, tiny_dir, tmp_path, monkeypatch, capsys
):
    """``leantrain verl train --mode whole --dry-run`` checks the export's whole-proof rows and
    prints the whole-proof rewards; a run (VERL stubbed) trains on lean4_whole rows; the saved
    model's prompt.json says mode whole, as ``leantrain prove --mode whole`` reads it."""
    from leantrain.tactics.model_prompt import read_prompt

    monkeypatch.chdir(tmp_path)
    small["leantrain"] = {"model_name": str(tiny_dir)}
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(small))
    args = ["verl", "train", "--config", "small.yaml", "--data_path", str(export_dir)]
    args += ["--output_dir", "run", "--mode", "whole", "--dry-run"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "- whole_format" in out and "- reference_match" in out and "no_sorry" not in out
    assert not (tmp_path / "run").exists()

    seen: list[dict] = []

    def launcher(command, env, log_file):
        log_file.parent.mkdir(parents=True, exist_ok=True)
        if "verl.trainer.main_ppo" in command:
            work = Path(command[-2].split("=", 1)[1])
            cfg = yaml.safe_load((work / "verl_config.yaml").read_text())
            seen.extend(read_parquet(cfg["data"]["train_files"]))
            assert cfg["reward"]["custom_reward_function"]["reward_kwargs"]["rewards"] == [
                "whole_format",
                "reference_match",
            ]
            (work / "checkpoints/global_step_1/actor").mkdir(parents=True)
            log_file.write_text("step:1 - critic/score/mean:0.5\n")
        else:
            import shutil

            shutil.copytree(tiny_dir, command[command.index("--target_dir") + 1])
        return 0

    manager = VERLTrainingManager(small, mode="whole", launcher=launcher)
    manager.train(data_path=export_dir, output_dir=tmp_path / "run2", evaluate_each_repo=False)
    assert seen and {r["data_source"] for r in seen} == {WHOLE_DATA_SOURCE}
    assert len(seen) == len(whole_rows(export_dir, "train", SplitArgs()))
    manager.save(tmp_path / "saved")
    prompt = read_prompt(tmp_path / "saved")
    assert (prompt.mode, prompt.system_prompt) == ("whole", WHOLE_PROOF_SYSTEM_PROMPT)
    import leantrain.llm.evaluation

    pairs: list = []
    spy = lambda model, tok, refs, **kw: pairs.extend(refs) or {"top1_accuracy": 0.0}  # noqa: E731
    monkeypatch.setattr(leantrain.llm.evaluation, "evaluate_pairs", spy)
    manager.evaluate(export_dir, "test")  # held-out whole proofs, not tactics
    expected = whole_rows(export_dir, "test", SplitArgs())
    assert pairs == [(r["prompt"], r["reference"]) for r in expected] and pairs


def test_the_contamination_guard_runs_before_converting(planted, small, tmp_path, capsys):
    """The data's test split (or an eval_set file) in its train split: convert and the dry
    run refuse in one line, writing nothing; allow_contamination converts (warned)."""
    with pytest.raises(LeanTrainError, match="allow-contamination") as info:
        convert_to_verl(planted, tmp_path / "out", settings=_whole())
    assert "b (" in info.value.one_line() and not (tmp_path / "out").exists()
    args = ["verl", "convert", "--data_path", str(planted), "--output_dir", str(tmp_path / "o")]
    assert main([*args, "--mode", "whole"]) == 1  # a data error, as grpo's guard
    err = capsys.readouterr().err
    assert "allow-contamination" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
    small["leantrain"]["mode"] = "whole"
    with pytest.raises(LeanTrainError, match="allow-contamination"):
        VERLTrainingManager(small, output_dir=tmp_path / "run").dry_run(planted)
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(small))
    train = ["verl", "train", "--config", str(tmp_path / "small.yaml"), "--dry-run"]
    train += ["--data_path", str(planted), "--output_dir", str(tmp_path / "run")]
    assert main(train) == 1 and "allow-contamination" in capsys.readouterr().err
    assert main([*train, "--allow-contamination"]) == 0  # the flag reaches the section
    capsys.readouterr()
    files = convert_to_verl(planted, tmp_path / "ok", settings=_whole(allow_contamination=True))
    assert len(read_parquet(files["train"])) == 2
    clean = planted / "random/test.json"
    clean.write_text(json.dumps([_record("t", "theorem t : 1 = 1 :=", "rfl")]))
    convert_to_verl(planted, tmp_path / "clean", settings=_whole())  # nothing held out leaks
    bench = tmp_path / "minif2f.jsonl"
    bench.write_text(json.dumps({"name": "m", "formal_statement": "theorem m : 2 = 2 :=\n"}))
    convert_to_verl(planted, tmp_path / "clean2", settings=_whole(eval_set=[str(bench)]))
    leak = {"name": "m", "formal_statement": "theorem m (n : ℕ) :  n + 0 = n := by\n"}
    bench.write_text(json.dumps(leak))
    with pytest.raises(LeanTrainError, match="a \\("):
        convert_to_verl(planted, tmp_path / "leak", settings=_whole(eval_set=[str(bench)]))


LEAN4_EXAMPLE = Path(__file__).resolve().parents[3] / "../shared/data/lean4-example"


@pytest.mark.skipif(not LEAN4_EXAMPLE.is_dir(), reason="needs ../shared/data/lean4-example")
def test_a_real_leandojo_export_in_mode_whole(tmp_path):
    """lean4-example (a real LeanDojo export) repeats 8 training statements in its test split
    under other names: refused as by ``grpo``; allowed, its traced theorems become source-form
    rows whose reference is the proof text."""
    with pytest.raises(LeanTrainError, match="mul_assoc_my_4"):
        convert_to_verl(LEAN4_EXAMPLE, tmp_path / "no", settings=_whole())
    files = convert_to_verl(
        LEAN4_EXAMPLE, tmp_path / "w", settings=_whole(allow_contamination=True)
    )
    rows = read_parquet(files["train"])
    assert len(rows) == 12 and {r["data_source"] for r in rows} == {WHOLE_DATA_SOURCE}
    first = rows[0]
    assert first["prompt"][1]["content"].startswith("theorem mul_assoc_my_4 : ∀ a b c : Nat")
    assert first["reward_model"]["ground_truth"].startswith("by\n  intro a b c")
    extra = first["extra_info"]
    assert (extra["form"], extra["origin"], extra["start"]) == ("source", "tactics", [71, 1])
    assert extra["formal_statement"] is None and extra["file_path"] == "Lean4Example.lean"


def test_a_parquet_of_the_other_mode_is_one_line(export_dir, small, tmp_path):
    """A ready parquet of leantrain's tactic rows given to a ``mode: whole`` run (or whole-proof
    rows to a tactic run) would train silently on the wrong rows with the other mode's rewards:
    one line, naming the mode; a parquet of the run's own mode passes."""
    from leantrain.verl.data import check_data_path

    tactic = convert_to_verl(export_dir, tmp_path / "t")["train"]
    whole = convert_to_verl(export_dir, tmp_path / "w", settings=_whole())["train"]
    check_data_path(tactic)
    check_data_path(whole, _whole())
    for path, settings, mode in ((tactic, _whole(), "whole"), (whole, SplitArgs(), "tactic")):
        with pytest.raises(ConfigError, match=f"and mode is {mode}") as info:
            check_data_path(path, settings)
        assert len(info.value.one_line().splitlines()) == 1
    small["leantrain"]["mode"] = "whole"
    with pytest.raises(ConfigError, match="tactic rows"):
        VERLTrainingManager(small, output_dir=tmp_path / "run").dry_run(tactic)
