"""``leantrain verl train | convert | algorithms``.

Imported by every ``leantrain`` invocation: nothing heavy at import time. Options accept both
spellings (``--data_path`` / ``--data-path``), as in VERL's examples and leantrain's CLI.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from leantrain.core.command import ArgumentParser, Command

_USAGE = """usage: leantrain verl COMMAND ...

commands:
  train       tactic RL on VERL (composes over VERL's ppo_trainer.yaml; --dry-run prints it)
  convert     leantrain data (export dir / split file) -> VERL parquet
  algorithms  the algorithm types and the VERL options they set
"""


def _both(parser: argparse.ArgumentParser, name: str, **kwargs: object) -> None:
    dashed = name.replace("_", "-")
    flags = [f"--{name}"] if dashed == name else [f"--{name}", f"--{dashed}"]
    parser.add_argument(*flags, dest=name, **kwargs)  # type: ignore[arg-type]


def _train_parser() -> argparse.ArgumentParser:
    from leantrain.verl.algorithms import algorithm_names

    p = ArgumentParser(
        prog="leantrain verl train",
        description="Tactic RL on VERL; extra KEY=VALUE arguments are VERL config overrides "
        "(e.g. data.train_batch_size=8), or keys of the YAML's leantrain: section "
        "(e.g. leantrain.rewards=[format,no_sorry]).",
    )
    _both(p, "config", help="YAML in VERL's sections (+ an optional leantrain: section)")
    _both(p, "algorithm", default="grpo", help=f"algorithm type: {', '.join(algorithm_names())}")
    _both(p, "data_path", help="export dir or split file (one step)")
    _both(p, "database", help="a leantrain database (lifelong: one step per repository)")
    p.add_argument("--repos", nargs="*", help="repositories of the database (default: curriculum)")
    _both(p, "output_dir", default="runs/verl", help="run directory")
    _both(p, "model", help="base model (HF dir / hub id); default: the YAML's")
    _both(p, "core_algos", help="module holding a custom advantage function (your code: imported)")
    _both(p, "core_function", help="the function in --core_algos (default: the one that fits)")
    _both(p, "allow_code", action="store_true", help="allow user code named in the config")
    _both(p, "dry_run", action="store_true", help="print the resolved config and command, stop")
    p.add_argument("--overwrite", action="store_true", help="start the run directory anew")
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE")
    return p


def _train(argv: Sequence[str]) -> int:
    from leantrain.verl.manager import VERLTrainingManager

    args = _train_parser().parse_args(list(argv))
    manager = VERLTrainingManager(
        args.config,
        args.algorithm,
        overrides=args.overrides,
        model_name=args.model,
        output_dir=args.output_dir,
        core_algos=args.core_algos,
        core_function=args.core_function,
        allow_code=True if args.allow_code else None,
    )
    if args.dry_run:
        plan = manager.dry_run(args.data_path, database=args.database)
        print(plan["config"])
        print("# adv_estimator:", plan["adv_estimator"])
        if plan["custom_advantage"]:
            print("# custom advantage (register_adv_est):", plan["custom_advantage"])
        if plan["reward_modules"]:
            print("# reward modules (imported by every Ray worker):", *plan["reward_modules"])
        print("# command:", " ".join(plan["command"]))
        return 0
    result = manager.train(
        args.repos or None, args.database, data_path=args.data_path, overwrite=args.overwrite
    )
    print(json.dumps(result, indent=2, default=str))
    return 0


def _convert(argv: Sequence[str]) -> int:
    from leantrain.core.output_dir import claim_output_dir
    from leantrain.verl.data import DataSettings, check_data_path, convert_to_verl

    p = ArgumentParser(prog="leantrain verl convert")
    _both(p, "data_path", required=True, help="export dir or split file")
    _both(p, "output_dir", required=True, help="where train.parquet / val.parquet go")
    _both(p, "split_strategy", default="random")
    args = p.parse_args(list(argv))
    check_data_path(args.data_path, split_strategy=args.split_strategy)  # before writing
    out = claim_output_dir(args.output_dir, kind="verl-data", flag="--output_dir")
    files = convert_to_verl(
        args.data_path, out, settings=DataSettings(split_strategy=args.split_strategy)
    )
    print(json.dumps({k: str(v) for k, v in files.items()}, indent=2))
    return 0


def _algorithms(argv: Sequence[str]) -> int:
    from leantrain.verl.algorithms import ALGORITHMS, NOT_COVERED

    for name, overrides in ALGORITHMS.items():
        print(name)
        for key, value in overrides.items():
            print(f"    {key}={value}")
    print("\nnot covered by verl 0.9.1's main_ppo:")
    for name, why in NOT_COVERED.items():
        print(f"  {name}: {why}")
    return 0


def _verl(argv: Sequence[str]) -> int:
    commands = {"train": _train, "convert": _convert, "algorithms": _algorithms}
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE)
        return 0
    if argv[0] not in commands:
        print(
            f"error: unknown verl command '{argv[0]}' (try: leantrain verl --help)", file=sys.stderr
        )
        return 2
    return commands[argv[0]](argv[1:])


def register() -> list[Command]:
    """The commands of leantrain-verl (entry point ``leantrain.commands``)."""
    return [Command("verl", "tactic RL on the VERL engine (Ray): 'leantrain verl train'", _verl)]
