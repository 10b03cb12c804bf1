"""The summary of a proof-search run: proved / attempted, overall, by split and by repository.

The rate is named after the backend that measured it: under ``replay`` it is the **replay
proof rate** (a lower bound on the real proof rate: a proof that differs from the traced one
counts as a failure), under the Lean backends the proof rate — of re-checked proofs only.
It is given twice: over every theorem attempted, and over those the backend could start
(``…_excluding_init_failed``, as ReProver reports it: start-up failures left out).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def metric_key(metric: str) -> str:
    """``"replay proof rate"`` -> ``"replay_proof_rate"`` (the JSON key of the rate)."""
    return metric.replace(" ", "_")


def _counts(rows: list[Mapping[str, Any]], key: str) -> dict[str, Any]:
    proved = sum(bool(r["proved"]) for r in rows)
    return {
        "proved": proved,
        "attempted": len(rows),
        key: proved / len(rows) if rows else 0.0,
    }


def summarize(rows: Iterable[Mapping[str, Any]], metric: str) -> dict[str, Any]:
    """Counts and rate over ``rows`` (result rows), overall and ``by_split`` / ``by_repository``;
    ``statuses`` counts how each search ended, ``mean_*`` its costs."""
    rows = list(rows)
    key = metric_key(metric)
    groups: dict[str, dict[str, list[Mapping[str, Any]]]] = {"split": {}, "repository": {}}
    statuses: dict[str, int] = {}
    for r in rows:
        groups["split"].setdefault(str(r.get("split", "")), []).append(r)
        groups["repository"].setdefault(str(r.get("repository", "")), []).append(r)
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    n = len(rows) or 1
    started = [r for r in rows if r.get("status") != "init_failed"]
    return {
        "metric": metric,
        **_counts(rows, key),
        "init_failed": len(rows) - len(started),
        f"{key}_excluding_init_failed": (
            sum(bool(r["proved"]) for r in started) / len(started) if started else 0.0
        ),
        "rejected": statuses.get("rejected", 0),
        "tactics_cut_off": sum(int(r.get("tactics_cut_off", 0) or 0) for r in rows),
        "by_split": {s: _counts(g, key) for s, g in sorted(groups["split"].items())},
        "by_repository": {s: _counts(g, key) for s, g in sorted(groups["repository"].items())},
        "statuses": dict(sorted(statuses.items())),
        "mean_expansions": sum(r.get("expansions", 0) for r in rows) / n,
        "mean_tactics_tried": sum(r.get("tactics_tried", 0) for r in rows) / n,
        "mean_time_s": sum(r.get("time_s", 0.0) for r in rows) / n,
    }


def one_line(summary: Mapping[str, Any]) -> str:
    """``replay proof rate: 3/8 (37.5 %)`` — the headline of a summary."""
    key = metric_key(summary["metric"])
    line = (
        f"{summary['metric']}: {summary['proved']}/{summary['attempted']} "
        f"({100 * summary[key]:.1f} %)"
    )
    if summary["metric"].startswith("replay"):
        line += " — a lower bound: proofs other than the traced ones count as failures"
        line += " (replay proofs are the traced ones: not re-checked in Lean)"
    else:
        line += " — every proof re-checked in a fresh Lean environment"
    if summary.get("init_failed"):
        rest = summary.get(f"{key}_excluding_init_failed", 0.0)
        line += f"; {100 * rest:.1f} % without the {summary['init_failed']} start-up failures"
    if summary.get("rejected"):
        line += f"; {summary['rejected']} found proofs rejected by the re-check"
    return line
