"""The one run-dir → model resolver and the one model-directory guard.

:func:`find_model` turns what a user gives where a model is expected — a model directory, a
leantrain run directory (``runs/sft``: its newest checkpoint), or a trainer's directory inside
a run (``runs/pipe/grpo``) — into a model directory. :func:`check_model_dir` reads that
directory's files before any library loads it: a missing directory, a damaged JSON file,
missing weights or tokenizer, a truncated safetensors file are one line naming the file and
the fix. :func:`check_model_name` is both, for a ``--model`` value (``tiny`` and hub ids pass).
No torch: every command calls these before the heavy imports."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from leantrain.core.errors import CheckpointError, ConfigError, LeanTrainError
from leantrain.core.manifest import MANIFEST_NAME, RunManifest
from leantrain.core.output_dir import output_kind

DAMAGED = "the model directory is damaged: copy or save it again"
PARTS = {  # part of a model directory → its usual file, then the globs any of which will do
    "weights": ("model.safetensors", "*.safetensors", "pytorch_model*.bin"),
    "tokenizer": ("tokenizer.json", "tokenizer*", "vocab*", "*.model"),
}


def final_checkpoint(run_dir: str | Path, trainer: str | None = None) -> Path | None:
    """The newest model a run directory holds (of ``trainer``, or of its only trainer), or
    ``None`` when ``run_dir`` is not a leantrain run (its ``.leantrain`` marker says so: a model
    directory may hold a ``manifest.json`` of its own). Lets ``--model runs/sft`` name a run."""
    run_dir = Path(run_dir)
    if output_kind(run_dir) != "run" or not (run_dir / MANIFEST_NAME).is_file():
        return None
    manifest = RunManifest.load(run_dir)
    if trainer is None:
        if len(manifest.trainers) != 1:
            return None
        trainer = manifest.trainers[0]
    steps = manifest.trained_steps(trainer)
    return manifest.checkpoint_path(steps[-1].checkpoint) if steps else None


def find_model(
    name: str | Path, trainers: Sequence[str | None] = (None,), markers: Sequence[str] = ()
) -> Path | None:
    """The model directory ``name`` stands for, ``None`` when it is no local directory.

    A directory holding one of ``markers`` (e.g. ``config.json``) is itself; a run directory
    stands for the newest checkpoint of the first of ``trainers`` it has (``None``: its only
    trainer); a directory ``RUN/<trainer>`` for that trainer's newest checkpoint of ``RUN``.
    Any other directory is returned as it is, for :func:`check_model_dir` to say what it lacks.
    """
    path = Path(name).expanduser()
    if not path.is_dir():
        return None
    if any((path / m).is_file() for m in markers):
        return path
    for trainer in trainers:
        found = final_checkpoint(path, trainer)
        if found is not None:
            return found
    if path.name in trainers or None in trainers:
        return final_checkpoint(path.parent, path.name) or path
    return path


def check_model_dir(
    path: str | Path,
    what: str = "a model directory",
    hint: str = "pass a model directory or a leantrain run directory",
    config: Sequence[str] = ("config.json",),
    parts: Sequence[str] = ("weights", "tokenizer"),
) -> Path:
    """``path`` if it looks like a loadable model directory (``what``): one line naming the
    missing or damaged file otherwise (an interrupted copy, a wrong path), not the loading
    library's traceback. ``config``: one of these files must be there; ``parts``: of
    :data:`PARTS`. Every ``*.json`` must parse and every ``*.safetensors`` be whole."""
    path = Path(path)
    if not path.is_dir():
        raise CheckpointError(f"{path}: no such model directory", hint=hint)
    if config and not any((path / c).is_file() for c in config):
        raise CheckpointError(f"{path}: not {what} (no {config[0]})", hint=hint)
    for f in sorted(path.glob("*.json")):
        try:
            json.loads(f.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise CheckpointError(
                f"{f}: not valid JSON ({e})".split("\n")[0], hint=DAMAGED
            ) from None
    for part in parts:
        usual, *globs = PARTS[part]
        if not any(any(path.glob(g)) for g in globs):
            raise CheckpointError(f"{path}: no {usual} (the model's {part})", hint=DAMAGED)
    for f in sorted(path.glob("*.safetensors")):
        _check_safetensors(f)
    return path


def _check_safetensors(path: Path) -> None:
    """A safetensors file's header parses and the file holds every tensor it lists."""
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            n = int.from_bytes(f.read(8), "little")
            if size == 0 or not 2 <= n <= size - 8:
                raise ValueError("no header")
            header = json.loads(f.read(n))
        end = max(
            (int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"), default=0
        )
        if 8 + n + end > size:
            raise ValueError(f"{size} bytes, the tensors end at {8 + n + end}")
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
        raise CheckpointError(
            f"{path}: corrupted weights file ({e})".split("\n")[0],
            hint="re-save the model or delete the checkpoint",
        ) from None


def looks_local(name: str) -> bool:
    """Whether a model name is meant as a path (starts with ``.``, ``/`` or ``~``, or has more
    than one ``/``), not a hub id (``org/name``)."""
    return name.startswith((".", "/", "~")) or name.count("/") > 1


def check_model_name(
    name: str,
    builtin: Sequence[str] = ("tiny",),
    trainers: Sequence[str | None] = (None,),
    **guard: Any,
) -> Path | None:
    """The model directory a ``--model`` value names (:func:`find_model`), checked
    (:func:`check_model_dir` with ``guard``), before anything loads; ``None`` for a built-in
    name or a hub id (left to the hub loader). A path (:func:`looks_local`) that does not
    exist is ``no such model directory``."""
    if name in builtin:
        return None
    path = find_model(name, trainers)
    if path is not None:
        return check_model_dir(path, **guard)
    if looks_local(name):
        raise ConfigError(
            f"{name}: no such model directory (model not found)",
            hint=guard.get("hint", "pass an existing directory, 'tiny' or a hub id"),
        )
    return None


@contextmanager
def loading(path: str | Path, what: str = "model") -> Iterator[None]:
    """Turn a loading library's error for ``path`` (a hub id offline, a file it cannot read, a
    tokenizer that fails) into one :class:`CheckpointError` line."""
    try:
        yield
    except LeanTrainError:
        raise
    except Exception as e:
        raise CheckpointError(
            f"cannot load {what} '{path}': {e}".split("\n")[0],
            hint="pass a local model directory, 'tiny' or a hub id available offline",
        ) from None


def last_complete_checkpoint(work_dir: str | Path) -> Path | None:
    """The newest ``checkpoint-N`` of a Hugging Face ``Trainer`` output dir that was written
    to the end, or ``None``. The ``Trainer`` writes a checkpoint in place and its
    ``trainer_state.json`` last: one without a readable state was cut off by a kill and is
    removed (resuming from it fails), so training continues from the one before."""
    from leantrain.core.schemas import read_json

    work_dir = Path(work_dir)
    if not work_dir.is_dir():
        return None
    found = []
    for path in work_dir.iterdir():
        match = re.fullmatch(r"checkpoint-(\d+)", path.name)
        if match and path.is_dir():
            found.append((int(match.group(1)), path))
    for _, path in sorted(found, reverse=True):
        try:
            if isinstance(read_json(path / "trainer_state.json"), dict):
                return path
        except Exception:  # missing or torn: a checkpoint cut off by a kill
            pass
        shutil.rmtree(path, ignore_errors=True)
    return None
