"""leantrain.pipeline: the end-to-end lifelong pipeline (import → export → SFT → GRPO →
retrieval → progress → evaluate), the demo, and the run report. Imported lazily: ``leantrain``
loads this package's commands on every start."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from typing import Any

try:
    __version__ = _version("leantrain")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

_WHERE = {"Pipeline": "pipeline", "PipelineConfig": "pipeline_config", "render_report": "report"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


__all__ = ["Pipeline", "PipelineConfig", "render_report"]
