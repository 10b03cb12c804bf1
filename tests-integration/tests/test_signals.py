"""SIGTERM and closed pipes, as a scheduler or a shell delivers them to the ``leantrain`` CLI.

SIGTERM ends a trainer within seconds with one line and exit 143; rerunning the same command
resumes from the last checkpoint in ``<output>/<trainer>/work/`` and completes the manifest.
A reader that closes stdout (``leantrain … | head -1``) ends a command quietly.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from it_support import leantrain_cmd, quiet_env
from leantrain.core.manifest import RunManifest
from leantrain.core.sample import sample_repo_dirs
from leantrain.core.terminate import TERMINATED_MESSAGE

#: SIGTERM to exit, on 2 shared CPU cores, including the interpreter's teardown.
EXIT_WITHIN_S = 10.0


def _data() -> Path:
    dirs = sample_repo_dirs()
    if not dirs:
        pytest.skip("leantrain-core ships no sample data")
    return next((d for d in dirs if d.name == "nat-basics"), dirs[0])


def _env() -> dict[str, str]:
    # one torch thread per process: the cores are shared with other test runs
    return quiet_env(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")


def _terminate_then_resume(cwd: Path, args: list[str], out: Path, trainer: str, ckpt: str) -> None:
    cmd = [*leantrain_cmd(), *args]
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        work = out / trainer / "work"
        deadline = time.monotonic() + 400
        while not any(work.glob(ckpt)):
            if proc.poll() is not None:
                _, err = proc.communicate()
                pytest.fail(f"exited ({proc.returncode}) before a checkpoint in {work}: {err}")
            assert time.monotonic() < deadline, f"no checkpoint {ckpt} in {work}"
            time.sleep(0.05)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, err
    assert took < EXIT_WITHIN_S, f"exited {took:.1f}s after SIGTERM"
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1] == TERMINATED_MESSAGE, err
    assert "Traceback" not in err, err
    assert RunManifest.load(out).status != "completed"

    again = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    manifest = RunManifest.load(out)
    assert manifest.status == "completed"
    assert [s.status for s in manifest.steps] == ["done"], manifest.steps
    assert len(manifest.checkpoints) == 1
    for checkpoint in manifest.checkpoints:
        manifest.verify_checkpoint(checkpoint)  # every file as checksummed
    assert not (out / trainer / "work").exists() or not any((out / trainer / "work").iterdir())


@pytest.mark.slow
def test_sigterm_sft_then_resume(tmp_path: Path) -> None:
    out = tmp_path / "sft"
    args = ["sft", "--model", "tiny", "--data", str(_data()), "--output-dir", str(out)]
    args += ["--max-steps", "12", "--save-steps", "2", "--evaluate-each-repo", "false"]
    _terminate_then_resume(tmp_path, args, out, "sft", "*/checkpoint-*")
    (step,) = RunManifest.load(out).steps
    assert step.metrics["global_step"] == 12


@pytest.mark.slow
def test_sigterm_retrieval_then_resume(tmp_path: Path) -> None:
    out = tmp_path / "ret"
    args = ["retrieval", "train", "--model", "tiny", "--data", str(_data())]
    args += ["--output-dir", str(out), "--max-steps", "12", "--val-check-interval", "2"]
    args += ["--tiny-d-model", "32", "--context-max-len", "96", "--premise-max-len", "96"]
    args += ["--batch-size", "4", "--accelerator", "cpu", "--devices", "1"]
    _terminate_then_resume(tmp_path, args, out, "retrieval", "*/last.ckpt")
    metrics = RunManifest.load(out).steps[0].metrics
    assert metrics["global_step"] == 12 and metrics["resumed"] is True


@pytest.mark.slow
def test_sigterm_progress_then_resume(tmp_path: Path) -> None:
    out = tmp_path / "prog"
    args = ["progress", "train", "--model", "tiny", "--data", str(_data())]
    # ~20 ms a step: 300 steps leave seconds of training after the first checkpoint (step 10)
    # for SIGTERM to arrive in; 12 steps (0.2 s) could end before it did
    args += ["--output-dir", str(out), "--max_steps", "300", "--save_steps", "10"]
    args += ["--max-length", "64", "--tiny-hidden-size", "32", "--tiny-vocab-size", "120"]
    _terminate_then_resume(tmp_path, args, out, "progress", "*/checkpoint-*")
    (step,) = RunManifest.load(out).steps
    assert step.metrics["global_step"] == 300


def _closed_stdout(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run with a stdout pipe whose reader is already gone (``… | head -0``)."""
    proc = subprocess.Popen(
        [*leantrain_cmd(), *args],
        cwd=cwd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err)


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--help"], ["--version"], ["sft", "--help"]])
def test_closed_pipe_is_quiet(args: list[str]) -> None:
    res = _closed_stdout(*args)
    # 141 as a shell reports a SIGPIPE'd writer; 0 where argparse already ignored the failed write
    assert res.returncode in (0, 141), res.stderr
    assert res.stderr == ""


def test_export_stats_into_head(tmp_path: Path) -> None:
    db = tmp_path / "lt.db"
    for repo in sample_repo_dirs():
        imp = subprocess.run(
            [*leantrain_cmd(), "export", "import", str(repo), "--db", str(db)],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert imp.returncode == 0, imp.stderr
    res = _closed_stdout("export", "stats", "--db", str(db))
    assert res.returncode == 141, res.stderr
    assert "Traceback" not in res.stderr and "BrokenPipe" not in res.stderr
    # and through a real shell pipeline, as a user types it
    shell = subprocess.run(
        f"'{leantrain_cmd()[0]}' export stats --db '{db}' | head -1",
        shell=True,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert shell.returncode == 0 and len(shell.stdout.splitlines()) == 1, shell.stderr
    assert shell.stderr == ""
