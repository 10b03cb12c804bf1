"""The ``trainer:`` section: ``lightning.Trainer``'s own arguments, checked by Lightning.

LightningCLI's way, without re-declaring them: values are typed by ``Trainer.__init__``'s
signature (with :data:`LIMITS`) through core's one type check, then a ``Trainer`` is built from
them so that Lightning's own checks (devices, accelerator, strategy …) run when the config is
built. Each failure is one :class:`ConfigError` line.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib.util
import inspect
import logging
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

from annotated_types import Gt
from leantrain.core.config import AtLeast1, StepLimit, suggest, typed_values
from leantrain.core.errors import ConfigError
from pydantic import Strict

#: Arguments leantrain sets itself for each step, and what to use instead.
OWN = {
    "callbacks": "leantrain adds its checkpoint and logging callbacks itself",
    "logger": "choose the logger with report_to",
    "default_root_dir": "the run goes under output_dir",
    "enable_checkpointing": "leantrain checkpoints each step so that a killed run resumes",
}

#: LeanDojo-v2 ``TrainingConfig`` names of Lightning ``Trainer`` arguments (PORTING.md).
LEANDOJO_V2_NAMES = {"num_gpus": "devices"}

#: Types over Lightning's own for what it accepts but leantrain refuses: 0 steps or epochs (as
#: the other trainers refuse them) and what Lightning divides by later.
LIMITS: dict[str, Any] = {
    "max_steps": StepLimit,
    "max_epochs": StepLimit | None,
    "accumulate_grad_batches": AtLeast1,
    # a time ("00:12:00:00", a timedelta) as given: never a number made one
    "val_check_interval": Annotated[int | float, Gt(0)]
    | Annotated[str, Strict()]
    | Annotated[timedelta, Strict()]
    | dict[str, int]
    | None,
}


@functools.cache
def trainer_parameters() -> tuple[str, ...]:
    """The keyword arguments of ``lightning.Trainer``: read from its source file when it is
    found (the parser names them as flags, and importing Lightning, hence torch, would make
    every refusal of a bad flag wait for it), else from the imported signature."""
    return _source_parameters() or tuple(f.name for f in dataclasses.fields(_signature_class()))


def _source_parameters() -> tuple[str, ...]:
    """``Trainer.__init__``'s argument names from ``lightning/pytorch/trainer/trainer.py``,
    without importing it; ``()`` when the file is not where Lightning keeps it."""
    spec = importlib.util.find_spec("lightning")  # a top-level package: found, not imported
    if spec is None or not spec.submodule_search_locations:
        return ()
    path = Path(next(iter(spec.submodule_search_locations))) / "pytorch" / "trainer" / "trainer.py"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return ()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Trainer":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    return tuple(a.arg for a in [*item.args.args[1:], *item.args.kwonlyargs])
    return ()


@functools.cache
def _signature_class() -> type:
    """``lightning.Trainer.__init__``'s signature (with :data:`LIMITS`) as a dataclass, for
    core's type check."""
    import lightning as L

    params = inspect.signature(L.Trainer).parameters.values()
    return dataclasses.make_dataclass(
        "Trainer",
        [
            (p.name, LIMITS.get(p.name, p.annotation), dataclasses.field(default=p.default))
            for p in params
        ],
    )


def check_trainer_args(trainer: Mapping[str, Any]) -> dict[str, Any]:
    """``trainer`` typed by ``lightning.Trainer``'s signature (a flag's string becomes the type
    Lightning declares), once Lightning accepts it (a ``Trainer`` is built): each failure is one
    :class:`ConfigError` line."""
    for key in trainer:
        if key in OWN:
            raise ConfigError(f"trainer.{key} cannot be set", hint=OWN[key])
        if key not in trainer_parameters():
            hint = suggest(key, trainer_parameters(), LEANDOJO_V2_NAMES)
            raise ConfigError(f"trainer: unknown Lightning Trainer argument '{key}'", hint=hint)
    typed = typed_values(_signature_class(), trainer, source="trainer")
    # Lightning's "GPU available" banner says nothing about the user's run: off meanwhile
    rank_zero = logging.getLogger("lightning.pytorch.utilities.rank_zero")
    level = rank_zero.level
    rank_zero.setLevel(logging.WARNING)
    try:
        build_trainer(typed, logger=False, enable_checkpointing=False, enable_model_summary=False)
    finally:
        rank_zero.setLevel(level)
    return typed


def build_trainer(user: Mapping[str, Any], **ours: Any) -> Any:
    """``lightning.Trainer(**ours, **user)`` (the user's values win), with Lightning's refusal
    as one :class:`ConfigError` line naming the arguments given."""
    import lightning as L
    from lightning.fabric.utilities.exceptions import MisconfigurationException

    try:
        return L.Trainer(**{**ours, **user})
    except (MisconfigurationException, ValueError, TypeError, RuntimeError) as e:
        given = ", ".join(f"{k}={v!r}" for k, v in user.items())
        detail = " ".join(str(e).split())
        raise ConfigError(f"Lightning refuses trainer: {{{given}}}: {detail[:300]}") from None
