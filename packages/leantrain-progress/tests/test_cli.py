"""``leantrain progress …`` end to end, in process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from leantrain.core.cli import main
from progress_helpers import tactic, theorem, write_json, write_jsonl


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["progress", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_make_data_train_evaluate_predict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = tmp_path / "export"
    thms = [
        theorem(f"t{i}", [tactic(f"step{j}", f"⊢ g{i} {j}") for j in range(1 + i % 3)])
        for i in range(12)
    ]
    write_json(export / "random" / "train.json", thms)
    rows = tmp_path / "rows.jsonl"
    code, out, _ = _run(capsys, "make-data", "--data", str(export), "--out", str(rows))
    assert code == 0 and json.loads(out)["rows"] == 24
    assert len(rows.read_text().splitlines()) == 24

    model = tmp_path / "prog"
    code, out, _ = _run(
        capsys,
        "train",
        "--model",
        "tiny",
        "--data",
        str(rows),
        "--output-dir",
        str(model),
        "--epochs",
        "1",
        "--max-length",
        "64",
        "--tiny-hidden-size",
        "32",
        "--tiny-vocab-size",
        "120",
    )
    assert code == 0, out
    assert "mse" in json.loads(out[out.index("{") :])["metrics"]

    code, out, _ = _run(capsys, "evaluate", "--model", str(model), "--data", str(rows))
    assert code == 0 and json.loads(out)["rows"] == 24

    code, out, _ = _run(
        capsys,
        "predict",
        "--model",
        str(model),
        "--goal",
        "n : ℕ\\n⊢ n + 0 = n",
        "--tactic",
        "simp",
        "--tactic",
        "omega",
    )
    ranked = json.loads(out)
    assert code == 0 and {r["tactic"] for r in ranked} == {"simp", "omega"}
    assert ranked[0]["steps_remaining"] <= ranked[1]["steps_remaining"]


def test_bad_inputs_give_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write_jsonl(
        tmp_path / "bad.jsonl", [{"goal": "⊢ p", "tactic": "simp", "steps_remaining": -1}]
    )
    code, _, err = _run(
        capsys, "train", "--model", "tiny", "--data", str(bad), "--output-dir", str(tmp_path / "o")
    )
    assert (
        code == 1 and err.startswith("error: ") and "record 0" in err and "steps_remaining" in err
    )
    assert len(err.strip().splitlines()) == 1
    code, _, err = _run(capsys, "train", "--modle", "tiny")
    assert code == 2 and "did you mean '--model'" in err
    code, _, err = _run(
        capsys, "predict", "--model", str(tmp_path), "--goal", "⊢ p", "--tactic", "simp"
    )
    assert code == 1 and "not a trained progress model" in err
    code, _, err = _run(
        capsys, "make-data", "--data", str(tmp_path / "missing"), "--out", str(tmp_path / "r.jsonl")
    )
    assert code == 1 and "not found" in err and not (tmp_path / "r.jsonl").exists()
    code, _, err = _run(capsys, "trian")
    assert code == 2 and "did you mean 'train'" in err


def test_help_lists_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--help")
    assert code == 0 and all(c in out for c in ("make-data", "train", "evaluate", "predict"))
    with pytest.raises(SystemExit) as exit_:
        main(["progress", "train", "--help"])
    assert exit_.value.code == 0
    assert "--learning-rate" in capsys.readouterr().out.replace("_", "-")


def test_register_module_imports_nothing_heavy() -> None:
    code = "import sys, leantrain.progress.cli as c; c.register(); print(sorted(m for m in ('torch','transformers','datasets') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.slow
def test_cli_evaluate_matches_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], trained: dict[str, Any]
) -> None:
    code, out, _ = _run(
        capsys, "evaluate", "--model", str(trained["dir"]), "--data", str(trained["eval_path"])
    )
    from leantrain.progress import ProgressPredictor

    assert code == 0
    assert json.loads(out)["mae"] == pytest.approx(
        ProgressPredictor.from_pretrained(trained["dir"]).evaluate(trained["eval_rows"])["mae"]
    )


def test_make_data_writes_only_new_files_or_its_own_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_json(
        tmp_path / "export" / "random" / "train.json", [theorem("t", [tactic("simp", "⊢ True")])]
    )
    (tmp_path / "keep.txt").write_text("precious\n")
    (tmp_path / "mine").mkdir()
    for out, message in [
        ("keep.txt", "already exists and is not a file this command wrote"),
        ("keep.txt/rows.jsonl", "which is a file"),
        (".", "is a directory"),
        ("mine", "is a directory"),
        ("/proc/rows.jsonl", "system directory"),
    ]:
        code, _, err = _run(capsys, "make-data", "--data", "export", "--out", out)
        assert code == 2 and err.startswith(f"error: --out '{out}'") and message in err, err
        assert len(err.strip().splitlines()) == 1
    assert (tmp_path / "keep.txt").read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export", "keep.txt", "mine"]
    for _ in range(2):  # a new file, then its own earlier rows (replaced)
        code, _, err = _run(capsys, "make-data", "--data", "export", "--out", "rows.jsonl")
        assert code == 0, err
    assert json.loads((tmp_path / "rows.jsonl").read_text())["tactic"] == "simp"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--max_oversample", "-1"], "--max_oversample must be at least 1, got -1"),
        (["--max_oversample", "0.5"], "--max_oversample must be at least 1"),
        (["--seed", "-7"], "--seed must be zero or more"),
        # the choices are Literal types now: core's wording, naming the field
        (["--strategy", "nosuch"], "key 'split_strategy' has the wrong type: got str 'nosuch'"),
        (["--split", "trian"], "key 'split' has the wrong type: got str 'trian'"),
    ],
)
def test_make_data_checks_its_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    out = tmp_path / "rows.jsonl"
    code, _, err = _run(capsys, "make-data", "--data", str(tmp_path), "--out", str(out), *flags)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


TRAIN = ["progress", "train", "--data", "rows.jsonl"]
EVAL = ["progress", "evaluate", "--data", "rows.jsonl"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["progress", "train", "--data", "empty.json"], "empty.json: the file is empty"),
        (["progress", "train", "--data", "binary.jsonl"], "binary.jsonl: the file is binary"),
        (["progress", "train", "--lr", "1e-5", "--huber-delta", "0"], "--huber_delta must be"),
        (["progress", "train", "--loss", "l3"], "key 'loss' has the wrong type"),
        (["progress", "evaluate", "--data", "empty.json"], "empty.json: the file is empty"),
        # issue 36: batch sizes by the type, model directories by their files
        ([*EVAL, "--batch_size", "0"], "--batch_size must be at least 1, got 0"),
        ([*EVAL, "--batch_size", "-1"], "--batch_size must be at least 1, got -1"),
        (
            ["progress", "predict", "--goal", "⊢ p", "--tactic", "simp", "--batch_size", "0"],
            "--batch_size must be at least 1",
        ),
        ([*TRAIN, "--model", "/nonexistent"], "/nonexistent: no such model directory"),
        ([*TRAIN, "--model", "broken-model-dir"], "broken-model-dir/config.json: not valid JSON"),
        ([*EVAL, "--model", "broken-model-dir"], "broken-model-dir/config.json: not valid JSON"),
        (
            [*EVAL, "--model", "does/not/exist"],
            "does/not/exist: not a trained progress model (no such model directory)",
        ),
        ([*EVAL, "--model", "no-weights"], "no-weights: no model.safetensors"),
        ([*EVAL, "--model", "no-tokenizer"], "no-tokenizer: no tokenizer.json"),
        (
            [
                "progress",
                "predict",
                "--model",
                "broken-model-dir",
                "--goal",
                "⊢ p",
                "--tactic",
                "t",
            ],
            "broken-model-dir/config.json: not valid JSON",
        ),
    ],
)
def test_bad_settings_and_data_fail_before_transformers_is_imported(tmp_path, argv, message):
    """Config and data are checked first: transformers and torch are not even imported."""
    (tmp_path / "empty.json").write_bytes(b"")
    (tmp_path / "binary.jsonl").write_bytes(bytes(range(256)) * 4)
    write_jsonl(tmp_path / "rows.jsonl", [{"goal": "⊢ p", "tactic": "simp", "steps_remaining": 1}])
    write_json(tmp_path / "no-weights" / "config.json", {})
    write_json(tmp_path / "no-weights" / "tokenizer.json", {})
    write_json(tmp_path / "no-tokenizer" / "config.json", {})
    (tmp_path / "no-tokenizer" / "model.safetensors").write_bytes(b"")
    (tmp_path / "broken-model-dir").mkdir()
    (tmp_path / "broken-model-dir" / "config.json").write_text('{"model_type": "bert",')
    code = (
        "import sys; from leantrain.core.cli import main; rc = main(sys.argv[1:]); "
        "heavy = [m for m in ('transformers', 'torch') if m in sys.modules]; print(rc, heavy)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.stdout.split("\n")[0] in ("1 []", "2 []"), (done.stdout, done.stderr)
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def _groups(name: str) -> tuple[type, ...]:
    from leantrain.core.command import load
    from leantrain.progress.cli import register

    (progress,) = register()
    return tuple(map(load, next(c for c in progress.subcommands if c.name == name).groups))


#: shared option → (subcommands taking it, its text, the field it sets, the typed value)
SHARED = {
    "--data": ("make-data train evaluate", "rows.jsonl", "data_path", "rows.jsonl"),
    "--split": ("make-data train evaluate", "val", "split", ["val"]),
    "--strategy": (
        "make-data train evaluate",
        "novel_premises",
        "split_strategy",
        "novel_premises",
    ),
    "--sorry_policy": ("make-data train evaluate", "drop_tactic", "sorry_policy", "drop_tactic"),
    "--model": ("train evaluate predict", "m", "model_name", "m"),
    "--max_length": ("train evaluate predict", "64", "max_length", 64),
    "--batch_size": ("evaluate predict", "8", "batch_size", 8),
}
REQUIRED = {
    "make-data": ["--data", "rows.jsonl", "--out", "o.jsonl"],
    "train": [],
    "evaluate": ["--data", "rows.jsonl"],
    "predict": ["--goal", "⊢ p", "--tactic", "simp"],
}


@pytest.mark.parametrize("flag", list(SHARED))
def test_an_option_means_the_same_in_every_subcommand_taking_it(flag: str) -> None:
    from leantrain.core.parser import parse

    names, text, field, value = SHARED[flag]
    for name in names.split():
        argv = [*REQUIRED[name], flag, text]
        (cfg,) = parse(_groups(name), argv if flag != "--data" else [*argv[2:], "--data", text])
        assert getattr(cfg, field) == value, (name, flag)
    # progress train's --batch_size is transformers' per-device training batch (its alias)
    (cfg,) = parse(_groups("train"), ["--batch_size", "8"])
    assert cfg.per_device_train_batch_size == 8


def test_help_marks_the_required_options() -> None:
    from leantrain.core.parser import build_parser

    for name, required in (
        ("make-data", ["--data-path", "--out"]),
        ("train", []),
        ("evaluate", ["--data-path"]),
        ("predict", ["--goal", "--tactic"]),
    ):
        parser = build_parser(_groups(name))
        assert [a.option_strings[0] for a in parser._actions if a.required] == required, name
        assert parser.format_help().count("(required)") == len(required), name
