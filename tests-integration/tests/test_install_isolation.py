"""Each package installs alone, from its built wheel, with only its declared dependencies.

This is what catches an import of a sibling a package never declared, and checks the
dependency boundaries of ARCHITECTURE.md (core has no torch; progress no trl/peft/lightning;
retrieval no trl/peft; llm no lightning; no trainer needs leantrain-export).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# dist -> (module, sibling dists it needs, modules that must NOT be installed, commands listed)
PACKAGES = {
    "leantrain-core": ("leantrain.core", [], ["torch", "transformers", "trl", "lightning"], []),
    "leantrain-export": (
        "leantrain.export",
        ["leantrain-core", "leantrain-lean"],
        ["torch", "transformers"],
        ["export", "verify"],
    ),
    "leantrain-tactics": ("leantrain.tactics", ["leantrain-core"], ["torch", "trl", "peft"], []),
    "leantrain-progress": (
        "leantrain.progress",
        ["leantrain-core"],
        ["trl", "peft", "lightning", "pytorch_lightning", "leantrain.export"],
        ["progress"],
    ),
    "leantrain-retrieval": (
        "leantrain.retrieval",
        ["leantrain-core"],
        ["trl", "peft", "leantrain.export"],
        ["retrieval"],
    ),
    "leantrain-llm": (
        "leantrain.llm",
        ["leantrain-core", "leantrain-lean", "leantrain-tactics"],
        ["lightning", "pytorch_lightning", "leantrain.export", "verl", "ray", "lean_dojo"],
        ["sft", "grpo", "llm", "verify"],
    ),
    "leantrain-prover": (
        "leantrain.prover",
        ["leantrain-core", "leantrain-lean", "leantrain-tactics", "leantrain-llm"],
        ["lightning", "pytorch_lightning", "leantrain.export", "lean_dojo"],
        ["prove", "prove-merge", "sft", "grpo", "llm", "verify"],
    ),
    "leantrain-lean": (
        "leantrain.lean",
        ["leantrain-core"],
        ["torch", "transformers", "trl", "lean_dojo", "pantograph", "leantrain.prover"],
        ["verify"],
    ),
    # verl resolves apart from the workspace's default environment (transformers<5.11):
    # from its wheel it installs with its own transformers; never vLLM / SGLang by default
    "leantrain-verl": (
        "leantrain.verl",
        ["leantrain-core", "leantrain-lean", "leantrain-tactics", "leantrain-llm"],
        ["vllm", "sglang", "lightning", "leantrain.export", "leantrain.progress"],
        ["sft", "grpo", "llm", "verl", "verify"],
    ),
}

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, Path]:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH (install it: python3 -m pip install uv)")
    out = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [uv, "build", "--all-packages", "--wheel", "--no-sources", "-o", str(out), "-q"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    found = {}
    for whl in out.glob("*.whl"):
        dist = whl.name.split("-")[0].replace("_", "-")
        found[dist] = whl
    return found


def _venv(tmp_path: Path, wheels: dict[str, Path], dist: str) -> Path:
    uv = shutil.which("uv")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    _, siblings, _, _ = PACKAGES[dist]
    files = [str(wheels[d]) for d in [dist, *siblings]]
    proc = subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), *files],
        capture_output=True,
        text=True,
        env={**os.environ, "VIRTUAL_ENV": str(venv)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return venv


def test_wheels_are_namespace_packages(wheels):
    import zipfile

    assert set(PACKAGES) <= set(wheels)
    for dist, whl in wheels.items():
        names = zipfile.ZipFile(whl).namelist()
        assert "leantrain/__init__.py" not in names, f"{whl.name} ships leantrain/__init__.py"
        if dist in PACKAGES:
            assert any(n.startswith(PACKAGES[dist][0].replace(".", "/") + "/") for n in names)
            assert any(n.endswith("py.typed") for n in names)


@pytest.mark.parametrize("dist", list(PACKAGES))
def test_package_installs_alone(dist, wheels, tmp_path):
    module, _, forbidden, commands = PACKAGES[dist]
    venv = _venv(tmp_path, wheels, dist)
    py = venv / "bin" / "python"
    check = (
        "import importlib.util, sys\n"
        f"import {module}\n"
        f"bad = [m for m in {forbidden!r} if importlib.util.find_spec(m) is not None]\n"
        "assert not bad, f'unexpected dependencies installed: {bad}'\n"
    )
    proc = subprocess.run([str(py), "-c", check], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    help_proc = subprocess.run(
        [str(venv / "bin" / "leantrain"), "--help"], capture_output=True, text=True
    )
    assert help_proc.returncode == 0, help_proc.stderr
    assert "warning" not in help_proc.stderr, help_proc.stderr
    listed = [
        line.split()[0]
        for line in help_proc.stdout.split("commands:")[1].splitlines()
        if line.startswith("  ") and not line.startswith("  (")
    ]
    assert sorted(listed) == sorted(commands)
