"""The code base is ruff-clean and ruff-formatted (part of the test suite so that CI enforces it)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from leantrain_tools.workspace import REPO_ROOT


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    ruff = shutil.which("ruff") or shutil.which("ruff", path=str(REPO_ROOT / ".venv" / "bin"))
    if ruff is None:
        pytest.skip("ruff is not installed (it is in the dev group: uv sync)")
    proc = subprocess.run(
        [ruff, *args, "packages", "tools", "tests-integration"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    sys.stdout.write(proc.stdout)
    return proc


def test_ruff_check_is_clean():
    proc = _ruff("check")
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_ruff_format_is_applied():
    proc = _ruff("format", "--check")
    assert proc.returncode == 0, "run 'uv run ruff format .':\n" + proc.stdout[-3000:]
