"""``leantrain progress make-data|train|evaluate|predict``.

This module is imported by every ``leantrain`` invocation, so it imports nothing heavy at
module level: torch / transformers load inside the command that needs them.
"""

from __future__ import annotations

import contextlib
import json
import sys
from dataclasses import dataclass, field
from typing import Literal

from leantrain.core.cli import Command
from leantrain.core.config import check_numbers, parse_cli, parse_known
from leantrain.core.errors import ConfigError

_SUBCOMMANDS = {
    "make-data": "turn traced theorems into progress rows (JSONL)",
    "train": "train the steps-remaining model",
    "evaluate": "MSE / MAE / within-1 / per-bin MAE of a trained model on progress data",
    "predict": "predict steps remaining for a goal and tactic(s); several --tactic are ranked",
}


@dataclass
class MakeDataOptions:
    """Options of ``leantrain progress make-data``."""

    data: str = field(
        default="",
        metadata={
            "help": "Traced data: an export directory, a split directory or a split .json file."
        },
    )
    out: str = field(
        default="", metadata={"help": "Output JSONL of progress rows (written atomically)."}
    )
    split: list[str] = field(
        default_factory=lambda: ["train"],
        metadata={
            "help": "Splits to read: train, val, test or all (repeatable).",
            "choices": ("train", "val", "test", "all"),
        },
    )
    strategy: str = field(
        default="random",
        metadata={
            "help": "Split strategy directory of an export: random or novel_premises.",
            "choices": ("random", "novel_premises"),
        },
    )
    sorry_policy: Literal["drop_theorem", "drop_tactic"] = field(
        default="drop_theorem",
        metadata={"help": "Proofs using sorry: drop the theorem, or only its sorry tactics."},
    )
    rebalance: bool = field(
        default=False, metadata={"help": "Oversample rows of long proofs (LeanProgress)."}
    )
    max_oversample: float = field(
        default=4.0, metadata={"help": "Most copies of a proof-length bin when rebalancing."}
    )
    seed: int = field(default=42, metadata={"help": "Random seed of the rebalancing."})

    def __post_init__(self) -> None:
        check_numbers(self, {"max_oversample": ">=1", "seed": ">=0"})


@dataclass
class EvaluateOptions:
    """Options of ``leantrain progress evaluate``."""

    model: str | None = field(
        default=None,
        metadata={"help": "Trained model or run directory (default: $LEANPROGRESS_MODEL)."},
    )
    data: str = field(
        default="", metadata={"help": "Progress rows (.jsonl/.json) or traced data to evaluate on."}
    )
    split: list[str] = field(
        default_factory=lambda: ["test"],
        metadata={"help": "Splits to read when --data is traced data."},
    )
    batch_size: int = field(default=32, metadata={"help": "Rows per forward pass."})


@dataclass
class PredictOptions:
    """Options of ``leantrain progress predict``."""

    model: str | None = field(
        default=None,
        metadata={"help": "Trained model or run directory (default: $LEANPROGRESS_MODEL)."},
    )
    goal: str = field(
        default="", metadata={"help": "The proof state (a literal \\n is a newline)."}
    )
    prefix: str = field(
        default="", metadata={"help": "Tactics already applied, newline-separated."}
    )
    tactic: list[str] = field(
        default_factory=list, metadata={"help": "Candidate tactic (repeat to rank several)."}
    )


def _unescape(text: str) -> str:
    # Shell users type "a\n⊢ b"; states are multi-line.
    return text.replace("\\n", "\n")


def _print_json(obj: object) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def _make_data(argv: list[str]) -> int:
    from leantrain.progress.labels import LabelStats, check_rows_out, make_progress_data

    opts = parse_cli(MakeDataOptions, argv, prog="leantrain progress make-data")
    if not opts.data or not opts.out:
        raise ConfigError(
            "make-data needs --data and --out",
            hint="leantrain progress make-data --data DIR --out rows.jsonl",
        )
    check_rows_out(opts.out, flag="--out")  # before any data is read
    stats = LabelStats()
    rows = make_progress_data(
        opts.data,
        opts.out,
        splits=opts.split,
        strategy=opts.strategy,
        sorry_policy=opts.sorry_policy,
        rebalance=opts.rebalance,
        max_oversample=opts.max_oversample,
        seed=opts.seed,
        stats=stats,
    )
    print(f"wrote {len(rows)} rows to {opts.out}", file=sys.stderr)
    _print_json(stats.to_json())
    return 0


def _check_first(argv: list[str]) -> None:
    """The progress model's own settings, and a data file, checked before transformers is
    imported (tens of seconds): a typo or an empty / binary file fails in about a second. An
    export directory is read by the trainer (reading it twice would cost more than it saves)."""
    if "-h" in argv or "--help" in argv:
        return
    from pathlib import Path

    from leantrain.progress.progress_arguments import ProgressArguments

    own = parse_known(ProgressArguments, argv)
    own.check()
    if own.data_path is not None and not Path(own.data_path).is_dir():
        from leantrain.progress.dataset import load_progress_data

        load_progress_data(own.data_path, splits=own.split, sorry_policy=own.sorry_policy)


def _train(argv: list[str]) -> int:
    _check_first(argv)
    from leantrain.progress.progress_config import ProgressConfig

    cfg = parse_cli(
        ProgressConfig,
        argv,
        prog="leantrain progress train",
        description="Train the steps-remaining model.",
    )
    from leantrain.progress.progress_trainer import ProgressTrainer

    with contextlib.redirect_stdout(sys.stderr):  # stdout is for the JSON result
        result = ProgressTrainer(config=cfg).train()
    _print_json({"output_dir": cfg.output_dir, "metrics": result["final"]})
    print(
        f"model saved to {result['model_dir']}; set LEANPROGRESS_MODEL={cfg.output_dir} to use it",
        file=sys.stderr,
    )
    return 0


def _evaluate(argv: list[str]) -> int:
    opts = parse_cli(EvaluateOptions, argv, prog="leantrain progress evaluate")
    if not opts.data:
        raise ConfigError(
            "evaluate needs --data",
            hint="leantrain progress evaluate --model DIR --data rows.jsonl",
        )
    from leantrain.progress.dataset import load_progress_data

    rows = load_progress_data(opts.data, splits=opts.split)  # before the model and torch load
    from leantrain.progress.predictor import ProgressPredictor

    predictor = ProgressPredictor.from_pretrained(opts.model, batch_size=opts.batch_size)
    _print_json(predictor.evaluate(rows))
    return 0


def _predict(argv: list[str]) -> int:
    opts = parse_cli(PredictOptions, argv, prog="leantrain progress predict")
    if not opts.goal or not opts.tactic:
        raise ConfigError(
            "predict needs --goal and at least one --tactic",
            hint='--goal "n : ℕ\\n⊢ n + 0 = n" --tactic simp',
        )
    from leantrain.progress.predictor import ProgressPredictor

    predictor = ProgressPredictor.from_pretrained(opts.model)
    ranked = predictor.rank(
        _unescape(opts.goal), _unescape(opts.prefix), [_unescape(t) for t in opts.tactic]
    )
    _print_json([{"tactic": t, "steps_remaining": round(s, 4)} for t, s in ranked])
    return 0


_RUNNERS = {"make-data": _make_data, "train": _train, "evaluate": _evaluate, "predict": _predict}


def _usage() -> str:
    lines = ["usage: leantrain progress COMMAND [OPTIONS]", "", "commands:"]
    lines += [f"  {name:<10} {text}" for name, text in _SUBCOMMANDS.items()]
    lines += ["", "Run 'leantrain progress COMMAND --help' for its options."]
    return "\n".join(lines)


def _show_logs() -> None:
    """Training log lines of the ``leantrain.progress`` logger on stderr (stdout stays JSON)."""
    import logging

    ours = logging.getLogger("leantrain.progress")
    if not ours.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        ours.addHandler(handler)
        ours.setLevel(logging.INFO)


def run(argv: list[str]) -> int:
    """Dispatch ``leantrain progress SUBCOMMAND …``."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    name, rest = argv[0], argv[1:]
    _show_logs()
    if name not in _RUNNERS:
        import difflib

        close = difflib.get_close_matches(name, list(_RUNNERS), n=1)
        raise ConfigError(
            f"unknown progress command '{name}'",
            hint=f"did you mean '{close[0]}'?" if close else f"choose one of {', '.join(_RUNNERS)}",
        )
    return _RUNNERS[name](rest)


def register() -> list[Command]:
    """The ``progress`` command of the ``leantrain`` CLI."""
    return [
        Command(
            "progress",
            "proof-progress model: make-data, train, evaluate, predict",
            run,
            trainer="leantrain.progress:ProgressTrainer",
            metrics=("mse", "mae", "within_1"),
        )
    ]
