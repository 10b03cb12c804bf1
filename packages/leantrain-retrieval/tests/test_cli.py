"""``leantrain retrieval …`` end to end, in process."""

import json
import subprocess
import sys

import pytest
from leantrain.core.cli import main
from leantrain.core.manifest import RunManifest


def test_register_is_light():
    code = (
        "import sys; from leantrain.retrieval.cli import register; register(); "
        "heavy = [m for m in ('torch', 'transformers', 'lightning') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.slow
def test_train_then_evaluate_index_and_retrieve(tmp_path, sample_export, capsys):
    run = tmp_path / "ret"
    argv = [
        "retrieval",
        "train",
        "--model",
        "tiny",
        "--data",
        str(sample_export),
        "--output-dir",
        str(run),
        "--max-steps",
        "4",
        "--tiny-d-model",
        "32",
        "--context-max-len",
        "96",
        "--premise-max-len",
        "96",
        "--accelerator",
        "cpu",
        "--devices",
        "1",
    ]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert "/retrieval/000-" in out["model_dir"] and "val_R@10" in out["final"]

    evaluate = ["retrieval", "evaluate", "--model", str(run), "--data", str(sample_export)]
    assert main([*evaluate, "--batch_size", "8"]) == 0  # issue 32's command
    table = capsys.readouterr().out
    assert "R@1" in table and "R@10" in table and "MRR" in table
    assert (
        "random" in table and "novel_premises" in table and "bm25" in table and "retriever" in table
    )
    ev = RunManifest.load(run).metrics["evaluation"]
    assert set(ev["random"]) == {"retriever", "bm25"}

    idx = tmp_path / "idx"
    assert (
        main(
            [
                "retrieval",
                "index",
                "--model",
                str(run),
                "--data",
                str(sample_export),
                "--output",
                str(idx),
            ]
        )
        == 0
    )
    assert (idx / "index.safetensors").is_file()
    assert (
        main(
            [
                "retrieval",
                "retrieve",
                "--model",
                str(run),
                "--data",
                str(sample_export),
                "--index",
                str(idx),
                "--state",
                "n : Nat\n⊢ n + 0 = n",
                "--file",
                "NatBasics/Lemmas.lean",
                "-k",
                "3",
            ]
        )
        == 0
    )
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert len(lines) == 4 and lines[-1].lstrip().startswith("3")


def test_bad_input_is_one_line_and_nonzero(tmp_path, capsys):
    assert (
        main(
            [
                "retrieval",
                "train",
                "--model",
                "tiny",
                "--data",
                str(tmp_path / "none"),
                "--output-dir",
                str(tmp_path / "r"),
            ]
        )
        != 0
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:")
    assert main(["retrieval", "train", "--max-step", "1"]) == 2
    assert "did you mean" in capsys.readouterr().err
    assert main(["retrieval", "evalute"]) == 2
    assert "evaluate" in capsys.readouterr().err
    assert (
        main(["retrieval", "evaluate", "--model", str(tmp_path / "nope"), "--data", str(tmp_path)])
        != 0
    )
    assert capsys.readouterr().err.startswith("error:")


def test_help_lists_the_config_fields(capsys):
    with pytest.raises(SystemExit) as e:
        main(["retrieval", "train", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--ewc_lambda" in out or "--ewc-lambda" in out
    assert "EWC strength" in out


@pytest.mark.parametrize("sub", ["train", "evaluate", "index", "retrieve"])
def test_shared_options_mean_the_same_in_every_subcommand(sub, tmp_path):
    """Issue 32: ``--model``, ``--data``, ``--batch_size`` / ``--batch-size`` and
    ``--allow-code`` parse in every subcommand, to the same setting where it means the same;
    ``--help`` marks what is required."""
    from leantrain.core.command import load
    from leantrain.core.parser import build_parser, parse
    from leantrain.retrieval.cli import register

    cmd = next(s for s in register()[0].subcommands if s.name == sub)
    groups = tuple(map(load, cmd.groups))
    argv = ["--model", "runs/ret", "--data", "merged", "--batch_size", "8", "--allow-code"]
    argv += {
        "index": ["--output", "idx"],
        "retrieve": ["--state", "⊢ True", "--file", "A.lean"],
    }.get(sub, [])
    values: dict = {}
    for cfg in parse(groups, argv):
        values.update(vars(cfg))
    assert values["model_name"] == "runs/ret" and values["data_path"] == "merged"
    assert values["allow_code"] is True
    # the batch of what the command does: training contexts in train, encoded texts elsewhere
    assert values["batch_size" if sub == "train" else "eval_batch_size"] == 8
    eval_argv = [{"--batch_size": "--eval-batch-size"}.get(a, a) for a in argv]
    assert next(vars(c)["eval_batch_size"] for c in parse(groups, eval_argv)) == 8
    text = build_parser(groups).format_help()
    assert ("(required)" in text) is (sub != "train")  # train: tiny model, data or a database


def test_evaluate_index_that_is_a_file_or_a_users_folder_is_one_line(tmp_path, capsys):
    """Issue 36 (5): ``retrieval evaluate --index FILE`` was a FileExistsError traceback, and a
    folder of the user's got the index files written into it; both are refused before any
    model loads, and nothing is written."""
    keep = tmp_path / "keep.txt"
    keep.write_text("precious\n")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    base = ["retrieval", "evaluate", "--model", "tiny", "--data", str(tmp_path)]
    for target, needle in ((keep, "is a file"), (mine, "holds files leantrain did not write")):
        assert main([*base, "--index", str(target)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: --index") and needle in err[0], err
    assert keep.read_text() == "precious\n" and [p.name for p in mine.iterdir()] == ["notes.txt"]
