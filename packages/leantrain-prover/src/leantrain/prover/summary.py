"""The summary of a proof-search run: proved / attempted, overall, by split and by repository.

The rate is named after the backend that measured it: under ``replay`` it is the **replay
proof rate** (a lower bound on the real proof rate: a proof that differs from the traced one
counts as a failure), under the Lean backends the proof rate — of re-checked proofs only.
It is given twice: over every theorem attempted, and over those the backend could start
(``…_excluding_init_failed``, as ReProver reports it: start-up failures left out).

With several attempts per theorem (``--attempts k``), a theorem is proved when any attempt
proved it; ``pass_at_k`` gives pass@1 … pass@k over the theorems with all ``k`` attempts done
(:func:`leantrain.prover.passk.pass_at_k_table`). ``statuses``, the ``mean_*`` costs and the
``ledger`` are over searches (one per attempt); the ledger sums each row's budget and gives
theorems proved per 1,000 Lean calls, so runs with different budgets compare.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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


LEDGER = {
    "wall_s": "wall_s",
    "startup_s": "startup_s",
    "search_s": "time_s",
    "generator_s": "generator_time_s",
    "lean_s": "backend_time_s",
    "recheck_s": "recheck_s",
    "lean_calls": "lean_calls",
    "tokens_generated": "tokens_generated",
    "expansions": "expansions",
}
"""Ledger key -> the result-row field it sums."""


def ledger(rows: Sequence[Mapping[str, Any]], proved: int) -> dict[str, Any]:
    """The budget the searches in ``rows`` spent (sums; seconds summed over workers), and
    ``proved`` theorems per 1,000 Lean calls."""
    out: dict[str, Any] = {}
    for name, field in LEDGER.items():
        total = sum(r.get(field) or 0 for r in rows)
        out[name] = round(total, 4) if isinstance(total, float) else total
    calls = out["lean_calls"]
    out["proved_per_1000_lean_calls"] = 1000 * proved / calls if calls else 0.0
    return out


def _theorems(rows: list[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Each theorem's rows (one per attempt), in the order the theorems first appear."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        out.setdefault(str(r.get("id", len(out))), []).append(r)
    for tries in out.values():  # rows of Ray workers come back in any order
        tries.sort(key=lambda r: int(r.get("attempt", 0) or 0))
    return out


def summarize(
    rows: Iterable[Mapping[str, Any]], metric: str, attempts: int | None = None
) -> dict[str, Any]:
    """Counts and rate over the theorems of ``rows`` (result rows; a theorem is proved when an
    attempt proved it), overall and ``by_split`` / ``by_repository``; ``pass_at_k`` over the
    theorems with ``attempts`` attempts (default: the most any theorem has); ``statuses``
    counts how each search ended, ``mean_*`` its costs, ``ledger`` the budget spent."""
    from leantrain.prover.passk import pass_at_k_table

    searches = list(rows)
    by_theorem = _theorems(searches)
    rows = [
        {
            **tries[0],
            "proved": any(bool(r["proved"]) for r in tries),
            "status": "init_failed"
            if all(r.get("status") == "init_failed" for r in tries)
            else tries[0]["status"],
        }
        for tries in by_theorem.values()
    ]
    n_attempts = attempts or max((len(t) for t in by_theorem.values()), default=1)
    complete = {
        i: [bool(r["proved"]) for r in tries[:n_attempts]]
        for i, tries in by_theorem.items()
        if len(tries) >= n_attempts
    }
    key = metric_key(metric)
    groups: dict[str, dict[str, list[Mapping[str, Any]]]] = {"split": {}, "repository": {}}
    statuses: dict[str, int] = {}
    for r in rows:
        groups["split"].setdefault(str(r.get("split", "")), []).append(r)
        groups["repository"].setdefault(str(r.get("repository", "")), []).append(r)
    for r in searches:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    n = len(searches) or 1
    started = [r for r in rows if r.get("status") != "init_failed"]
    proved = sum(bool(r["proved"]) for r in rows)
    return {
        "metric": metric,
        **_counts(rows, key),
        "init_failed": len(rows) - len(started),
        f"{key}_excluding_init_failed": (
            sum(bool(r["proved"]) for r in started) / len(started) if started else 0.0
        ),
        "rejected": statuses.get("rejected", 0),
        "tactics_cut_off": sum(int(r.get("tactics_cut_off", 0) or 0) for r in searches),
        "attempts": n_attempts,
        "searches": len(searches),
        "pass_at_k": pass_at_k_table(complete),
        "pass_at_k_theorems": len(complete),
        "by_split": {s: _counts(g, key) for s, g in sorted(groups["split"].items())},
        "by_repository": {s: _counts(g, key) for s, g in sorted(groups["repository"].items())},
        "statuses": dict(sorted(statuses.items())),
        "mean_expansions": sum(r.get("expansions", 0) for r in searches) / n,
        "mean_tactics_tried": sum(r.get("tactics_tried", 0) for r in searches) / n,
        "mean_time_s": sum(r.get("time_s", 0.0) for r in searches) / n,
        "ledger": ledger(searches, proved),
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
    if summary.get("attempts", 1) > 1 and summary.get("pass_at_k"):
        table = ", ".join(f"{k} {100 * v:.1f} %" for k, v in summary["pass_at_k"].items())
        line += f"; {table} ({summary['pass_at_k_theorems']} theorems)"
    return line
