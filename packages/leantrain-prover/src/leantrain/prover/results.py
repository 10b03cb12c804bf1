"""The output directory of a proof-search run, written so that a killed run resumes.

``results.jsonl``
    one row per theorem attempted, appended and fsynced as each search ends; a line cut by a
    kill is dropped when the run resumes (and that theorem is proved again).
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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_json
from leantrain.core.errors import ConfigError
from leantrain.core.output_dir import check_output_dir, claim_output_dir
from leantrain.prover.summary import summarize

OUTPUT_KIND = "proofs"
RESULTS = "results.jsonl"
CONFIG = "prover_config.json"
SUMMARY = "summary.json"
PROOFS = "proofs.json"


def _changed(
    old: Mapping[str, Any], new: Mapping[str, Any], defaults: Mapping[str, Any] | None = None
) -> list[str]:
    """Keys whose values differ; a key an older run did not record is unchanged when the new
    value is its default (a setting added since keeps older runs resumable)."""
    defaults = defaults or {}
    return sorted(
        k
        for k in set(old) | set(new)
        if old.get(k) != new.get(k)
        and not (k not in old and k in defaults and new.get(k) == defaults[k])
    )


class ResultStore:
    """Rows of one run directory: :meth:`open` checks and claims it, :meth:`add` appends."""

    def __init__(
        self,
        output_dir: str | Path,
        config: Mapping[str, Any],
        metric: str,
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        self.dir = Path(output_dir)
        self.config = dict(config)
        self.defaults = dict(defaults or {})
        self.metric = metric
        self.rows: list[dict[str, Any]] = []

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

    def open(self) -> set[str]:
        """Claim the directory, record the config, load earlier rows; the ids already done."""
        self.check()
        claim_output_dir(self.dir, kind=OUTPUT_KIND)
        if not (self.dir / CONFIG).is_file():
            atomic_write_json(self.dir / CONFIG, self.config)
        self.rows = self._load()
        return {r["id"] for r in self.rows}

    def _load(self) -> list[dict[str, Any]]:
        path = self.dir / RESULTS
        if not path.is_file():
            return []
        data = path.read_bytes()
        rows, good = [], 0
        for line in data.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break  # cut by a kill mid-write
            try:
                rows.append(json.loads(line))
            except ValueError:
                break
            good += len(line)
        if good < len(data):
            with path.open("r+b") as f:  # drop the damaged tail before appending
                f.truncate(good)
        return rows

    def add(self, row: dict[str, Any]) -> None:
        """Append ``row`` durably, then rewrite the summary and the proofs file."""
        line = json.dumps(row, ensure_ascii=False) + "\n"
        with (self.dir / RESULTS).open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        self.rows.append(row)
        self.write_summary()
        if row["proved"]:
            self.write_proofs()

    def summary(self) -> dict[str, Any]:
        """:func:`~leantrain.prover.summary.summarize` of the rows so far."""
        return summarize(self.rows, self.metric)

    def write_summary(self) -> None:
        """Write ``summary.json`` (atomically)."""
        atomic_write_json(self.dir / SUMMARY, self.summary())

    def write_proofs(self) -> None:
        """Write ``proofs.json``: the found proofs in the traced format (atomically)."""
        atomic_write_json(self.dir / PROOFS, [r["traced"] for r in self.rows if r["proved"]])
