"""Run directories and their JSON manifest.

A run directory holds a ``manifest.json`` that says what produced it (package versions,
config), how far it got (completed repositories, current repository and step), its metrics,
and its checkpoints with per-file SHA-256 checksums. Every save is atomic, so a killed run
leaves a manifest that describes only finished work, and a resumed run can verify a checkpoint
before trusting it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
from importlib.metadata import PackageNotFoundError, distributions, version
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_json
from leantrain.core.errors import CheckpointError
from leantrain.core.schemas import read_json

MANIFEST_NAME = "manifest.json"
MANIFEST_SCHEMA = 1
_TRACKED = ("torch", "transformers", "trl", "peft", "accelerate", "datasets", "lightning")


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def package_versions() -> dict[str, str]:
    """Versions of the installed leantrain packages and the engines they run on."""
    out = {}
    for dist in distributions():
        name = dist.metadata["Name"]
        if name and name.startswith("leantrain"):
            out[name] = dist.version
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


class RunManifest:
    """The ``manifest.json`` of a run directory; mutate it, then :meth:`save` (atomic)."""

    def __init__(self, run_dir: str | Path, data: dict[str, Any]) -> None:
        self.run_dir = Path(run_dir)
        self.data = data

    @property
    def path(self) -> Path:
        return self.run_dir / MANIFEST_NAME

    @classmethod
    def load(cls, run_dir: str | Path) -> RunManifest:
        """Load an existing manifest; a missing or corrupted one is a :class:`CheckpointError`."""
        path = Path(run_dir) / MANIFEST_NAME
        if not path.is_file():
            raise CheckpointError(
                f"{run_dir}: no {MANIFEST_NAME}", hint="is this a leantrain run directory?"
            )
        try:
            data = read_json(path)
        except Exception as e:
            raise CheckpointError(
                f"{path}: corrupted manifest ({e})",
                hint="delete the run directory or restore the file",
            ) from None
        if not isinstance(data, dict) or data.get("schema") != MANIFEST_SCHEMA:
            raise CheckpointError(f"{path}: not a leantrain manifest (schema {MANIFEST_SCHEMA})")
        return cls(run_dir, data)

    @classmethod
    def load_or_create(
        cls, run_dir: str | Path, *, kind: str, config: dict[str, Any] | None = None
    ) -> RunManifest:
        """Load the manifest of ``run_dir`` or start a new one for a run of ``kind``."""
        if (Path(run_dir) / MANIFEST_NAME).is_file():
            m = cls.load(run_dir)
            if config is not None:
                m.data["config"] = config
            return m
        now = _now()
        data = {
            "schema": MANIFEST_SCHEMA,
            "kind": kind,
            "created": now,
            "updated": now,
            "packages": package_versions(),
            "config": config or {},
            "status": "running",
            "completed_repos": [],
            "position": {},
            "metrics": {},
            "checkpoints": [],
        }
        m = cls(run_dir, data)
        m.save()
        return m

    def save(self) -> None:
        """Write the manifest atomically."""
        self.data["updated"] = _now()
        atomic_write_json(self.path, self.data)

    # -- progress -----------------------------------------------------------------------------
    @property
    def completed_repos(self) -> list[str]:
        return list(self.data.get("completed_repos", []))

    def is_repo_done(self, repo: str) -> bool:
        return repo in self.data.get("completed_repos", [])

    def set_position(self, **position: Any) -> None:
        """Record where the run is (``repo``, ``repo_index``, ``step`` …) and save."""
        self.data["position"] = position
        self.save()

    def complete_repo(
        self, repo: str, metrics: dict[str, Any] | None = None, checkpoint: str | Path | None = None
    ) -> None:
        """Mark ``repo`` finished with its metrics and checkpoint, and save."""
        if repo not in self.data["completed_repos"]:
            self.data["completed_repos"].append(repo)
        if metrics is not None:
            self.data["metrics"].setdefault("per_repo", {})[repo] = metrics
        if checkpoint is not None:
            self.add_checkpoint(checkpoint, repo=repo, save=False)
        self.save()

    def set_metrics(self, name: str, metrics: dict[str, Any]) -> None:
        self.data["metrics"][name] = metrics
        self.save()

    # -- checkpoints --------------------------------------------------------------------------
    def add_checkpoint(self, path: str | Path, *, save: bool = True, **info: Any) -> dict[str, Any]:
        """Record a checkpoint (file or directory) with the checksum of every file in it."""
        path = Path(path)
        rel = (
            str(path.relative_to(self.run_dir)) if path.is_relative_to(self.run_dir) else str(path)
        )
        entry = {"path": rel, "created": _now(), "files": checksum_tree(path), **info}
        self.data["checkpoints"] = [c for c in self.data["checkpoints"] if c["path"] != rel] + [
            entry
        ]
        if save:
            self.save()
        return entry

    def checkpoint_path(self, entry: dict[str, Any]) -> Path:
        p = Path(entry["path"])
        return p if p.is_absolute() else self.run_dir / p

    def verify_checkpoint(self, entry: dict[str, Any]) -> Path:
        """Check a recorded checkpoint's files against their checksums; returns its path."""
        path = self.checkpoint_path(entry)
        for rel, digest in entry.get("files", {}).items():
            f = path / rel if path.is_dir() else path
            if not f.is_file():
                raise CheckpointError(
                    f"checkpoint {path}: file {rel} is missing",
                    hint="delete the checkpoint to retrain from the previous one",
                )
            if sha256_file(f) != digest:
                raise CheckpointError(
                    f"checkpoint {path}: file {rel} is corrupted (checksum mismatch)",
                    hint="delete the checkpoint to retrain from the previous one",
                )
        return path

    def latest_checkpoint(self, **match: Any) -> dict[str, Any] | None:
        """The newest recorded checkpoint whose info matches ``match`` (or ``None``)."""
        for entry in reversed(self.data.get("checkpoints", [])):
            if all(entry.get(k) == v for k, v in match.items()):
                return entry
        return None
