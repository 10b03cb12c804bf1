"""Configuration of the SFT / GRPO tactic datasets (a dataclass, help in field metadata)."""

from __future__ import annotations

from dataclasses import dataclass, field

from leantrain.core.errors import ConfigError
from leantrain.tactics.prompts import DEFAULT_SYSTEM_PROMPT


@dataclass
class TacticDatasetConfig:
    """How traced theorems become tactic examples. Fill it from Python, a dict, YAML or CLI
    flags with :mod:`leantrain.core.config`."""

    system_prompt: str = field(
        default=DEFAULT_SYSTEM_PROMPT,
        metadata={"help": "System message of every prompt (empty string: no system message)."},
    )
    first_line_only: bool = field(
        default=False,
        metadata={
            "help": "Keep only the first line of multi-line tactics (default: keep them whole)."
        },
    )
    dedup: bool = field(
        default=False,
        metadata={"help": "Drop repeated (proof state, tactic) pairs, keeping the first."},
    )
    max_samples: int | None = field(
        default=None,
        metadata={"help": "Stop after this many examples (after filtering); None keeps all."},
    )
    split_strategy: str = field(
        default="random",
        metadata={"help": "Split directory of an export dir: 'random' or 'novel_premises'."},
    )
    skip_sorry: bool = field(
        default=True,
        metadata={
            "help": "Skip tactics that use `sorry` or `admit` (they teach the model to cheat)."
        },
    )
    max_state_chars: int | None = field(
        default=None,
        metadata={"help": "Skip examples whose proof state is longer than this many characters."},
    )
    chunk_chars: int = field(
        default=1 << 20,
        metadata={"help": "Characters read at a time when streaming a JSON array file."},
    )

    def __post_init__(self) -> None:
        if self.max_samples is not None and self.max_samples < 1:
            raise ConfigError(
                f"max_samples must be a positive integer or None, got {self.max_samples}"
            )
        if self.max_state_chars is not None and self.max_state_chars < 1:
            raise ConfigError(
                f"max_state_chars must be positive or None, got {self.max_state_chars}"
            )
        if self.chunk_chars < 16:
            raise ConfigError(f"chunk_chars must be at least 16, got {self.chunk_chars}")
        if not self.split_strategy or "/" in self.split_strategy:
            raise ConfigError(
                f"split_strategy must be a directory name such as 'random', got {self.split_strategy!r}"
            )
