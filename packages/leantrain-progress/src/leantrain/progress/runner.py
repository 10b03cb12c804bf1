"""The run functions of ``leantrain progress make-data|train|evaluate|predict``
(:mod:`leantrain.progress.cli` registers them). Each checks its paths and data before torch
and transformers load: bad input fails in about a second."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

from leantrain.core.command import print_json
from leantrain.progress.progress_arguments import (
    EvaluateArgs,
    MakeDataArgs,
    PredictArgs,
    ProgressArguments,
)


def make_data(args: MakeDataArgs) -> dict[str, Any]:
    """``progress make-data``: write the rows; returns the label statistics."""
    from leantrain.progress.labels import LabelStats, check_rows_out, make_progress_data

    check_rows_out(args.out, flag="--out")  # before any data is read
    stats = LabelStats()
    rows = make_progress_data(
        args.data_path,
        args.out,
        splits=args.split,
        strategy=args.split_strategy,
        sorry_policy=args.sorry_policy,
        rebalance=args.rebalance,
        max_oversample=args.max_oversample,
        seed=args.seed,
        stats=stats,
    )
    print(f"wrote {len(rows)} rows to {args.out}", file=sys.stderr)
    return stats.to_json()


def check_train(args: ProgressArguments) -> None:
    """The base model's directory, the database and a data *file*, checked before
    transformers is imported (an export directory is read by the trainer: reading it twice
    would cost more than it saves)."""
    from leantrain.core.lifelong import check_database
    from leantrain.progress.predictor import check_base_model

    check_base_model(args.model_name)
    check_database(args.database)
    if args.data_path is not None and not Path(args.data_path).is_dir():
        from leantrain.progress.dataset import load_progress_data

        load_progress_data(
            args.data_path,
            splits=args.split,
            strategy=args.split_strategy,
            sorry_policy=args.sorry_policy,
        )


def train(config: Any) -> dict[str, Any]:
    """``progress train``: train a :class:`ProgressConfig`; returns the final metrics."""
    from leantrain.progress.progress_trainer import ProgressTrainer

    with contextlib.redirect_stdout(sys.stderr):  # stdout is for the JSON result
        result = ProgressTrainer(config=config).train()
    print(
        f"model saved to {result['model_dir']}; set LEANPROGRESS_MODEL={config.output_dir} "
        "to use it",
        file=sys.stderr,
    )
    return {"output_dir": config.output_dir, "metrics": result["final"]}


def _predictor(args: EvaluateArgs | PredictArgs) -> Any:
    from leantrain.progress.predictor import ProgressPredictor

    options = {} if args.max_length is None else {"max_length": args.max_length}
    return ProgressPredictor.from_pretrained(args.model_name, batch_size=args.batch_size, **options)


def evaluate(args: EvaluateArgs) -> dict[str, Any]:
    """``progress evaluate``: the rows read first, then the model."""
    from leantrain.progress.dataset import load_progress_data

    rows = load_progress_data(
        args.data_path,
        splits=args.split,
        strategy=args.split_strategy,
        sorry_policy=args.sorry_policy,
    )
    return _predictor(args).evaluate(rows)


def predict(args: PredictArgs) -> int:
    """``progress predict``: the tactics ranked, fewest predicted steps first (a JSON list)."""

    def unescape(text: str) -> str:  # shell users type "a\n⊢ b"; states are multi-line
        return text.replace("\\n", "\n")

    ranked = _predictor(args).rank(
        unescape(args.goal), unescape(args.prefix), [unescape(t) for t in args.tactic]
    )
    print_json([{"tactic": t, "steps_remaining": round(s, 4)} for t, s in ranked])
    return 0
