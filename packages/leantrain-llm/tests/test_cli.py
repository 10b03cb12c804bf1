import json
import subprocess
import sys

import pytest
from leantrain.core.cli import main
from leantrain.core.errors import ConfigError
from leantrain.llm import run


def test_register_imports_nothing_heavy():
    code = (
        "import sys; from leantrain.llm.cli import register; cmds = register();"
        "print([c.name for c in cmds]); print(any(m in sys.modules for m in ('torch', 'transformers', 'trl')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "['sft', 'grpo', 'llm']" and out[1] == "False"


@pytest.mark.slow
def test_cli_sft_then_eval(lean4_example, tmp_path, capsys):
    out = tmp_path / "sft"
    argv = ["sft", "--model", "tiny", "--data", str(lean4_example), "--output-dir", str(out)]
    argv += ["--max-steps", "3", "--evaluate-each-repo", "false"]
    # lean4-example's test statements are renamed copies of training ones: the guard refuses
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "occur in an evaluation set" in err and "--allow-contamination" in err
    assert not out.exists()  # refused before the run directory is made
    assert main([*argv, "--allow-contamination"]) == 0

    assert (out / "sft" / f"000-{lean4_example.name}" / "model.safetensors").is_file()
    assert json.loads(capsys.readouterr().out)["model_dir"]  # stdout is the result's JSON only
    assert (
        main(
            [
                "llm",
                "eval",
                "--model",
                str(out),
                "--data",
                str(lean4_example),
                "--split",
                "test",
                "--max-eval-samples",
                "2",
                "--eval-k",
                "1",
            ]
        )
        == 0
    )
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["split"] == "test" and metrics["num_examples"] == 2


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["grpo", "--num-generations", "3", "--output-dir", str(tmp_path)]) == 2
    assert "must be divisible by num_generations" in capsys.readouterr().err
    assert (
        main(["sft", "--data", str(tmp_path / "missing"), "--output-dir", str(tmp_path / "o")]) == 1
    )
    assert "missing: no such file or directory" in capsys.readouterr().err
    # two letters swapped is the likelier typo than a letter dropped: --modle is --model
    assert main(["sft", "--modle", "tiny"]) == 2
    assert "did you mean '--model'" in capsys.readouterr().err
    assert main(["sft", "--mod", "whole"]) == 2
    assert "did you mean '--mode'" in capsys.readouterr().err


@pytest.mark.slow
def test_run_dict_entry_point(sft_rows, lean4_example, tmp_path):
    result = run(
        {
            "algorithm": "sft",
            "model_name": "tiny",
            "data": str(lean4_example),
            "output_dir": str(tmp_path / "r"),
            "max_steps": 2,
            "evaluate_each_repo": False,
            "allow_contamination": True,  # its test statements repeat training ones
        }
    )
    assert result["final"]["global_step"] == 2
    metrics = run(
        {
            "algorithm": "eval",
            "model_name": result["output_dir"],
            "data": str(lean4_example),
            "max_eval_samples": 1,
            "eval_k": 1,
        }
    )
    assert metrics["num_examples"] == 1
    with pytest.raises(ConfigError, match="unknown algorithm"):
        run({"algorithm": "ppo"})
    with pytest.raises(ConfigError, match="unknown key 'epoch'"):
        run({"algorithm": "sft", "epoch": 2})
    with pytest.raises(ConfigError, match="'epochs' and 'num_train_epochs' are the same"):
        run({"algorithm": "sft", "epochs": 2, "num_train_epochs": 2})


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sft", "--data", "empty.json"], "empty.json: the file is empty"),
        (["grpo", "--data", "binary.json"], "binary.json: the file is binary"),
        (["sft", "--data", "empty.json", "--eval-k", "0"], "--eval_k must be at least 1"),
        (
            ["sft", "--lr", "1e-5", "--split-strategy", "x"],
            "key 'split_strategy' has the wrong type: got str 'x'",
        ),
        (["llm", "eval", "--data", "empty.json"], "empty.json: the file is empty"),
    ],
)
def test_bad_settings_and_data_fail_before_the_engines_are_imported(tmp_path, argv, message):
    """Config and data are checked first: TRL / transformers / torch are not even imported."""
    (tmp_path / "empty.json").write_bytes(b"")
    (tmp_path / "binary.json").write_bytes(bytes(range(256)) * 4)
    code = (
        "import sys; from leantrain.core.cli import main; rc = main(sys.argv[1:]); "
        "heavy = [m for m in ('trl', 'transformers', 'torch') if m in sys.modules]; "
        "print(rc, heavy)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.stdout.split("\n")[0] in ("1 []", "2 []"), (done.stdout, done.stderr)
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_empty_eval_split_turns_per_repo_evaluation_off(tmp_path):
    """``--eval_split ''`` (the spelling of the issues' and earlier runs' commands) is
    ``evaluate_each_repo`` false, from flags and from Python alike; other splits keep it on."""
    from leantrain.core.parser import parse_cli
    from leantrain.llm import SFTConfig

    cfg = parse_cli(SFTConfig, ["--eval_split", "", "--output-dir", str(tmp_path)])
    assert (cfg.evaluate_each_repo, cfg.eval_split) == (False, "val")
    assert SFTConfig(eval_split="").evaluate_each_repo is False
    on = parse_cli(SFTConfig, ["--eval_split", "test", "--output-dir", str(tmp_path)])
    assert (on.evaluate_each_repo, on.eval_split) == (True, "test")
    with pytest.raises(ConfigError, match="eval_split"):
        parse_cli(SFTConfig, ["--eval_split", "tset", "--output-dir", str(tmp_path)])
