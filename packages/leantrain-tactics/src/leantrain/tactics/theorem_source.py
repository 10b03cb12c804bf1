"""Where theorems come from: an export directory, a split file, or an in-memory list."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError
from leantrain.core.json_reader import iter_json_array, iter_jsonl
from leantrain.core.schemas import Theorem, validate_record

TheoremSource = str | Path | Sequence[Theorem | Mapping[str, Any]]
"""An export dir, a split file (``.json`` array / ``.jsonl``), or a list of theorems."""


def resolve_split_file(path: str | Path, split: str, split_strategy: str = "random") -> Path:
    """The split file that ``path`` names.

    * a file is used as is;
    * an export dir gives ``<dir>/<split_strategy>/<split>.json`` (or ``.jsonl``);
    * a split dir (``<dir>/<split>.json`` directly, such as ``export/random``) is accepted too.
    """
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise DataError(
            path,
            "no such file or directory",
            hint="give an export dir or a split file (.json / .jsonl)",
        )
    candidates = [path / split_strategy / f"{split}{ext}" for ext in (".json", ".jsonl")]
    candidates += [path / f"{split}{ext}" for ext in (".json", ".jsonl")]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    strategies = sorted(p.name for p in path.iterdir() if p.is_dir() and any(p.glob("*.json")))
    splits = (
        sorted(p.stem for p in (path / split_strategy).glob("*.json"))
        if (path / split_strategy).is_dir()
        else []
    )
    hint = (
        f"splits under {split_strategy}/: {', '.join(splits)}"
        if splits
        else f"split strategies here: {', '.join(strategies)}"
        if strategies
        else "expected an export dir with random/{train,val,test}.json"
    )
    raise DataError(
        path, f"no split '{split}' (looked for {split_strategy}/{split}.json)", hint=hint
    )


def describe_source(source: TheoremSource, split: str, split_strategy: str) -> str:
    """A short name of the source for messages (the file path, or '<list of N theorems>')."""
    if isinstance(source, (str, Path)):
        return str(resolve_split_file(source, split, split_strategy))
    return f"<list of {len(source)} theorems>"


def iter_theorems(
    source: TheoremSource,
    split: str = "train",
    *,
    split_strategy: str = "random",
    chunk_chars: int = 1 << 20,
) -> Iterator[Theorem]:
    """Yield validated :class:`~leantrain.core.schemas.Theorem` records from ``source``, streaming
    files (a JSON array is parsed element by element, never loaded whole).

    A record that is not a theorem raises :class:`~leantrain.core.errors.DataError` naming the
    file, the record index and the field.
    """
    if isinstance(source, (str, Path)):
        file = resolve_split_file(source, split, split_strategy)
        records: Iterable[tuple[int, Any]] = (
            iter_jsonl(file, what="theorems")
            if file.suffix == ".jsonl"
            else iter_json_array(file, what="theorems", chunk_chars=chunk_chars)
        )
        for index, obj in records:
            yield validate_record(Theorem, obj, path=file, index=index)
        return
    if isinstance(source, Mapping) or not isinstance(source, Sequence):
        raise DataError(
            None,
            f"expected a path or a list of theorems, got {type(source).__name__}",
            hint="pass an export dir, a split file, or a list of Theorem / dict records",
        )
    for index, item in enumerate(source):
        if isinstance(item, Theorem):
            yield item
        else:
            yield validate_record(Theorem, item, path="<theorem list>", index=index)
