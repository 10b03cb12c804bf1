"""Setting groups owned by core, shared by every trainer command: compose them (as fields of a
config class by inheritance, or as a tuple given to :func:`leantrain.core.parser.parse`) instead
of declaring the same setting again. No field name is declared in two groups."""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass
from typing import Annotated, Any

from annotated_types import Ge
from leantrain.core.config import setting, validate_fields


class Group:
    """Base of a settings group: its ``__post_init__`` checks every field's type constraint
    and each group's ``check_group`` (:func:`~leantrain.core.config.validate_fields`), then
    goes on along the MRO, so an engine class composed after the groups (TRL's ``SFTConfig``)
    still runs its own ``__post_init__``.

    ``class Cfg(Seed, defaults={"seed": 42})`` gives a composing class its own default of an
    inherited setting (help, type and aliases stay declared once, on the group); a list default
    is copied per instance, and ``dataclasses.MISSING`` makes the setting required."""

    def __init_subclass__(cls, *, defaults: dict[str, Any] | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        for name, value in (defaults or {}).items():
            owner = next(k for k in cls.__mro__[1:] if name in inspect.get_annotations(k))
            meta = getattr(owner, "__dataclass_fields__")[name].metadata  # noqa: B009
            cls.__annotations__[name] = typing.get_type_hints(owner, include_extras=True)[name]
            field = setting(value)
            field.metadata = meta  # the group's own: help, aliases, positional
            setattr(cls, name, field)

    def __post_init__(self) -> None:
        validate_fields(self)
        parent = getattr(super(), "__post_init__", None)
        if parent is not None:
            parent()


@dataclass
class AllowCode(Group):
    """Whether code named in a config may be loaded (commands that load but do not train)."""

    allow_code: bool = setting(
        False,
        "Allow 'module:attr' names of code (rewards, advantage functions, algorithm presets, "
        "encoders) that are not registered; like trust_remote_code, give it only for configs you "
        "trust (also: LEANTRAIN_ALLOW_CODE=1).",
    )


@dataclass
class RunSwitches(AllowCode):
    """How a run treats an earlier run and user code (TRL-based configs take ``output_dir`` and
    ``seed`` from ``TrainingArguments``; the others use :class:`RunArgs`)."""

    overwrite: bool = setting(
        False,
        "Start over when the output directory holds an earlier run with another config "
        "(deletes that run; never other files).",
    )


@dataclass
class Seed(Group):
    """The random seed of a run."""

    seed: Annotated[int, Ge(0)] = setting(0, "Random seed.")


@dataclass
class OutputDir(Group):
    """Where a command writes."""

    output_dir: str | None = setting(
        None,
        "Run directory: everything the command writes (manifest, models, results, logs); "
        "rerunning into it resumes.",
        aliases=("out",),
    )


@dataclass
class RunArgs(Seed, RunSwitches, OutputDir):
    """Where a run writes and its random seed, with :class:`RunSwitches`."""


@dataclass
class DataArgs(Group):
    """The data a command reads: an export dir or a split file."""

    data_path: str | None = setting(
        None,
        "Data: an export dir (from 'leantrain export merge') or a .json/.jsonl file (a split, or "
        "rows the command reads as they are, e.g. progress rows).",
        aliases=("data",),
    )


@dataclass
class DatabaseArgs(Group):
    """The SQLite database of traced repositories (``leantrain export``)."""

    database: str | None = setting(
        None,
        "SQLite database of traced repos (a lifelong run trains repo by repo).",
        aliases=("db",),
    )


@dataclass
class RepoArgs(DatabaseArgs):
    """Repositories of the database, in order."""

    repos: list[str] | None = setting(
        None,
        "Repo ids 'URL@COMMIT' (or names), in order (repeat the flag); default: all, easiest first.",
        aliases=("repo",),
    )


@dataclass
class LifelongArgs(RepoArgs):
    """A lifelong run: the repositories trained on one after another."""

    export_dir: str | None = setting(
        None, "Where lifelong mode writes the merged exports (default: OUTPUT_DIR/data)."
    )
    evaluate_each_repo: bool = setting(
        True, "After each repo, evaluate on the evaluation split of every repo so far."
    )


@dataclass
class LifelongData(LifelongArgs, DataArgs):
    """What a lifelong trainer learns from: :class:`DataArgs`, or :class:`LifelongArgs`."""
