"""leantrain.llm: train a Lean 4 tactic generator — SFT and GRPO on TRL + peft, lifelong
(repo by repo, resumable), with evaluation, tactic suggestion and a tiny offline model.

Heavy libraries (torch, transformers, trl) load on first use of a trainer, not on import of
this package's CLI.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from typing import Any

try:
    __version__ = _version("leantrain-llm")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

_EXPORTS = {
    "SFTConfig": "leantrain.llm.sft_config",
    "SFTTrainer": "leantrain.llm.sft_trainer",
    "GRPOConfig": "leantrain.llm.grpo_config",
    "GRPOTrainer": "leantrain.llm.grpo_trainer",
    "create_lora_config": "leantrain.llm.lora",
    "merge_lora": "leantrain.llm.merge",
    "wants_messages": "leantrain.llm.rewards.calling",
    "build_tiny_model": "leantrain.llm.tiny_model",
    "build_tiny_tokenizer": "leantrain.llm.tiny_model",
    "load_model_and_tokenizer": "leantrain.llm.model_loading",
    "tactic_accuracy": "leantrain.llm.evaluation",
    "generate_tactics": "leantrain.llm.evaluation",
    "run": "leantrain.llm.runner",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    # Lazy: `import leantrain.llm` stays cheap (no torch) until a trainer is used.
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'leantrain.llm' has no attribute {name!r}")
