"""Configuration of an end-to-end lifelong run (:class:`PipelineConfig`).

The trainer sections (``sft:``, ``grpo:``, ``retrieval:``, ``progress:``) are the trainers' own
config classes, built when the config is loaded: a bad key in ``progress:`` fails in seconds,
naming the key, before anything is imported or trained. The ``prove:`` section (the optional
``prove`` stage) is :class:`leantrain.prover.ProverConfig`, built the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leantrain.core.config import check_numbers, config_fields, config_from_dict
from leantrain.core.errors import ConfigError

TRAINERS = ("sft", "grpo", "retrieval", "progress", "prove")

PROVE_SET_BY_PIPELINE = {
    "generator": "the generator of each step (GRPO's if the run has GRPO, else SFT's)",
    "progress": "the progress model of each step when 'progress' is in trainers",
    "data": "each repository's own test split",
    "split": "the test split",
    "output_dir": "<run_dir>/prove",
}
"""``prove:`` keys the pipeline sets itself, and to what."""

_NAME = re.compile(r"[A-Za-z0-9._-]+")
"""A run name: one plain path component (no separators; '.' and '..' are refused too)."""


IMPORTS_NAME = "imports.json"
"""What a run directory records of its imported sources (then they are not re-read)."""


def _is_trace_source(source: str) -> bool:
    """``URL@COMMIT`` (a repository to trace), not a path that happens to contain '@'."""
    return source != "sample" and "@" in source and not Path(source).exists()


def check_sources(sources: list[str]) -> None:
    """Raise :class:`ConfigError` for the first source that is a local path and does not exist
    (when the config is built: before the run directory is created or any engine imported)."""
    for source in sources:
        if source != "sample" and not _is_trace_source(source) and not Path(source).exists():
            raise ConfigError(
                f"source {source!r} in 'sources' does not exist",
                hint="give 'sample', an export directory, a dynamic_database.json "
                "or URL@COMMIT to trace",
            )


def _config_class(trainer: str) -> type:
    if trainer == "sft":
        from leantrain.llm import SFTConfig

        return SFTConfig
    if trainer == "grpo":
        from leantrain.llm import GRPOConfig

        return GRPOConfig
    if trainer == "retrieval":
        from leantrain.retrieval import RetrievalConfig

        return RetrievalConfig
    if trainer == "prove":
        from leantrain.prover import ProverConfig

        return ProverConfig
    from leantrain.progress import ProgressConfig

    return ProgressConfig


CONFIG_CLASSES: dict[str, Callable[[], type]] = {
    t: (lambda t=t: _config_class(t)) for t in TRAINERS
}


@dataclass
class PipelineConfig:
    """What to train on, in which order, with which trainers and their configs."""

    name: str = field(
        default="run",
        metadata={"help": "Run name; the run directory defaults to ./leantrain-runs/<name>."},
    )
    run_dir: str | None = field(
        default=None,
        metadata={"help": "Run directory (manifest, metrics.jsonl, checkpoints, report)."},
    )
    sources: list[str] = field(
        default_factory=lambda: ["sample"],
        metadata={
            "help": "Data to import: 'sample' (shipped sample data), LeanDojo-v2 export dirs, "
            "LeanDojo benchmark dirs, dynamic_database.json files, or URL@COMMIT to trace."
        },
    )
    database: str | None = field(
        default=None,
        metadata={"help": "SQLite database path (default: <run_dir>/leantrain.db)."},
    )
    repos: list[str] | None = field(
        default=None,
        metadata={
            "help": "Restrict to these repositories (URL@COMMIT or name); default: all imported."
        },
    )
    curriculum: bool = field(
        default=True,
        metadata={
            "help": "Order repositories easiest first (LeanAgent's curriculum); off: import order."
        },
    )
    trainers: list[str] = field(
        default_factory=lambda: ["sft", "retrieval", "progress"],
        metadata={
            "help": f"Trainers to run after each repository, in order; any of {', '.join(TRAINERS)} "
            "('grpo' starts from that repository's SFT model; 'prove', last, proves every "
            "repository's test theorems so far with that repository's models).",
            "choices": TRAINERS,
        },
    )
    sft: Any = field(default=None, metadata={"help": "SFTConfig keys ('leantrain sft --help')."})
    grpo: Any = field(default=None, metadata={"help": "GRPOConfig keys ('leantrain grpo --help')."})
    retrieval: Any = field(
        default=None,
        metadata={"help": "RetrievalConfig keys ('leantrain retrieval train --help')."},
    )
    progress: Any = field(
        default=None,
        metadata={"help": "ProgressConfig keys ('leantrain progress train --help')."},
    )
    prove: Any = field(
        default=None,
        metadata={
            "help": "ProverConfig keys of the 'prove' stage ('leantrain prove --help'; the "
            "pipeline sets generator, progress, data, split and output_dir)."
        },
    )
    evaluate_each_repo: bool = field(
        default=True,
        metadata={
            "help": "After each repository, score every trainer on each earlier repository's "
            "own test split (the forgetting matrix of the report)."
        },
    )
    seed: int = field(
        default=42,
        metadata={"help": "Seed of the splits and of every trainer that has no seed of its own."},
    )
    overwrite: bool = field(
        default=False,
        metadata={
            "help": "Start over when the run directory holds an earlier run with another config "
            "(deletes that run; never other files)."
        },
    )
    allow_code: bool = field(
        default=False,
        metadata={
            "help": "Allow 'module:attr' names of code that is not registered (rewards, "
            "advantage functions, encoders) in the trainer sections; like trust_remote_code, "
            "only for configs you trust (also: LEANTRAIN_ALLOW_CODE=1)."
        },
    )

    def __post_init__(self) -> None:
        if (
            not isinstance(self.name, str)
            or not _NAME.fullmatch(self.name)
            or set(self.name) <= {"."}
        ):
            raise ConfigError(
                f"'name' must be a plain name (letters, digits, '.', '_', '-'), got {self.name!r}",
                hint="it names ./leantrain-runs/<name>; set run_dir to put the run elsewhere",
            )
        check_numbers(self, {"seed": ">=0"}, prefix="pipeline config: ")
        if self.run_dir is not None and not str(self.run_dir).strip():
            raise ConfigError(
                "'run_dir' (--run-dir) is empty",
                hint="give a new directory, e.g. --run-dir runs/new, or leave it out",
            )
        unknown = [t for t in self.trainers if t not in TRAINERS]
        if unknown:
            raise ConfigError(
                f"unknown trainer '{unknown[0]}' in 'trainers'",
                hint=f"choose from {', '.join(TRAINERS)}",
            )
        if not self.sources:
            raise ConfigError(
                "'sources' is empty", hint="give at least one source, e.g. sources: [sample]"
            )
        if not (self.resolved_run_dir / IMPORTS_NAME).is_file():  # imported: not re-read
            check_sources(list(self.sources))
        grpo_section = self.grpo if isinstance(self.grpo, Mapping) else {}
        if (
            "grpo" in self.trainers
            and "sft" not in self.trainers
            and not grpo_section.get("model_name")
        ):
            raise ConfigError(
                "'grpo' without 'sft' needs grpo.model_name",
                hint="add 'sft' before 'grpo' or set grpo: {model_name: …}",
            )
        if "prove" in self.trainers:
            self._check_prove()
        for trainer in TRAINERS:
            section = getattr(self, trainer)
            if trainer in self.trainers:
                setattr(self, trainer, self._section(trainer, section))
            elif section not in (None, {}) and isinstance(section, Mapping):
                raise ConfigError(
                    f"section '{trainer}:' is given but '{trainer}' is not in 'trainers'",
                    hint=f"add '{trainer}' to trainers or remove the section",
                )

    def _check_prove(self) -> None:
        """The ``prove`` stage needs a generator trained before it, and the evaluations."""
        generator = self.prove_generator
        if generator is None:
            raise ConfigError(
                "'prove' in 'trainers' needs a tactic generator trained in the run",
                hint="add 'sft' (and optionally 'grpo') before 'prove' in trainers",
            )
        uses = [generator] + (["progress"] if "progress" in self.trainers else [])
        late = [t for t in uses if self.trainers.index(t) > self.trainers.index("prove")]
        if late:
            raise ConfigError(
                f"'prove' uses the models of '{late[0]}', which comes after it in 'trainers'",
                hint="put 'prove' last, e.g. trainers: [sft, grpo, retrieval, progress, prove]",
            )
        if not self.evaluate_each_repo:
            raise ConfigError(
                "'prove' proves each repository's test split, which evaluate_each_repo: false "
                "turns off",
                hint="set evaluate_each_repo: true or remove 'prove' from trainers",
            )

    @property
    def prove_generator(self) -> str | None:
        """The trainer whose checkpoint the ``prove`` stage generates tactics with."""
        for trainer in ("grpo", "sft"):
            if trainer in self.trainers:
                return trainer
        return None

    def _section(self, trainer: str, section: Any) -> Any:
        """The trainer's own config, built (and so validated) now from a dict section."""
        cls = CONFIG_CLASSES[trainer]()
        if isinstance(section, cls):
            return section
        if section is not None and not isinstance(section, Mapping):
            raise ConfigError(
                f"section '{trainer}:' must be a mapping of {cls.__name__} keys",
                hint=f"got {type(section).__name__}",
            )
        values = dict(section or {})
        if "output_dir" in values:
            raise ConfigError(
                f"'{trainer}.output_dir' is set by the pipeline (<run_dir>/{trainer}); remove it"
            )
        if trainer == "prove":
            for key, what in PROVE_SET_BY_PIPELINE.items():
                if key in values:
                    raise ConfigError(f"'prove.{key}' is set by the pipeline ({what}); remove it")
            values.setdefault("progress_bar", False)  # the pipeline shows its own bar
        elif trainer != "grpo":  # GRPO starts from the SFT model of the same repository
            values.setdefault("model_name", "tiny")
        values.setdefault("seed", self.seed)
        if self.allow_code and "allow_code" in config_fields(cls):
            values.setdefault("allow_code", True)
        values["output_dir"] = str(self.resolved_run_dir / trainer)
        return config_from_dict(cls, values, source=f"pipeline config, section '{trainer}:'")

    @property
    def resolved_run_dir(self) -> Path:
        return Path(self.run_dir) if self.run_dir else Path("leantrain-runs") / self.name

    @property
    def resolved_database(self) -> Path:
        return Path(self.database) if self.database else self.resolved_run_dir / "leantrain.db"
