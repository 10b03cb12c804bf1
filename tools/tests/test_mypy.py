"""leantrain-core, leantrain-export, leantrain-prover and leantrain-lean type-check with mypy (configured in the
root pyproject)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from leantrain_tools.workspace import REPO_ROOT

CHECKED = [
    "packages/leantrain-core/src",
    "packages/leantrain-export/src",
    "packages/leantrain-prover/src",
    "packages/leantrain-lean/src",
]


@pytest.mark.slow
def test_mypy_is_clean():
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it is in the dev group: uv sync)")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", *CHECKED],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    sys.stdout.write(proc.stdout)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
