"""Whole-proof datasets (statement → proof) and ``prove``'s ``proofs.json`` as database sources.

Each file becomes one pseudo-repository: ``url`` the file's name (``proofs.json``: its
directory and name, ``pw/proofs.json``), ``commit`` the first 12 hex digits of the file's
SHA-256 (so importing the same file again replaces it, and a changed file is a newer version);
its theorems are ordinary theorem records, so merge, curriculum and the trainers read them
unchanged. Recognised (:func:`is_whole_proof_file`):

- **rows** — ``.jsonl`` (one object a line), ``.parquet`` (needs ``leantrain-export[parquet]``),
  or a ``.json`` array whose first object has ``formal_statement``: DeepSeek-Prover-V1 /
  miniF2F-style rows (``name``, ``header``, ``formal_statement`` ending ``:= by``, optional
  ``formal_proof`` continuing it, ``split``), NuminaMath-LEAN (``uuid``, ``formal_statement``
  with its imports, ``formal_proof`` — a whole theorem text —, ``formal_ground_truth`` where
  ``ground_truth_type`` is ``complete``, ``rl_data.win_rate`` → ``difficulty = 1 - win_rate``),
  Lean Workbook (``id``, ``formal_statement``, ``proof``: a list of proofs, the first taken).
  Statements, headers and names are read by leantrain-lean's benchmark reader
  (:func:`leantrain.lean.theorems.theorem_of_row`), as ``prove --data FILE.jsonl`` reads them.
  A theorem record gets ``theorem_statement`` (the declaration ending ``:=``), ``header``,
  ``formal_proof`` (what follows ``:=``: from a whole theorem text, a ``by`` block, or the
  tactics that continue a statement ending ``:= by``), ``proof_origin = "imported"``,
  ``difficulty``, ``split`` where the row has one, and ``start = end = [row, 1]``. A row
  without a proof, or whose proof uses ``sorry``, is a statement without ``formal_proof``
  (status ``sorry_unproved``): an evaluation statement, never a training target.
- **proofs.json** (``leantrain prove``: theorem records with the found ``traced_tactics`` and
  their states, or a ``formal_proof``): each record keeps its tactics as traced tactics and
  gets ``formal_proof`` (its own, else its tactics joined as a ``by`` block),
  ``proof_origin = "found"`` and ``source_repo`` (the ``url@commit`` it was proved in).

A malformed row is one :class:`~leantrain.core.errors.DataError` line naming the file, the
row and the field; the import is one transaction, so nothing of the file is kept then.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError, MissingDependencyError
from leantrain.core.json_reader import iter_json_array, iter_jsonl
from leantrain.core.lean_text import contains_sorry, tactics_proof
from leantrain.export.sources import RepoInfo, SourceItem

PROOFS_JSON = "proofs.json"
"""The file name ``leantrain prove`` writes its found proofs under."""

_BY_TAIL = re.compile(r":=\s*by\s*$")


def is_whole_proof_file(path: Path) -> bool:
    """``path`` is a file this module reads (see the module docstring)."""
    if path.suffix in (".jsonl", ".parquet") or path.name == PROOFS_JSON:
        return True
    if path.suffix != ".json":
        return False
    first = next(iter(_json_rows(path)), None)
    return first is not None and isinstance(first[1], dict) and "formal_statement" in first[1]


def _json_rows(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        yield from iter_json_array(path, what="rows")
    except DataError:
        return  # not an array (a dynamic_database.json): not whole-proof rows


def _parquet_rows(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError(
            f"{path}: reading .parquet needs pyarrow",
            hint="pip install 'leantrain-export[parquet]', or convert the file to .jsonl",
        ) from None
    try:
        batches = pq.ParquetFile(path).iter_batches(batch_size=1024)
        index = 0
        for batch in batches:
            for row in batch.to_pylist():
                yield index, row
                index += 1
    except (OSError, pa.ArrowException) as e:
        raise DataError(path, f"not a readable parquet file ({e})".split("\n")[0]) from None


def _rows(path: Path) -> Iterator[tuple[int, Any]]:
    if path.suffix == ".parquet":
        return _parquet_rows(path)
    if path.suffix == ".jsonl":
        return iter_jsonl(path, what="rows", allow_empty=False)
    return iter_json_array(path, what="rows", allow_empty=False)


def _pseudo_repo(path: Path) -> RepoInfo:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    url = f"{path.resolve().parent.name}/{path.name}" if path.name == PROOFS_JSON else path.name
    return RepoInfo(url=url, commit=digest.hexdigest()[:12], name=url)


def read_whole_proof_file(path: Path) -> Iterator[SourceItem]:
    """The items of a whole-proof file: its pseudo-repository, then one theorem per row."""
    repo = _pseudo_repo(path)
    yield SourceItem("repo", repo)
    key = (repo.url, repo.commit)
    rows = _rows(path)
    if path.name == PROOFS_JSON:
        for i, record in rows:
            yield SourceItem("theorem", _found(record, repo), repo=key, path=path, index=i)
        return
    for i, row in rows:
        where = f"{path}:{i + 1}" if path.suffix == ".jsonl" else f"{path}, row {i}"
        record, proved = _row_record(row, where, repo, i + 1)
        status = "proven" if proved else "sorry_unproved"
        yield SourceItem("theorem", record, repo=key, status=status, path=path, index=i)


def _found(record: Any, repo: RepoInfo) -> Any:
    """A ``proofs.json`` record in the pseudo-repository (anything malformed is left for the
    theorem model to name)."""
    if not isinstance(record, dict):
        return record
    out = dict(record)
    out["source_repo"] = f"{record.get('url')}@{record.get('commit')}"
    out["url"], out["commit"] = repo.url, repo.commit
    traced = [t.get("tactic") for t in record.get("traced_tactics") or [] if isinstance(t, dict)]
    tactics = [t for t in traced if isinstance(t, str)]
    if not out.get("formal_proof") and tactics and len(tactics) == len(traced):
        out["formal_proof"] = tactics_proof(tactics)
    out["proof_origin"] = "found"
    return out


def _row_record(row: Any, where: str, repo: RepoInfo, line: int) -> tuple[dict[str, Any], bool]:
    """The theorem record of a dataset row, and whether it carries a proof."""
    from leantrain.lean.theorems import theorem_of_row

    if not isinstance(row, dict):
        raise DataError(where, f"expected a JSON object, got {type(row).__name__}")
    theorem = theorem_of_row(row, where)
    name = next((str(row[k]) for k in ("name", "uuid", "id") if row.get(k) is not None), None)
    statement = str(row["formal_statement"])
    proof = _proof(row, where, by_tail=bool(_BY_TAIL.search(statement.rstrip())))
    if proof is not None and contains_sorry(proof):
        proof = None
    record: dict[str, Any] = {
        "url": repo.url,
        "commit": repo.commit,
        "file_path": repo.url,
        "full_name": name or theorem.name,
        "theorem_statement": f"{theorem.statement} :=",
        "start": [line, 1],
        "end": [line, 1],
        "header": theorem.header or None,
        "formal_proof": proof,
        "proof_origin": "imported" if proof is not None else None,
        "difficulty": _difficulty(row, where),
    }
    if theorem.split is not None:
        record["split"] = theorem.split
    return {k: v for k, v in record.items() if v is not None}, proof is not None


def _proof_text(row: dict[str, Any], where: str) -> tuple[str, str] | None:
    """``(field, text)`` of the row's proof: ``formal_proof``, else the first of ``proof``
    (Lean Workbook), else ``formal_ground_truth`` (NuminaMath-LEAN, when ``complete``)."""
    value = row.get("formal_proof")
    if value is not None and not isinstance(value, str):
        raise DataError(
            where, f"expected a string, got {type(value).__name__}", field="formal_proof"
        )
    if value and value.strip():
        return "formal_proof", value
    proofs = row.get("proof")
    if isinstance(proofs, str):
        proofs = [proofs]
    if proofs is not None and (
        not isinstance(proofs, list) or not all(isinstance(p, str) for p in proofs)
    ):
        raise DataError(
            where, "expected a string or a list of strings", field="proof",
            hint="Lean Workbook's 'proof' is a list of proof texts",
        )  # fmt: skip
    for text in proofs or []:
        if text.strip():
            return "proof", text
    truth = row.get("formal_ground_truth")
    if (
        isinstance(truth, str)
        and truth.strip()
        and row.get("ground_truth_type") in (None, "complete")
    ):
        return "formal_ground_truth", truth
    return None


def _proof(row: dict[str, Any], where: str, *, by_tail: bool) -> str | None:
    """What follows the statement's ``:=``: from a whole theorem text (its own header and
    statement dropped), a ``by`` block or term as given, or — after a statement ending
    ``:= by`` (DeepSeek-Prover) — the tactics that continue it, as a ``by`` block."""
    from leantrain.lean.theorems import split_theorem_text

    found = _proof_text(row, where)
    if found is None:
        return None
    text = found[1]
    parts = split_theorem_text(text)
    if parts is not None:
        return parts[2] or None
    body = text.strip().removeprefix(":=").strip()
    if not body:
        return None
    if by_tail and not re.match(r"by\b", body):
        lines = text.strip("\n").rstrip().splitlines()
        if not lines[0].startswith((" ", "\t")):
            lines = ["  " + line if line.strip() else line for line in lines]
        return "\n".join(["by", *lines])
    return body


def _difficulty(row: dict[str, Any], where: str) -> float | None:
    """``1 - rl_data.win_rate`` (NuminaMath-LEAN), ``None`` without one."""
    rl = row.get("rl_data")
    if rl is None:
        return None
    rate = rl.get("win_rate") if isinstance(rl, dict) else rl
    if rate is None:
        return None
    if (
        isinstance(rate, bool)
        or not isinstance(rate, (int, float))
        or not math.isfinite(rate)
        or not 0 <= rate <= 1
    ):
        raise DataError(
            where,
            f"expected a number in [0, 1], got {rate!r}",
            field="rl_data.win_rate",
            hint='NuminaMath-LEAN\'s rl_data is {"win_rate": 0.25, …}',
        )
    return 1.0 - float(rate)


def with_source_proofs(items: Iterator[SourceItem], root: str | Path) -> Iterator[SourceItem]:
    """``items`` with each theorem's proof text read from the Lean sources under ``root`` (the
    traced repository at its commit): the declaration between the record's ``start`` and
    ``end`` split at its top-level ``:=`` gives ``formal_proof`` (``proof_origin:
    "source"``), and the statement and the file's header lines where the record has none. A
    theorem whose file is missing, whose span holds no such declaration (a ``where`` or match
    proof, a docstring first) or whose proof uses ``sorry`` is left as it was: its whole proof
    is then its traced tactics (``origin "tactics"``)."""
    root = Path(root)
    if not root.is_dir():
        raise DataError(
            root, "no such directory", hint="--lean-sources is the traced repository's checkout"
        )
    files: dict[str, tuple[str, list[int]] | None] = {}
    for item in items:
        if item.kind == "theorem":
            item.value = _source_proof(item.value, root, files)
        yield item


def _source_proof(record: Any, root: Path, files: dict[str, tuple[str, list[int]] | None]) -> Any:
    from leantrain.export.typed_records import TheoremRecord, to_dict
    from leantrain.lean.theorems import split_statement, split_theorem_text

    if type(record) is TheoremRecord:
        record = to_dict(record)
    if not isinstance(record, dict) or not isinstance(record.get("file_path"), str):
        return record
    path = record["file_path"]
    if path not in files:
        try:
            text = (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            files[path] = None
        else:
            starts = [0]
            for line in text.splitlines(keepends=True):
                starts.append(starts[-1] + len(line))
            files[path] = (text, starts)
    source = files[path]
    try:
        (a, b), (c, d) = record["start"], record["end"]
        begin, end = source[1][a - 1] + b - 1, source[1][c - 1] + d - 1  # type: ignore[index]
    except (TypeError, ValueError, IndexError):
        return record  # no file, or positions the model will name
    parts = split_theorem_text(source[0][begin:end])  # type: ignore[index]
    if parts is None or not parts[2] or contains_sorry(parts[2]):
        return record
    out = {**record, "formal_proof": parts[2], "proof_origin": "source"}
    if not out.get("theorem_statement"):
        out["theorem_statement"] = f"{parts[1]} :="
    if not out.get("header"):
        out["header"] = split_statement(source[0])[0] or None  # type: ignore[index]
    return out
