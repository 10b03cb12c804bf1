"""Configuration of ``leantrain llm eval`` / ``run({"algorithm": "eval", …})`` (no heavy imports)."""

from __future__ import annotations

from dataclasses import dataclass

from leantrain.core.groups import DataArgs
from leantrain.llm.common_config import EvalArgs, ModelArgs
from leantrain.tactics.dataset_config import EvalSplitArgs, PromptArgs, SplitArgs


@dataclass
class EvalConfig(EvalArgs, PromptArgs, SplitArgs, EvalSplitArgs, DataArgs, ModelArgs):
    """Which model to evaluate on which split, and how (the prompt as in training)."""
