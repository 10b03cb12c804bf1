"""Configuration of an end-to-end lifelong run (:class:`PipelineConfig`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leantrain.core.errors import ConfigError

TRAINERS = ("sft", "grpo", "retrieval", "progress")


@dataclass
class PipelineConfig:
    """What to train on, in which order, with which trainers and their configs."""

    name: str = field(default="run", metadata={"help": "Run name; the run directory defaults to ./leantrain-runs/<name>."})
    run_dir: str | None = field(default=None, metadata={"help": "Run directory (manifest, metrics.jsonl, checkpoints, report)."})
    sources: list[str] = field(
        default_factory=lambda: ["sample"],
        metadata={"help": "Data to import: 'sample' (shipped sample data), LeanDojo-v2 export dirs, LeanDojo benchmark dirs, dynamic_database.json files, or URL@COMMIT to trace (needs Lean)."},
    )
    database: str | None = field(default=None, metadata={"help": "SQLite database path (default: <run_dir>/leantrain.db)."})
    repos: list[str] | None = field(default=None, metadata={"help": "Restrict to these repositories (URL@COMMIT or name); default: all imported."})
    curriculum: bool = field(default=True, metadata={"help": "Order repositories easiest first (LeanAgent's curriculum); off: import order."})
    trainers: list[str] = field(
        default_factory=lambda: ["sft", "retrieval", "progress"],
        metadata={"help": f"Trainers to run after each repository, in order; any of {', '.join(TRAINERS)} ('grpo' starts from that repository's SFT model)."},
    )
    sft: dict[str, Any] = field(default_factory=dict, metadata={"help": "SFT config keys (see 'leantrain sft --help')."})
    grpo: dict[str, Any] = field(default_factory=dict, metadata={"help": "GRPO config keys (see 'leantrain grpo --help')."})
    retrieval: dict[str, Any] = field(default_factory=dict, metadata={"help": "Retrieval config keys (see 'leantrain retrieval train --help')."})
    progress: dict[str, Any] = field(default_factory=dict, metadata={"help": "Progress config keys (see 'leantrain progress train --help')."})
    seed: int = field(default=42, metadata={"help": "Seed of the splits and of every trainer that has no seed of its own."})

    def __post_init__(self) -> None:
        unknown = [t for t in self.trainers if t not in TRAINERS]
        if unknown:
            raise ConfigError(f"unknown trainer '{unknown[0]}' in 'trainers'", hint=f"choose from {', '.join(TRAINERS)}")
        if "grpo" in self.trainers and "sft" not in self.trainers and "model_name" not in self.grpo:
            raise ConfigError("'grpo' without 'sft' needs grpo.model_name", hint="add 'sft' before 'grpo' or set grpo: {model_name: …}")
        if not self.sources:
            raise ConfigError("'sources' is empty", hint="give at least one source, e.g. sources: [sample]")

    @property
    def resolved_run_dir(self) -> Path:
        return Path(self.run_dir) if self.run_dir else Path("leantrain-runs") / self.name

    @property
    def resolved_database(self) -> Path:
        return Path(self.database) if self.database else self.resolved_run_dir / "leantrain.db"
