"""The output directory of a proof-search run, written so that a killed run resumes.

``results.jsonl``
    one row per search (a theorem, or one of its ``--attempts``), appended and fsynced as each
    search ends; a line cut by a kill is dropped when the run resumes (and that search is run
    again). Rows of shards (``--shard i/n``) merge by concatenation (:func:`merge_runs`).
``negatives.jsonl``
    the failed tactics of each expanded state (``id``, ``attempt``, ``state``, ``tactic``,
    ``error``, ``logprob``): rejected examples for preference training. Written before the
    search's row; a resumed run drops those of searches without a row.
``prover_config.json``
    the settings the rows were produced with; resuming with different settings (other than
    :data:`~leantrain.prover.prover_config.UNTRACKED_KEYS`) is an error naming the keys.
``summary.json``
    proved / attempted by split and repository (:mod:`leantrain.prover.summary`), rewritten
    atomically after every theorem.
``proofs.json``
    the proofs found, as LeanDojo theorem records with ``traced_tactics`` (``tactic``,
    ``annotated_tactic``, ``state_before``, ``state_after``): a split file that
    ``leantrain export import`` reads as new training data. Rewritten atomically.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_bytes, atomic_write_json
from leantrain.core.errors import ConfigError
from leantrain.core.output_dir import check_output_dir, claim_output_dir
from leantrain.prover.summary import summarize

OUTPUT_KIND = "proofs"
RESULTS = "results.jsonl"
CONFIG = "prover_config.json"
SUMMARY = "summary.json"
PROOFS = "proofs.json"
NEGATIVES = "negatives.jsonl"


def row_key(row: Mapping[str, Any]) -> tuple[str, int]:
    """The search a row records: its theorem id and attempt (rows before attempts: 0)."""
    return str(row["id"]), int(row.get("attempt", 0) or 0)


def read_rows(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The whole JSON lines of ``path`` (none when it is missing) and the bytes they take: a
    line cut by a kill, and anything after it, is not read."""
    if not path.is_file():
        return [], 0
    rows, good = [], 0
    for line in path.read_bytes().splitlines(keepends=True):
        if not line.endswith(b"\n"):
            break  # cut by a kill mid-write
        try:
            rows.append(json.loads(line))
        except ValueError:
            break
        good += len(line)
    return rows, good


def _append(path: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    with path.open("a", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _changed(
    old: Mapping[str, Any], new: Mapping[str, Any], defaults: Mapping[str, Any] | None = None
) -> list[str]:
    """Keys whose values differ, a key one side did not record read as its default: a setting
    added since an older run, or removed since, keeps that run resumable at its default."""
    defaults = defaults or {}
    return sorted(
        k for k in set(old) | set(new) if old.get(k, defaults.get(k)) != new.get(k, defaults.get(k))
    )


class ResultStore:
    """Rows of one run directory: :meth:`open` checks and claims it, :meth:`add` appends."""

    def __init__(
        self,
        output_dir: str | Path,
        config: Mapping[str, Any],
        metric: str,
        defaults: Mapping[str, Any] | None = None,
        attempts: int | None = None,
    ) -> None:
        self.dir = Path(output_dir)
        self.config = dict(config)
        self.defaults = dict(defaults or {})
        self.metric = metric
        self.attempts = attempts
        self.rows: list[dict[str, Any]] = []
        self.extra: dict[str, Any] = {}
        """Added to the summary (the generation service's statistics of a run on Ray)."""

    def check(self) -> None:
        """Raise :class:`ConfigError` unless the run can write here (nothing is written)."""
        check_output_dir(self.dir, kind=OUTPUT_KIND)
        saved = self.dir / CONFIG
        if saved.is_file():
            try:
                old = json.loads(saved.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise ConfigError(
                    f"{saved}: unreadable ({e})", hint="give a new --output-dir"
                ) from None
            changed = _changed(old, self.config, self.defaults)
            if changed:
                raise ConfigError(
                    f"{self.dir} holds proof results made with a different config "
                    f"(changed: {', '.join(changed)})",
                    hint="rerun with the same settings to resume, or give a new --output-dir",
                )

    def open(self) -> set[tuple[str, int]]:
        """Claim the directory, record the config, load earlier rows; the searches already
        done (:func:`row_key`)."""
        self.check()
        claim_output_dir(self.dir, kind=OUTPUT_KIND)
        if not (self.dir / CONFIG).is_file():
            atomic_write_json(self.dir / CONFIG, self.config)
        path = self.dir / RESULTS
        self.rows, good = read_rows(path)
        if path.is_file() and good < path.stat().st_size:
            with path.open("r+b") as f:  # drop the damaged tail before appending
                f.truncate(good)
        done = {row_key(r) for r in self.rows}
        negatives = self.dir / NEGATIVES
        if negatives.is_file():  # a search killed after its negatives: they come again
            kept, good = read_rows(negatives)
            whole = [n for n in kept if row_key(n) in done]
            if len(whole) < len(kept) or good < negatives.stat().st_size:
                text = "".join(json.dumps(n, ensure_ascii=False) + "\n" for n in whole)
                atomic_write_bytes(negatives, text.encode("utf-8"))
        return done

    def add(self, row: dict[str, Any]) -> None:
        """Append ``row`` durably (its ``negatives`` to ``negatives.jsonl`` first), then
        rewrite the summary and the proofs file."""
        row = dict(row)
        negatives = row.pop("negatives", None) or []
        key = {"id": row["id"], "attempt": row.get("attempt", 0)}
        _append(self.dir / NEGATIVES, [{**key, **n} for n in negatives])
        _append(self.dir / RESULTS, [row])
        self.rows.append(row)
        self.write_summary()
        if row["proved"]:
            self.write_proofs()

    def summary(self) -> dict[str, Any]:
        """:func:`~leantrain.prover.summary.summarize` of the rows so far."""
        return {**summarize(self.rows, self.metric, self.attempts), **self.extra}

    def write_summary(self) -> None:
        """Write ``summary.json`` (atomically)."""
        atomic_write_json(self.dir / SUMMARY, self.summary())

    def write_proofs(self) -> None:
        """Write ``proofs.json``: the found proofs in the traced format, one per theorem (its
        first proved attempt), atomically."""
        atomic_write_json(self.dir / PROOFS, proofs(self.rows))


def proofs(rows: list[dict[str, Any]]) -> list[Any]:
    """The traced records of the theorems ``rows`` proved, one per theorem."""
    seen: set[str] = set()
    out = []
    for r in rows:
        if r["proved"] and r["id"] not in seen:
            seen.add(r["id"])
            out.append(r["traced"])
    return out


def merge_runs(runs: Sequence[str | Path], output_dir: str | Path) -> dict[str, Any]:
    """Merge the run directories ``runs`` (the shards of one run: the same recorded config)
    into ``output_dir``: their ``results.jsonl`` and ``negatives.jsonl`` concatenated, the
    config, and the summary and proofs recomputed. The summary; one-line errors for a
    directory that holds no run, runs made with different configs, or a search in two runs."""

    dirs = [Path(r) for r in runs]
    configs, rows, negatives, metric, attempts = [], [], [], "", 1
    seen: dict[tuple[str, int], Path] = {}
    for d in dirs:
        if not (d / CONFIG).is_file() or not (d / RESULTS).is_file():
            raise ConfigError(
                f"{d}: no proof run here (no {CONFIG} and {RESULTS})",
                hint="give the --output-dir of each 'leantrain prove --shard i/n' run",
            )
        configs.append(json.loads((d / CONFIG).read_text(encoding="utf-8")))
        changed = _changed(configs[0], configs[-1])
        if changed:
            raise ConfigError(
                f"{d} was made with another config than {dirs[0]} (changed: {', '.join(changed)})",
                hint="merge only the shards of one run",
            )
        got, _ = read_rows(d / RESULTS)
        for r in got:
            if row_key(r) in seen:
                raise ConfigError(
                    f"{d} and {seen[row_key(r)]} both hold {r.get('full_name')} "
                    f"(attempt {row_key(r)[1]})",
                    hint="merge each shard once; shards of one run never overlap",
                )
            seen[row_key(r)] = d
        rows += got
        negatives += read_rows(d / NEGATIVES)[0]
        summary = d / SUMMARY
        if summary.is_file():
            recorded = json.loads(summary.read_text(encoding="utf-8"))
            metric = metric or str(recorded.get("metric", ""))
            attempts = max(attempts, int(recorded.get("attempts", 1) or 1))
    out = Path(output_dir)
    store = ResultStore(out, configs[0], metric or "proof rate", attempts=attempts)
    if store.open():
        raise ConfigError(
            f"--output-dir {out} already holds results", hint="merge into a new directory"
        )
    _append(out / NEGATIVES, negatives)
    _append(out / RESULTS, rows)
    store.rows = rows
    store.write_summary()
    store.write_proofs()
    return store.summary()
