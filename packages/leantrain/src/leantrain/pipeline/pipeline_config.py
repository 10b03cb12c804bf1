"""Configuration of an end-to-end lifelong run (:class:`PipelineConfig`).

Every installed command that declares a ``trainer`` (:mod:`leantrain.core.command`) is a trainer
of the pipeline, with a section of its name (``sft:``, ``retrieval:``) holding its command's
config keys, built when the config is loaded: a bad key fails in seconds, naming the key, before
anything is imported or trained. The pipeline's own ``prove:`` section is
:class:`leantrain.prover.ProverConfig`, built the same way.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from leantrain.core.command import Command, load
from leantrain.core.config import config_fields, config_from_dict, setting
from leantrain.core.errors import ConfigError
from leantrain.core.groups import Group, LifelongArgs, RunSwitches, Seed

PROVE = "prove"
"""The pipeline's own stage: the replay proof rate of each repository's models."""

PROVE_SET_BY_PIPELINE = {
    "output_dir": "<run_dir>/prove",
    "generator": "the generator of each step (GRPO's if the run has GRPO, else SFT's)",
    "progress": "the progress model of each step when 'progress' is in trainers",
    "data": "each repository's own test split",
    "split": "the test split",
}
"""``prove:`` keys the pipeline sets itself, and to what."""

_NAME = re.compile(r"[A-Za-z0-9._-]+")
"""A run name: one plain path component (no separators; '.' and '..' are refused too)."""

IMPORTS_NAME = "imports.json"
"""What a run directory records of its imported sources (then they are not re-read)."""


@functools.cache
def commands() -> dict[str, tuple[str, Command]]:
    """Command name → (its ``leantrain …`` words, the command or subcommand that declares
    ``trainer`` or ``metrics``), from the registry of the installed packages."""
    from leantrain.core.cli import discover_commands

    found: dict[str, tuple[str, Command]] = {}
    for name, cmd in discover_commands().items():
        subs = [(f"{name} {s.name}", s) for s in cmd.subcommands]
        for words, c in [(name, cmd), *subs]:
            if c.trainer or (c.metrics and name not in found):
                found[name] = (words, c)
    return found


def trainer_names() -> tuple[str, ...]:
    """The trainers a pipeline can run: every registered ``trainer``, then its own ``prove``."""
    return (*(n for n, (_, c) in commands().items() if c.trainer and n != PROVE), PROVE)


def trainer_class(trainer: str) -> type:
    """The class a trainer's command registers (``Command.trainer``), built with
    ``config=`` its section's config."""
    return load(commands()[trainer][1].trainer)


def config_class(trainer: str) -> type:
    """The config class of a trainer's section: its command's one group (``prove``: the
    prover's :class:`~leantrain.prover.ProverConfig`)."""
    if trainer == PROVE:
        from leantrain.prover import ProverConfig

        return ProverConfig
    words, cmd = commands()[trainer]
    if len(cmd.groups) != 1:
        raise TypeError(f"'leantrain {words}' must declare one config class to be a trainer")
    return load(cmd.groups[0])


def _is_trace_source(source: str) -> bool:
    """``URL@COMMIT`` (a repository to trace), not a path that happens to contain '@'."""
    return source != "sample" and "@" in source and not Path(source).exists()


@dataclass
class RunName(Group):
    """Where a pipeline run lives."""

    name: str = setting("run", "Run name; the run directory defaults to ./leantrain-runs/<name>.")
    run_dir: str | None = setting(None, "Run directory (manifest, metrics, checkpoints, report).")

    def check_group(self) -> None:
        """A plain name; a run directory that is not empty text."""
        if not _NAME.fullmatch(self.name) or set(self.name) <= {"."}:
            raise ConfigError(
                f"'name' must be a plain name (letters, digits, '.', '_', '-'), got {self.name!r}",
                hint="it names ./leantrain-runs/<name>; set run_dir to put the run elsewhere",
            )
        if self.run_dir is not None and not str(self.run_dir).strip():
            raise ConfigError(
                "'run_dir' (--run-dir) is empty",
                hint="give a new directory, e.g. --run-dir runs/new, or leave it out",
            )

    @property
    def resolved_run_dir(self) -> Path:
        """``run_dir``, else ``./leantrain-runs/<name>``."""
        return Path(self.run_dir) if self.run_dir else Path("leantrain-runs") / self.name


@dataclass
class PipelineArgs(RunName, RunSwitches, Seed, LifelongArgs, defaults={"seed": 42}):
    """What to train on, in which order, with which trainers.

    ``seed`` is the seed of every trainer section that sets none; ``database`` defaults to
    ``<run_dir>/leantrain.db``."""

    config_required: ClassVar[bool] = True  # 'leantrain pipeline' reads a --config YAML

    sources: list[str] = setting(
        ["sample"],
        "Data to import: 'sample' (shipped sample data), LeanDojo-v2 export dirs, LeanDojo "
        "benchmark dirs, dynamic_database.json files, or URL@COMMIT to trace.",
    )
    curriculum: bool = setting(
        True, "Order repositories easiest first (LeanAgent's curriculum); off: import order."
    )
    trainers: list[str] = setting(
        ["sft", "retrieval", "progress"],
        "Trainers to run after each repository, in order: any trainer command ('grpo' starts "
        "from that repository's SFT model; 'prove', last, proves every repository's test "
        "theorems so far with that repository's models).",
    )

    def check_group(self) -> None:
        """Known trainers, sources that exist, and each trainer's section built (checked)."""
        unknown = [t for t in self.trainers if t not in trainer_names()]
        if unknown:
            raise ConfigError(
                f"'trainers' cannot be {unknown[0]!r}",
                hint=f"choose one of: {', '.join(trainer_names())}",
            )
        if not self.sources:
            raise ConfigError(
                "'sources' is empty", hint="give at least one source, e.g. sources: [sample]"
            )
        gone = [s for s in self.sources if s != "sample" and "@" not in s and not Path(s).exists()]
        if gone and not (self.resolved_run_dir / IMPORTS_NAME).is_file():  # imported: not re-read
            raise ConfigError(
                f"source {gone[0]!r} in 'sources' does not exist",
                hint="give 'sample', an export directory, a dynamic_database.json or URL@COMMIT "
                "to trace",
            )
        grpo_alone = "grpo" in self.trainers and "sft" not in self.trainers
        if grpo_alone and not _key(getattr(self, "grpo", None), "model_name"):
            raise ConfigError(
                "'grpo' without 'sft' needs grpo.model_name",
                hint="add 'sft' before 'grpo' or set grpo: {model_name: …}",
            )
        if PROVE in self.trainers:
            self._check_prove()
        for trainer in trainer_names():
            section = getattr(self, trainer, None)
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
        late = [t for t in uses if self.trainers.index(t) > self.trainers.index(PROVE)]
        if late:
            raise ConfigError(
                f"'prove' uses the models of '{late[0]}', which comes after it in 'trainers'",
                hint="put 'prove' last, e.g. trainers: [sft, grpo, retrieval, progress, prove]",
            )
        modes = {t: _key(getattr(self, t, None), "mode", "tactic") for t in (generator, PROVE)}
        if modes[generator] != modes[PROVE]:
            raise ConfigError(
                f"'prove' has mode {modes[PROVE]} and proves with the models of '{generator}', "
                f"trained in mode {modes[generator]}",
                hint=f"give {generator}: {{mode: {modes[PROVE]}}} too, or the same mode to both",
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
        return next((t for t in ("grpo", "sft") if t in self.trainers), None)

    def _section(self, trainer: str, section: Any) -> Any:
        """The trainer's own config, built (and so validated) now from a dict section."""
        cls = config_class(trainer)
        if isinstance(section, cls):
            return section
        if section is not None and not isinstance(section, Mapping):
            raise ConfigError(
                f"section '{trainer}:' must be a mapping of {cls.__name__} keys",
                hint=f"got {type(section).__name__}",
            )
        values = dict(section or {})
        own = PROVE_SET_BY_PIPELINE if trainer == PROVE else {"output_dir": f"<run_dir>/{trainer}"}
        for key, what in own.items():
            if key in values:
                raise ConfigError(f"'{trainer}.{key}' is set by the pipeline ({what}); remove it")
        if trainer == PROVE:
            values.setdefault("progress_bar", False)  # the pipeline shows its own bar
        elif trainer != "grpo":  # GRPO starts from the SFT model of the same repository
            values.setdefault("model_name", "tiny")
        values.setdefault("seed", self.seed)
        if self.allow_code and "allow_code" in config_fields(cls):
            values.setdefault("allow_code", True)
        values["output_dir"] = str(self.resolved_run_dir / trainer)
        return config_from_dict(cls, values, source=f"pipeline config, section '{trainer}:'")

    @property
    def resolved_database(self) -> Path:
        """``database``, else ``<run_dir>/leantrain.db``."""
        return Path(self.database) if self.database else self.resolved_run_dir / "leantrain.db"


def _section_field(trainer: str) -> tuple[str, Any, Any]:
    what = f"Keys of 'leantrain {commands()[trainer][0]} --help'"
    if trainer == PROVE:
        what += f" (the pipeline sets {', '.join(PROVE_SET_BY_PIPELINE)})"
    return trainer, dict[str, Any] | None, setting(None, what + ".")


def make_pipeline_config() -> type:
    """:class:`PipelineArgs` with one section per trainer of the registry (as installed)."""
    return dataclasses.make_dataclass(
        "PipelineConfig",
        [_section_field(t) for t in trainer_names()],
        bases=(PipelineArgs,),
        namespace={
            "__module__": __name__,
            "__doc__": "One section per registered trainer: its command's config keys.",
        },
    )


PipelineConfig = make_pipeline_config()
"""The pipeline's settings (:class:`PipelineArgs`) and one section per registered trainer."""


def _key(section: Any, key: str, default: Any = None) -> Any:
    """A section's ``key`` (the section: a dict, a built config or none)."""
    if isinstance(section, Mapping):
        return section.get(key, default)
    return getattr(section, key, default)
