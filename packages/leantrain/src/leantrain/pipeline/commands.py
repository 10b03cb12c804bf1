"""The run functions and settings of the umbrella's commands (declared in :mod:`.cli`):
``leantrain pipeline``, ``demo``, ``report`` and ``compare``. Imports nothing heavy: the
trainers load only when a pipeline runs.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leantrain.core.config import setting
from leantrain.core.errors import ConfigError, DataError
from leantrain.core.groups import Group, RunSwitches
from leantrain.export.commands import JsonArgs
from leantrain.pipeline.pipeline_config import RunName


@dataclass
class OutputArgs(Group):
    """What a pipeline run prints."""

    quiet: bool = setting(False, "No progress bars; print only the report path.")
    jsonl: bool = setting(False, "Print events and the result as JSON lines (for scripts).")
    verbose: bool = setting(False, "Keep the training engines' own logs and progress bars.")

    def check_group(self) -> None:
        """One output mode."""
        if self.quiet and self.jsonl:
            raise ConfigError("--quiet and --jsonl are two output modes; give one")


@dataclass
class DemoArgs(RunName, RunSwitches, defaults={"name": "demo"}):
    """The demo's run (the rest of its config is ``examples/demo.yaml``)."""


@dataclass
class ReportArgs(Group):
    """The run whose report is rendered."""

    run: str = setting(help="Run directory of a pipeline run.", positional=True)


@dataclass
class CompareArgs(JsonArgs):
    """Two runs, and how the rows are shown (``--json``: export's)."""

    run_a: str = setting(help="Run directory A.", positional=True)
    run_b: str = setting(help="Run directory B.", positional=True)


class _Progress:
    """A rich progress bar on stderr (silent when quiet or not a terminal-friendly mode)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        return self

    def _start(self) -> None:
        """The bar starts at the first progress call: an early error prints only its line."""
        if self.enabled and self._bar is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
            )
            self._bar.__enter__()

    def __call__(self, message: str, done: int, total: int) -> None:
        self._start()
        if self._bar is None:
            return
        if message.endswith(" done"):
            self._bar.console.print(f"✓ {message.removesuffix(' done')}")
        if self._task is None:
            self._task = self._bar.add_task(message, total=total)
        self._bar.update(self._task, description=message, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def _print_summary(result: dict[str, Any], quiet: bool, jsonl: bool) -> None:
    if jsonl:
        print(
            json.dumps(
                {
                    "kind": "result",
                    **{k: result[k] for k in ("run_dir", "repos", "report", "summary", "notes")},
                },
                ensure_ascii=False,
            )
        )
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="leantrain summary")
    for col in ("repository", "trainer", "metrics"):
        table.add_column(col)
    for row in result["summary"]:
        table.add_row(row["repo"], row["trainer"], row["metrics"])
    console = Console()
    if not quiet:
        console.print(table)
        for note in result.get("notes", []):
            console.print(note, highlight=False)
    console.print(f"report: {result['report']}")


def _hush_libraries() -> None:
    """Silence the engines' own per-step bars and advisories; the pipeline shows its own bar.
    Environment and warnings only: it runs before the engines are imported."""
    import os
    import warnings

    for key, value in {
        "TQDM_DISABLE": "1",
        "TRANSFORMERS_VERBOSITY": "error",
        "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
        "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    }.items():
        os.environ.setdefault(key, value)
    warnings.filterwarnings("ignore")


def _hush_lightning() -> None:
    """Lightning sets its loggers to INFO when imported ("GPU available: …", tips)."""
    import logging

    import lightning.pytorch  # noqa: F401

    for name in ("lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.WARNING)


def prepare(out: OutputArgs) -> None:
    """Before the config (and so the engines) loads: silence the engines unless ``--verbose``."""
    if not out.verbose:
        _hush_libraries()


def pipeline(config: Any, out: OutputArgs) -> int:
    """``leantrain pipeline``: run (or resume) the pipeline of a built ``PipelineConfig``."""
    from leantrain.pipeline.pipeline import Pipeline

    quiet, jsonl = out.quiet, out.jsonl
    if not out.verbose:
        _hush_lightning()

    with _Progress(enabled=not (quiet or jsonl)) as bar:
        announced = False

        def progress(message: str, done: int, total: int) -> None:
            # The run directory is shown when training starts (after the sources were imported
            # and the repositories chosen): a bad source or repos: prints only its error line.
            nonlocal announced
            if not announced and bar.enabled:
                announced = True
                print(f"run directory: {pipe.run_dir}", file=sys.stderr)
            bar(message, done, total)

        pipe = Pipeline(config, echo_events=jsonl, progress=progress)
        result = pipe.run()
    _print_summary(result, quiet, jsonl)
    return 0


def demo(run: DemoArgs, out: OutputArgs) -> int:
    """``leantrain demo``: the pipeline of ``examples/demo.yaml`` on the sample data."""
    from leantrain.core.config import config_from_dict
    from leantrain.pipeline.demo import demo_config
    from leantrain.pipeline.pipeline_config import PipelineConfig

    cfg = demo_config(run.name, run.run_dir)
    cfg.update(overwrite=run.overwrite, allow_code=run.allow_code)
    return pipeline(config_from_dict(PipelineConfig, cfg, source="pipeline config"), out)


def report(args: ReportArgs) -> int:
    """``leantrain report RUN``: re-render a run directory's report."""
    run_dir = Path(args.run)
    if not (run_dir / "metrics.jsonl").is_file():
        raise ConfigError(
            f"{run_dir}: no metrics.jsonl", hint="give the directory of a leantrain pipeline run"
        )
    from leantrain.core.events import read_events
    from leantrain.pipeline.report import render_report

    if next(read_events(run_dir), None) is None:
        raise DataError(
            run_dir / "metrics.jsonl",
            "no events",
            hint="the run has not finished a step yet; give the directory of a pipeline run",
        )
    print(render_report(run_dir))
    return 0


def compare(args: CompareArgs) -> int:
    """``leantrain compare RUN_A RUN_B``: final metrics and forgetting, B minus A."""
    from leantrain.pipeline.compare import compare_runs

    rows = compare_runs(args.run_a, args.run_b)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    from rich.console import Console
    from rich.table import Table

    def fmt(v: Any) -> str:
        return f"{v:+.4f}" if isinstance(v, float) and v == v else ("—" if v is None else str(v))

    table = Table(title=f"A = {args.run_a}   B = {args.run_b}")
    for col in ("trainer", "metric", "A", "B", "B − A"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["trainer"],
            r["metric"],
            fmt(r["a"]).lstrip("+"),
            fmt(r["b"]).lstrip("+"),
            fmt(r["delta"]),
        )
    Console().print(table)
    return 0
