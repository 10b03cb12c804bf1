"""leantrain.tactics stays light: no torch / trl / transformers at import."""

from __future__ import annotations


def test_importing_tactics_loads_no_torch():
    import subprocess
    import sys

    code = "import sys, leantrain.tactics; print(any(m in sys.modules for m in ('torch', 'trl', 'transformers')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
