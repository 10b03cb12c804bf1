"""Configuration of the SFT / GRPO tactic datasets (a dataclass, help in field metadata)."""

from __future__ import annotations

from dataclasses import dataclass, field

from leantrain.core.errors import ConfigError
from leantrain.tactics.prompts import DEFAULT_MAX_PREMISE_CHARS, DEFAULT_SYSTEM_PROMPT


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
    retriever: str | None = field(
        default=None,
        metadata={
            "help": "Premise retriever (a leantrain retrieval run or a saved retriever dir): the "
            "num_premises best premises accessible from each state lead its prompt, as the "
            "prover will ask (needs leantrain-tactics[retrieval]); None: prompts without premises."
        },
    )
    num_premises: int = field(
        default=10,
        metadata={"help": "Retrieved premises per prompt (with a retriever), best first."},
    )
    max_premise_chars: int = field(
        default=DEFAULT_MAX_PREMISE_CHARS,
        metadata={
            "help": "Character budget of the premises in one prompt: a premise that does not "
            "fit is skipped, the next one tried."
        },
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
        if self.num_premises < 1:
            raise ConfigError(f"num_premises must be at least 1, got {self.num_premises}")
        if self.max_premise_chars < 1:
            raise ConfigError(f"max_premise_chars must be at least 1, got {self.max_premise_chars}")
        if self.retriever is not None and not self.retriever.strip():
            self.retriever = None  # an empty --retriever "": no retriever
        if self.chunk_chars < 16:
            raise ConfigError(f"chunk_chars must be at least 16, got {self.chunk_chars}")
        if not self.split_strategy or "/" in self.split_strategy:
            raise ConfigError(
                f"split_strategy must be a directory name such as 'random', got {self.split_strategy!r}"
            )
