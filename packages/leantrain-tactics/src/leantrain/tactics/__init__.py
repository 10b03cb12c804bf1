"""leantrain.tactics: SFT and GRPO tactic datasets from LeanDojo-format traced theorems.

::

    from leantrain.tactics import create_sft_dataset, create_rl_dataset

    sft = create_sft_dataset("export_dir", split="train").to_hf()   # prompt / completion
    rl = create_rl_dataset("export_dir", split="train").to_hf()     # prompt, problem, reference, …
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from leantrain.core.json_reader import iter_json_array  # the one strict reader, re-exported
from leantrain.tactics.dataset_config import PromptArgs, SplitArgs, TacticDatasetConfig
from leantrain.tactics.examples import FilterStats, TacticExample
from leantrain.tactics.premises import PremiseQuery, PremiseSource, RetrievedPremises
from leantrain.tactics.prompts import (
    DEFAULT_MAX_PREMISE_CHARS,
    DEFAULT_SYSTEM_PROMPT,
    build_messages,
    format_user_prompt,
)
from leantrain.tactics.rl_dataset import RLDataset, create_rl_dataset
from leantrain.tactics.sft_dataset import SFTDataset, create_sft_dataset
from leantrain.tactics.tactic_dataset import TacticDataset
from leantrain.tactics.theorem_source import iter_theorems, resolve_split_file

try:
    __version__ = _version("leantrain-tactics")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "DEFAULT_MAX_PREMISE_CHARS",
    "DEFAULT_SYSTEM_PROMPT",
    "FilterStats",
    "PremiseQuery",
    "PremiseSource",
    "PromptArgs",
    "RLDataset",
    "RetrievedPremises",
    "SFTDataset",
    "SplitArgs",
    "TacticDataset",
    "TacticDatasetConfig",
    "TacticExample",
    "build_messages",
    "create_rl_dataset",
    "create_sft_dataset",
    "format_user_prompt",
    "iter_json_array",
    "iter_theorems",
    "resolve_split_file",
]
