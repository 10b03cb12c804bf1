"""``leantrain demo``: the whole pipeline on the shipped sample data with tiny models, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from leantrain.core.config import load_yaml

EXAMPLES_DIR = Path(__file__).parent / "examples"


def demo_config(name: str = "demo", run_dir: str | None = None) -> dict[str, Any]:
    """The demo's pipeline config (``examples/demo.yaml``) with the run's name and directory."""
    cfg = load_yaml(EXAMPLES_DIR / "demo.yaml")
    cfg["name"] = name
    if run_dir is not None:
        cfg["run_dir"] = run_dir
    return cfg
