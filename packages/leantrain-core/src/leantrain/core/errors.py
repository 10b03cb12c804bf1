"""Error types of leantrain.

Every error a user can fix is a :class:`LeanTrainError`. The ``leantrain`` CLI turns one into a
single line on stderr (what, where, how to fix) and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class LeanTrainError(Exception):
    """Base of all user-facing errors. ``exit_code`` is what the CLI exits with."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The message and the hint as one line."""
        return f"{self.message} — {self.hint}" if self.hint else self.message

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its attributes, not by calling __init__ again with ``args`` (subclasses
        # take other arguments): an error raised in a worker process arrives whole.
        return (_restore, (type(self), self.args, self.__dict__))


def _restore(cls: type[LeanTrainError], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    err = cls.__new__(cls)
    Exception.__init__(err, *args)
    err.__dict__.update(state)
    return err


class DataError(LeanTrainError):
    """Bad input data: names the file, the record index, the field and what was expected."""

    def __init__(
        self,
        path: str | Path | None,
        message: str,
        *,
        index: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.index = index
        self.field = field
        where = []
        if self.path is not None:
            where.append(self.path)
        if index is not None:
            where.append(f"record {index}")
        if field:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message, hint=hint)


class ConfigError(LeanTrainError):
    """A bad configuration: unknown key, wrong type, missing value, impossible combination."""

    exit_code = 2


class MissingDependencyError(LeanTrainError):
    """An optional dependency (or external tool such as a Lean toolchain) is not installed."""

    exit_code = 3


class CheckpointError(LeanTrainError):
    """A checkpoint or run directory that is missing, corrupted or does not match its manifest."""


def require_package(module: str, *, extra: str, dist: str, feature: str) -> None:
    """Raise :class:`MissingDependencyError` with the install command unless ``module`` imports.

    Example: ``require_package("faiss", extra="faiss", dist="leantrain-retrieval",
    feature="faiss indexes")``.
    """
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise MissingDependencyError(
            f"{feature} needs the Python package '{module}', which is not installed",
            hint=f"install it with: pip install '{dist}[{extra}]'  (or: uv add '{dist}[{extra}]')",
        )
