"""The run functions of ``leantrain verl train | convert | algorithms`` (declared in
:mod:`leantrain.verl.cli`): each takes its parsed settings and returns a result or exit code."""

from __future__ import annotations

from typing import Any

from leantrain.verl.config import ConvertArgs, LeantrainSection, VerlTrainArgs


def train_command(args: VerlTrainArgs) -> dict[str, Any] | int:
    """``leantrain verl train``: the run's result, or (``--dry-run``) the resolved config and
    command printed."""
    from leantrain.core.config import config_fields
    from leantrain.core.parser import given
    from leantrain.verl.manager import VERLTrainingManager

    section = config_fields(LeantrainSection)
    manager = VERLTrainingManager(
        args.config,
        args.algorithm,
        overrides=args.overrides,
        output_dir=args.output_dir,
        core_algos=args.core_algos,
        core_function=args.core_function,
        **{k: getattr(args, k) for k in given(args) if k in section},  # over the YAML's
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
    return manager.train(
        args.repos or None,
        args.database,
        args.export_dir,
        data_path=args.data_path,
        evaluate_each_repo=args.evaluate_each_repo,
    )


def convert_command(args: ConvertArgs) -> dict[str, str]:
    """``leantrain verl convert``: the data checked before the output directory is claimed."""
    from leantrain.core.output_dir import claim_output_dir
    from leantrain.verl.data import check_data_path, convert_to_verl

    check_data_path(args.data_path, args)  # and the guard, before writing
    out = claim_output_dir(args.output_dir, kind="verl-data", flag="--output_dir")
    return {k: str(v) for k, v in convert_to_verl(args.data_path, out, settings=args).items()}


def algorithms_command(args: Any) -> int:
    """``leantrain verl algorithms``: each algorithm type and the VERL options it sets."""
    from leantrain.verl.algorithms import ALGORITHMS, NOT_COVERED, get_algorithm

    for name in ALGORITHMS.names():
        algorithm = get_algorithm(name)
        print(name + (f"  ({algorithm.note})" if algorithm.note else ""))
        for key, value in algorithm.overrides.items():
            print(f"    {key}={value}")
    print("\nnot covered by verl 0.9.1's main_ppo:")
    for name, why in NOT_COVERED.items():
        print(f"  {name}: {why}")
    return 0
