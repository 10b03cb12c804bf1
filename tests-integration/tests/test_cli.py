"""The ``leantrain`` CLI as a user runs it: exit codes and one-line messages on bad input."""

from __future__ import annotations

import json
import subprocess

import pytest
from it_support import leantrain_cmd, quiet_env


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*leantrain_cmd(), *args],
        capture_output=True,
        text=True,
        env=quiet_env(),
        cwd=cwd,
        timeout=600,
    )


def test_help_lists_every_installed_command():
    out = run("--help")
    assert out.returncode == 0
    for name in (
        "demo",
        "pipeline",
        "report",
        "export",
        "sft",
        "grpo",
        "llm",
        "retrieval",
        "progress",
        "prove",
        "verify",
    ):
        assert f"\n  {name} " in out.stdout, name
    assert "warning" not in out.stderr


def test_version_lists_packages():
    out = run("--version")
    assert out.returncode == 0
    assert "leantrain-core " in out.stdout and "leantrain-llm " in out.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["nosuch"], 2, "unknown command 'nosuch'"),
        (["pipeline", "--config", "missing.yaml"], 2, "config file not found"),
        (["report", "."], 2, "no metrics.jsonl"),
        (["export", "import", "does/not/exist", "--db", "x.db"], 1, "does/not/exist"),
        (
            [
                "sft",
                "--model",
                "tiny",
                "--data",
                "does/not/exist",
                "--output-dir",
                "o",
                "--max-steps",
                "1",
            ],
            1,
            "does/not/exist",
        ),
        (["sft", "--modle", "tiny"], 2, "did you mean '--model"),
        (
            ["progress", "make-data", "--data", "does/not/exist", "--out", "rows.jsonl"],
            1,
            "does/not/exist",
        ),
        (
            [
                "retrieval",
                "train",
                "--model",
                "tiny",
                "--data",
                "does/not/exist",
                "--output-dir",
                "r",
            ],
            1,
            "does/not/exist",
        ),
    ],
)
def test_bad_input_gives_one_clear_line_and_nonzero_exit(tmp_path, args, code, needle):
    out = run(*args, cwd=tmp_path)
    assert out.returncode != 0
    if code == 2:
        assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out.stderr[-2000:]
    assert needle in errors[0]
    assert not (tmp_path / "rows.jsonl").exists()


@pytest.mark.slow
def test_pipeline_cli_jsonl_mode(tmp_path):
    from it_support import tiny_pipeline_config

    cfg = tiny_pipeline_config(tmp_path / "run", trainers=["progress"], repos=1)
    import yaml

    (tmp_path / "p.yaml").write_text(yaml.safe_dump(cfg))
    out = run("pipeline", "--config", str(tmp_path / "p.yaml"), "--jsonl")
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert lines[-1]["kind"] == "result"
    assert any(e["kind"] == "step" and e["trainer"] == "progress" for e in lines)
