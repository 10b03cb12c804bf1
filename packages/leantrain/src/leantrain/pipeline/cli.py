"""Commands of the umbrella package: ``leantrain demo``, ``leantrain pipeline``, ``leantrain report``.

This module imports nothing heavy: the trainers load only when a command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from leantrain.core.cli import Command
from leantrain.core.command import ArgumentParser
from leantrain.core.errors import ConfigError, DataError


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
                    **{k: result[k] for k in ("run_dir", "repos", "report", "summary")},
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


def _run_pipeline(config: Any, *, quiet: bool, jsonl: bool, verbose: bool = False) -> int:
    from leantrain.core.config import config_from_dict
    from leantrain.pipeline.pipeline_config import PipelineConfig

    if not verbose:
        _hush_libraries()
    # validate first: a bad top-level key fails before any engine (torch, Lightning) is imported
    if not isinstance(config, PipelineConfig):
        config = config_from_dict(PipelineConfig, config, source="pipeline config")
    from leantrain.pipeline.pipeline import Pipeline

    if not verbose:
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


def _output_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--quiet", action="store_true", help="no progress bars; print only the report path"
    )
    g.add_argument(
        "--jsonl",
        action="store_true",
        help="print events and the result as JSON lines (for scripts)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="start over if the run directory holds an earlier run with another config",
    )
    p.add_argument(
        "--verbose",
        action="store_true",
        help="keep the training engines' own logs and progress bars",
    )


def _demo(argv: list[str]) -> int:
    p = ArgumentParser(
        prog="leantrain demo",
        description="Run the whole pipeline on the shipped sample data with tiny models (offline, CPU).",
    )
    p.add_argument("--name", default="demo", help="run name (directory ./leantrain-runs/<name>)")
    p.add_argument("--run-dir", default=None, help="run directory (overrides --name's default)")
    _output_flags(p)
    args = p.parse_args(argv)
    from leantrain.pipeline.demo import demo_config

    cfg = demo_config(args.name, args.run_dir)
    cfg["overwrite"] = args.overwrite
    return _run_pipeline(
        cfg,
        quiet=args.quiet,
        jsonl=args.jsonl,
        verbose=args.verbose,
    )


def _pipeline(argv: list[str]) -> int:
    p = ArgumentParser(
        prog="leantrain pipeline",
        description="Run (or resume) a lifelong pipeline from a YAML config.",
    )
    p.add_argument(
        "--config",
        required=True,
        help="pipeline YAML (see the examples shipped in leantrain.pipeline/examples)",
    )
    p.add_argument("--run-dir", default=None, help="override the config's run_dir")
    p.add_argument(
        "--allow-code",
        action="store_true",
        help="allow 'module:attr' names of unregistered code (rewards, encoders …) in the "
        "config; like trust_remote_code, only for configs you trust",
    )
    _output_flags(p)
    args = p.parse_args(argv)
    from leantrain.core.config import load_yaml

    cfg = load_yaml(args.config)
    if args.run_dir is not None:
        cfg["run_dir"] = args.run_dir
    if args.overwrite:
        cfg["overwrite"] = True
    if args.allow_code:
        cfg["allow_code"] = True
    return _run_pipeline(cfg, quiet=args.quiet, jsonl=args.jsonl, verbose=args.verbose)


def _report(argv: list[str]) -> int:
    p = ArgumentParser(
        prog="leantrain report",
        description="Re-render a run directory's report (Markdown + PNG plots).",
    )
    p.add_argument("run_dir")
    args = p.parse_args(argv)
    run_dir = Path(args.run_dir)
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


def _compare(argv: list[str]) -> int:
    p = ArgumentParser(
        prog="leantrain compare",
        description="Two runs side by side: final metrics and forgetting (ACC, BWT), B minus A.",
    )
    p.add_argument("run_a")
    p.add_argument("run_b")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = p.parse_args(argv)
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


def register() -> list[Command]:
    """The umbrella's commands."""
    return [
        Command(
            "demo",
            "run the whole pipeline on the sample data with tiny models (offline, CPU, minutes)",
            _demo,
        ),
        Command("pipeline", "run or resume a lifelong pipeline from a YAML config", _pipeline),
        Command("report", "re-render a run's report (Markdown + PNG plots)", _report),
        Command("compare", "two runs side by side: final metrics and forgetting", _compare),
    ]
