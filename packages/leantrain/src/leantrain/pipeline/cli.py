"""``leantrain pipeline``, ``demo``, ``report`` and ``compare``, declared for core's registry;
the run functions and their settings are in :mod:`leantrain.pipeline.commands`."""

from __future__ import annotations

from leantrain.core.command import Command

_C = "leantrain.pipeline.commands"
_OUT = f"{_C}:OutputArgs"


def register() -> list[Command]:
    """The umbrella's commands (entry point ``leantrain.commands``)."""
    run = {"light": (_OUT,), "check": f"{_C}:prepare", "logger": "leantrain.pipeline"}
    return [
        Command(
            "demo",
            "run the whole pipeline on the sample data with tiny models (offline, CPU, minutes)",
            f"{_C}:demo",
            groups=(f"{_C}:DemoArgs", _OUT),
            **run,
        ),
        Command(
            "pipeline",
            "run or resume a lifelong pipeline from a YAML config",
            f"{_C}:pipeline",
            groups=("leantrain.pipeline.pipeline_config:PipelineConfig", _OUT),
            description="Run (or resume) a lifelong pipeline from a YAML config (--config; see "
            "the examples shipped in leantrain.pipeline/examples); flags override its keys.",
            **run,
        ),
        Command(
            "report",
            "re-render a run's report (Markdown + PNG plots)",
            f"{_C}:report",
            groups=(f"{_C}:ReportArgs",),
        ),
        Command(
            "compare",
            "two runs side by side: final metrics and forgetting (ACC, BWT), B minus A",
            f"{_C}:compare",
            groups=(f"{_C}:CompareArgs",),
        ),
    ]
