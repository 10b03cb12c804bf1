"""Workspace-wide invariants that core guards: PEP 420 namespace, no torch in core."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def test_no_namespace_init_anywhere():
    offenders = sorted(REPO.glob("packages/*/src/leantrain/__init__.py"))
    assert offenders == [], f"leantrain is a PEP 420 namespace; remove {offenders}"
    assert (
        REPO / "packages" / "leantrain-core" / "src" / "leantrain" / "core" / "__init__.py"
    ).is_file()


def test_core_does_not_import_torch():
    code = "import leantrain.core, leantrain.core.cli, sys; assert 'torch' not in sys.modules, 'torch imported'; assert 'transformers' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_sample_data_ships_as_package_data():
    import leantrain.core

    root = Path(leantrain.core.__file__).parent / "sample_data"
    assert len(list(root.glob("*/random/train.json"))) >= 3
