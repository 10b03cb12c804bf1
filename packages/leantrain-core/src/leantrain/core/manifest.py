"""The run state: a run directory's ``manifest.json`` as a typed, versioned model.

:class:`RunManifest` says what produced a run (package versions, trainers, config), which
repositories it trains on and in which order, each step that was trained (its checkpoint with a
SHA-256 per file, its metrics), and the per-repository evaluations. Every fact is stored once;
what follows from them (completed repositories, the checkpoint list, whether it finished) are
properties. Every save is atomic, so a killed run leaves a manifest that
describes only finished work, and a resumed run verifies a checkpoint before trusting it.

The file is indented JSON; ``format_version`` says which layout it has. A manifest of a newer
format, of no format, or one that does not match the model is refused in one line naming it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
from importlib.metadata import PackageNotFoundError, distributions, version
from pathlib import Path
from typing import Any, Literal

from leantrain.core.atomic import atomic_write_json
from leantrain.core.errors import CheckpointError
from leantrain.core.schemas import read_json
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

MANIFEST_NAME = "manifest.json"
FORMAT_VERSION = 1
"""The manifest layout this leantrain-core writes and reads (``format_version``)."""
_TRACKED = ("torch", "transformers", "trl", "peft", "accelerate", "datasets", "lightning")
_START_OVER = "start the run over in another output directory, or with overwrite"


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def package_versions() -> dict[str, str]:
    """Versions of the installed leantrain packages and the engines they run on."""
    out = {
        d.metadata["Name"]: d.version
        for d in distributions()
        if (d.metadata["Name"] or "").startswith("leantrain")
    }
    for name in _TRACKED:
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(name)
    return dict(sorted(out.items()))


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file."""
    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def checksum_tree(path: str | Path) -> dict[str, str]:
    """SHA-256 of every file under ``path`` (a file or a directory), by relative path."""
    path = Path(path)
    if path.is_file():
        return {path.name: sha256_file(path)}
    return {
        str(p.relative_to(path)): sha256_file(p) for p in sorted(path.rglob("*")) if p.is_file()
    }


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CheckpointRecord(_Record):
    """A saved model: its path (relative to the run directory) and the SHA-256 of each file."""

    path: str
    files: dict[str, str]


class StepRecord(_Record):
    """One trainer's step ``index`` (on the merged data up to repository ``repo``), saved as
    ``checkpoint``. ``status`` is ``"trained"`` once saved, ``"done"`` once evaluated on every
    repository so far."""

    trainer: str
    index: int = Field(ge=0)
    repo: str
    checkpoint: CheckpointRecord
    init_from: str | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)
    seconds: float | None = None
    status: Literal["trained", "done"] = "trained"


class EvalRecord(_Record):
    """After ``trainer``'s step ``step``, its model on repository ``repo_index``'s own test
    split (one cell of the forgetting matrix, see :mod:`leantrain.core.forgetting`)."""

    trainer: str
    step: int = Field(ge=0)
    repo_index: int = Field(ge=0)
    repo: str
    score_key: str
    higher_is_better: bool
    metrics: dict[str, Any] = Field(default_factory=dict)


class RunManifest(_Record):
    """The ``manifest.json`` of a run directory. Change it through its methods, which save.

    ``order`` holds the repositories (``"URL@COMMIT"``, or ``data:<path>`` / ``dataset@<hash>``
    for a one-off run) in training order; ``exports`` the export directory of each step index;
    ``config`` the settings of each section (trainer, pipeline) as the run was started;
    ``metrics`` the run-level results computed after training (``forgetting``, ``evaluation``).
    """

    format_version: int = FORMAT_VERSION
    kind: str
    created: str
    updated: str
    packages: dict[str, str] = Field(default_factory=dict)
    trainers: list[str]
    chain: dict[str, str] = Field(default_factory=dict)
    config: dict[str, Any] = Field(default_factory=dict)
    order: list[str] = Field(default_factory=list)
    exports: dict[int, str] = Field(default_factory=dict)
    steps: list[StepRecord] = Field(default_factory=list)
    evals: list[EvalRecord] = Field(default_factory=list)
    metrics: dict[str, Any] = Field(default_factory=dict)
    _run_dir: Path = PrivateAttr(default=Path("."))

    # -- files --------------------------------------------------------------------------------
    @property
    def run_dir(self) -> Path:
        """The run directory this manifest describes."""
        return self._run_dir

    @property
    def path(self) -> Path:
        """``<run_dir>/manifest.json``."""
        return self._run_dir / MANIFEST_NAME

    @classmethod
    def create(
        cls,
        run_dir: str | Path,
        *,
        kind: str,
        trainers: list[str],
        chain: dict[str, str] | None = None,
        config: dict[str, Any] | None = None,
    ) -> RunManifest:
        """Start the manifest of a new run of ``trainers`` in ``run_dir`` and save it."""
        now = _now()
        manifest = cls(
            kind=kind,
            created=now,
            updated=now,
            packages=package_versions(),
            trainers=list(trainers),
            chain=dict(chain or {}),
            config=dict(config or {}),
        )
        manifest._run_dir = Path(run_dir)
        manifest.save()
        return manifest

    @classmethod
    def load(cls, run_dir: str | Path) -> RunManifest:
        """The manifest of ``run_dir``. Missing, unreadable, unversioned, newer or malformed:
        a one-line :class:`CheckpointError` naming the file and what to do."""
        path = Path(run_dir) / MANIFEST_NAME
        if not path.is_file():
            raise CheckpointError(
                f"{run_dir}: no {MANIFEST_NAME}", hint="is this a leantrain run directory?"
            )
        restore = f"restore the file, or {_START_OVER}"
        try:
            raw = read_json(path)
        except Exception as e:
            raise CheckpointError(f"{path}: corrupted manifest ({e})", hint=restore) from None
        if not isinstance(raw, dict):
            raise CheckpointError(
                f"{path}: not a leantrain manifest (a JSON {type(raw).__name__}, not an object)",
                hint=restore,
            )
        found = raw.get("format_version")
        if found != FORMAT_VERSION or isinstance(found, bool):
            upgrade = "upgrade leantrain-core (pip install -U leantrain-core)"
            none = " (a development version of leantrain wrote none)" if found is None else ""
            raise CheckpointError(
                f"{path}: manifest format_version {found!r}, this leantrain-core reads "
                f"{FORMAT_VERSION}{none}",
                hint=upgrade if type(found) is int and found > FORMAT_VERSION else _START_OVER,
            )
        try:
            manifest = cls.model_validate(raw)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise CheckpointError(
                f"{path}: malformed manifest: {where}: {first['msg']}", hint=restore
            ) from None
        manifest._run_dir = Path(run_dir)
        return manifest

    def save(self) -> None:
        """Write the manifest atomically (indented JSON; modes as the umask gives). A NaN or
        infinite number (a diverged ``train_loss``) is written as ``null`` (pydantic's JSON mode):
        JSON has no such numbers, and :meth:`load` reads strict JSON."""
        self.updated = _now()
        atomic_write_json(self.path, self.model_dump(mode="json"))

    # -- steps --------------------------------------------------------------------------------
    def step(self, trainer: str, index: int) -> StepRecord | None:
        """The record of ``trainer``'s step ``index``, or ``None`` if it was not saved."""
        return next((s for s in self.steps if s.trainer == trainer and s.index == index), None)

    def trained_steps(self, trainer: str) -> list[StepRecord]:
        """Every saved step of ``trainer``, in index order."""
        return sorted((s for s in self.steps if s.trainer == trainer), key=lambda s: s.index)

    def record_step(self, record: StepRecord) -> None:
        """Add (or replace) the record of a saved step and save."""
        self.steps = [
            s for s in self.steps if (s.trainer, s.index) != (record.trainer, record.index)
        ]
        self.steps.append(record)
        self.save()

    def record_eval(self, record: EvalRecord) -> None:
        """Add one per-repository evaluation and save."""
        self.evals.append(record)
        self.save()

    def mark_done(self, record: StepRecord) -> None:
        """Mark a step evaluated on every repository so far, and save."""
        record.status = "done"
        self.save()

    def eval_rows(self, trainer: str | None = None) -> list[dict[str, Any]]:
        """The evaluations (of ``trainer``, or all) as plain dicts, for
        :func:`leantrain.core.forgetting.forgetting_report`."""
        return [e.model_dump() for e in self.evals if trainer is None or e.trainer == trainer]

    def set_metrics(self, name: str, metrics: dict[str, Any]) -> None:
        """Record the run-level result ``name`` (e.g. ``"forgetting"``) and save."""
        self.metrics[name] = metrics
        self.save()

    # -- what follows from the steps ----------------------------------------------------------
    @property
    def completed_repos(self) -> list[str]:
        """The repositories of ``order`` on which every trainer's step is done."""
        done = {(s.trainer, s.index) for s in self.steps if s.status == "done"}
        return [r for i, r in enumerate(self.order) if all((t, i) in done for t in self.trainers)]

    @property
    def status(self) -> Literal["running", "completed"]:
        """``"completed"`` once every trainer is done on every repository of ``order``."""
        done = self.order and len(self.completed_repos) == len(self.order)
        return "completed" if done else "running"

    @property
    def checkpoints(self) -> list[CheckpointRecord]:
        """The checkpoint of every saved step."""
        return [s.checkpoint for s in self.steps]

    # -- checkpoints --------------------------------------------------------------------------
    def checksum(self, path: str | Path) -> CheckpointRecord:
        """A record of the checkpoint at ``path`` (a file or a directory) with the checksum of
        every file in it; the path is kept relative to the run directory when it is inside."""
        path = Path(path)
        rel = path.relative_to(self._run_dir) if path.is_relative_to(self._run_dir) else path
        return CheckpointRecord(path=str(rel), files=checksum_tree(path))

    def checkpoint_path(self, record: CheckpointRecord) -> Path:
        """Where a recorded checkpoint is."""
        p = Path(record.path)
        return p if p.is_absolute() else self._run_dir / p

    def verify_checkpoint(self, record: CheckpointRecord) -> Path:
        """Check a recorded checkpoint's files against their checksums; returns its path."""
        path = self.checkpoint_path(record)
        for rel, digest in record.files.items():
            f = path / rel if path.is_dir() else path
            if not f.is_file() or sha256_file(f) != digest:
                what = "is corrupted (checksum mismatch)" if f.is_file() else "is missing"
                raise CheckpointError(
                    f"checkpoint {path}: file {rel} {what}",
                    hint="delete the checkpoint to retrain from the previous one",
                )
        return path
