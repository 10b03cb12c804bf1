"""leantrain.pipeline: the end-to-end lifelong pipeline (import → export → SFT → GRPO →
retrieval → progress → evaluate), the demo, and the run report."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from leantrain.pipeline.pipeline import Pipeline
from leantrain.pipeline.pipeline_config import PipelineConfig
from leantrain.pipeline.report import render_report

try:
    __version__ = _version("leantrain")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = ["Pipeline", "PipelineConfig", "render_report"]
