"""leantrain.verl: tactic RL for Lean 4 on VERL, the Ray-based RL engine, for runs beyond one
machine.

::

    from leantrain.verl import VERLTrainingManager, register_reward_function

    manager = VERLTrainingManager(config="grpo_trainer.yaml", algorithm_type="grpo")
    manager.train(data_path="export_dir", output_dir="runs/verl")

Importing this package does not import verl (its import loads torch and Ray).
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from leantrain.verl.algorithms import (
    ALGORITHMS,
    NOT_COVERED,
    Algorithm,
    algorithm_overrides,
    register_algorithm,
)
from leantrain.verl.core_algos import CustomAdvantage, find_advantage_function
from leantrain.verl.data import convert_to_verl, read_parquet
from leantrain.verl.manager import VERLTrainingManager
from leantrain.verl.rewards import (
    REWARD_FUNCTIONS,
    REWARD_MANAGERS,
    compute_score,
    register_reward_function,
    register_reward_manager,
    registry,
    score_batch,
)
from leantrain.verl.verl_config import compose_config, validate_config

try:
    __version__ = _version("leantrain-verl")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "ALGORITHMS",
    "NOT_COVERED",
    "REWARD_FUNCTIONS",
    "REWARD_MANAGERS",
    "Algorithm",
    "CustomAdvantage",
    "VERLTrainingManager",
    "algorithm_overrides",
    "compose_config",
    "compute_score",
    "convert_to_verl",
    "find_advantage_function",
    "read_parquet",
    "register_algorithm",
    "register_reward_function",
    "register_reward_manager",
    "registry",
    "score_batch",
    "validate_config",
]
