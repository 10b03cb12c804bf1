"""leantrain-lean stays small: importing it loads no torch, no sibling but core, no HTTP client."""

from __future__ import annotations

import subprocess
import sys


def test_import_loads_only_core_and_the_standard_library():
    code = (
        "import sys, leantrain.lean\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'torch', 'transformers', 'requests', 'httpx', 'lean_dojo', 'pantograph'} "
        "or (m.startswith('leantrain.') and m.split('.')[1] not in {'core', 'lean'}))\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
