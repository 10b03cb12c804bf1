"""Bad input to ``leantrain verl``: one line on stderr, exit 2, no traceback, nothing written —
with ``--dry-run`` too, which checks on CPU everything a run would (data included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from leantrain.core.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "grpo_trainer.yaml"


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    """A fresh current directory holding a user's unrelated files, a bad YAML and a bad key."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LEANTRAIN_ALLOW_CODE", raising=False)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/todo.txt").write_text("mine\n")
    (tmp_path / "broken.yaml").write_text("data: [\n")
    (tmp_path / "badkey.yaml").write_text("data:\n  train_batch_sze: 8\n")
    (tmp_path / "rows.json").write_text('{"not": "a list of theorems"}\n')
    return tmp_path


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


BAD = {
    "missing data": (["--data_path", "nosuch"], "--data_path 'nosuch': no such file or directory"),
    "not an export": (["--data_path", "notes"], "'notes' is not a leantrain export"),
    "not theorems": (["--data_path", "rows.json"], "--data_path"),
    "bad algorithm": (["--algorithm", "grpoo"], "did you mean 'grpo'?"),
    "bad yaml key": (
        ["--config", "badkey.yaml"],
        "badkey.yaml: unknown VERL key 'data.train_batch_sze' — did you mean 'data.train_batch_size'",
    ),
    "broken yaml": (["--config", "broken.yaml"], "broken.yaml: malformed YAML"),
    "missing config": (["--config", "nope.yaml"], "config file not found: nope.yaml"),
    "no advantage function": (["--core_algos", "json"], "no function taking token_level_rewards"),
    "no such module": (["--core_algos", "nosuch_mod"], "cannot import module"),
    "no such function": (
        ["--core_algos", "json", "--core_function", "nosuch"],
        "module 'json' has no function 'nosuch'",
    ),
    "function without module": (["--core_function", "f"], "--core_function needs --core_algos"),
    "impossible batch": (["data.train_batch_size=3"], "ppo_mini_batch_size"),
    "batch vs gpus": (["trainer.n_gpus_per_node=3", "data.train_batch_size=1"], "3 GPUs"),
    "override syntax": (["data.train_batch_size"], "is not key=value"),
    "output is cwd": (["--output_dir", "."], "--output_dir '.' is the current directory"),
    "output holds files": (["--output_dir", "notes"], "holds files leantrain did not write"),
    "unknown option": (
        ["--data-pth", "x"],
        "unknown option '--data-pth' — did you mean '--data-path'?",
    ),
    "bad section value": (["leantrain.eval_k=0"], "key 'eval_k' must be at least 1, got 0"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_train_input_is_one_line_exit_2_nothing_written(case, workdir, export_dir, capsys):
    extra, expected = BAD[case]
    extra = [a.replace("{export}", str(export_dir)) for a in extra]
    args = ["verl", "train", "--config", str(EXAMPLE), "--output_dir", "runs/verl", "--dry-run"]
    before = _tree(workdir)
    code = main([*args, *extra])
    out, err = capsys.readouterr()
    assert code == 2, (case, err)
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert expected in err, err
    assert "Traceback" not in err and out == ""
    assert _tree(workdir) == before  # nothing written


def test_bad_rewards_fail_in_the_dry_run(workdir, export_dir, capsys, tmp_path):
    config = tmp_path / "rewards.yaml"
    config.write_text(EXAMPLE.read_text().replace("- no_sorry", "- no_sorri"))
    code = main(["verl", "train", "--config", str(config), "--data_path", str(export_dir)])
    err = capsys.readouterr().err
    assert code == 2 and "unknown reward 'no_sorri'" in err and "did you mean 'no_sorry'" in err
    assert not (workdir / "runs").exists()  # checked before the run directory is made


def test_run_without_dry_run_checks_data_before_writing(workdir, capsys):
    code = main(["verl", "train", "--config", str(EXAMPLE), "--data_path", "nosuch"])
    assert code == 2 and "no such file or directory" in capsys.readouterr().err
    assert not (workdir / "runs").exists()


def test_good_dry_run_writes_nothing(workdir, export_dir, capsys):
    before = _tree(workdir)
    args = ["--config", str(EXAMPLE), "--data_path", str(export_dir), "--dry-run"]
    assert main(["verl", "train", *args]) == 0
    assert "verl.trainer.main_ppo" in capsys.readouterr().out
    assert _tree(workdir) == before


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--data_path", "nosuch", "--output_dir", "out"], "no such file or directory"),
        (["--data_path", "{export}", "--output_dir", "notes"], "holds files leantrain"),
        (["--data_path", "{export}", "--output_dir", "."], "is the current directory"),
        (
            ["--data_path", "{export}", "--output_dir", "out", "--split_strategy", "nope"],
            "key 'split_strategy' has the wrong type: got str 'nope'",
        ),
        (["--data_path", "{export}"], "missing required --output-dir"),
        (["--output_dir", "out"], "missing required --data-path"),
        (["--data_path", "{export}", "--output_dir", "out", "--num_premises", "0"], "at least 1"),
    ],
)
def test_bad_convert_input_is_one_line_exit_2(extra, expected, workdir, export_dir, capsys):
    before = _tree(workdir)
    code = main(["verl", "convert", *[a.replace("{export}", str(export_dir)) for a in extra]])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and expected in err, err
    assert _tree(workdir) == before


def test_convert_claims_its_output_dir_and_converts_again(workdir, export_dir, capsys):
    args = ["verl", "convert", "--data_path", str(export_dir), "--output_dir", "verl_data"]
    assert main(args) == 0
    files = json.loads(capsys.readouterr().out)
    assert Path(files["train"]).is_file() and (workdir / "verl_data/.leantrain").is_file()
    assert main(args) == 0  # its own earlier output: converted again in place


def test_train_flags_of_the_groups_reach_the_manager(workdir, export_dir, capsys):
    """VerlArgs' flags (and their aliases) set the leantrain: section over the YAML's; a
    boolean flag followed by KEY=VALUE overrides leaves them positional."""
    args = ["--config", str(EXAMPLE), "--data", str(export_dir), "--model", "my-model"]
    args += ["--rewards", "format", "--dry-run", "data.train_batch_size=16", "leantrain.eval_k=2"]
    assert main(["verl", "train", *args]) == 0
    out = capsys.readouterr().out
    assert "path: my-model" in out and "train_batch_size: 16" in out
    assert "- format" in out and "reference_match" not in out  # the flag's rewards, not the YAML's


def test_train_takes_every_flag_of_the_section_as_its_siblings_do(workdir, export_dir, monkeypatch):
    """The prompt, split and evaluation flags of ``grpo`` / ``convert`` / ``llm eval`` work for
    ``verl train``; given flags win over the YAML's section (a default given explicitly too),
    flags not given leave it alone."""
    import leantrain.verl.manager as manager_module

    seen = {}

    def spy(self, *a, **kw):
        seen.update(section=self.section, settings=self.settings)
        return {"plan": "stopped"}

    monkeypatch.setattr(manager_module.VERLTrainingManager, "train", spy)
    config = workdir / "grpo.yaml"
    config.write_text(
        EXAMPLE.read_text().replace(
            "  eval_k: 4", "  eval_k: 4\n  split_strategy: novel_premises\n  max_eval_samples: 5"
        )
    )
    args = ["--config", str(config), "--data-path", str(export_dir), "--output-dir", "out"]
    flags = [
        "--split-strategy",
        "random",
        "--eval-k",
        "2",
        "--system-prompt",
        "",
        "--num-premises",
        "3",
    ]
    assert main(["verl", "train", *args, *flags, "--max-eval-samples", "null"]) == 0
    section = seen["section"]
    assert (section.split_strategy, section.eval_k, section.system_prompt) == ("random", 2, "")
    assert section.num_premises == 3 and section.max_eval_samples is None
    assert section.eval_max_new_tokens == 48  # not given: the shared default
    assert main(["verl", "train", *args]) == 0
    assert (seen["section"].split_strategy, seen["section"].max_eval_samples) == (
        "novel_premises",
        5,
    )
    assert seen["section"].eval_k == 4
