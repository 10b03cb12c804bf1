"""Curriculum: theorem difficulty and repository order, easiest first (as LeanAgent does).

* Difficulty of a theorem with ``n`` traced proof steps (tactics) is ``e^n``; a theorem whose
  proof uses ``sorry`` is infinitely hard; a theorem with no traced steps has no difficulty.
* Over all theorems of the repositories being ordered (those with a finite difficulty), the
  33rd and 67th percentiles split them into Easy (``<= p33``), Medium (``<= p67``) and Hard.
  Theorems without difficulty are dealt out evenly to the three classes, ``sorry`` ones count
  as Hard.
* An **imported difficulty** (the record's ``difficulty`` in [0, 1], e.g. NuminaMath-LEAN's
  ``1 - win_rate``: the share of a reference prover's attempts that failed) classifies its
  theorem directly, before its steps: Easy when ``<= 1/3``, Medium when ``<= 2/3``, else Hard.
  It is a measured failure rate, an absolute scale, so it is cut at fixed thirds rather than at
  percentiles (a percentile split of one file's rates would make a third of any file Easy,
  the even deal it replaces), and it is never mixed into the step percentiles (``e^n`` and a
  failure rate share no scale). Such theorems (imported rows have no traced steps) used to be
  dealt out evenly; ``sorry`` ones still count as Hard.
* Repositories are ordered by their number of Easy theorems, most first (LeanAgent's rule);
  ties go to fewer Hard theorems, then to the lower mean ``log difficulty`` (= mean steps),
  then to the id, so the order is total and deterministic.

Percentiles are taken over ``n`` rather than ``e^n`` (same classes, since ``exp`` is
increasing and a threshold never falls strictly between two equal values) to avoid overflow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from leantrain.export.repository import RepositoryReader


def _percentile(sorted_values: list[int], q: float) -> float:
    """Linear-interpolation percentile (numpy's default) of a sorted list."""
    if not sorted_values:
        return math.inf
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclass
class RepoDifficulty:
    """A repository's place in the curriculum."""

    repo_id: str
    easy: int
    medium: int
    hard: int
    mean_steps: float

    def to_json(self) -> dict[str, object]:
        return {
            "repo": self.repo_id,
            "easy": self.easy,
            "medium": self.medium,
            "hard": self.hard,
            "mean_steps": round(self.mean_steps, 3),
        }


def order_repositories(
    db: RepositoryReader, repos: list[str] | None = None
) -> list[RepoDifficulty]:
    """The repositories (all when None), easiest first, with their difficulty classes."""
    row_ids = db.repo_row_ids(repos)
    per_repo: dict[int, list[tuple[int, int, float | None]]] = {r: [] for r in row_ids}
    marks = ",".join("?" * len(row_ids)) or "NULL"
    for rid, steps, sorry, imported in db.conn.execute(
        "SELECT repo_id, num_tactics, status != 'proven', json_extract(extra, '$.difficulty') "
        f"FROM theorems WHERE repo_id IN ({marks})",
        row_ids,
    ):
        per_repo[rid].append((steps, sorry, imported))
    finite = sorted(
        s for rows in per_repo.values() for s, sorry, d in rows if not sorry and d is None and s > 0
    )
    p33, p67 = _percentile(finite, 33), _percentile(finite, 67)
    ids = {r.row_id: r.id for r in db.list_repositories()}
    out = []
    for rid, rows in per_repo.items():
        counts = [0, 0, 0]
        undistributed = 0
        for steps, sorry, imported in rows:
            if sorry:
                counts[2] += 1
            elif isinstance(imported, (int, float)):
                counts[0 if imported <= 1 / 3 else 1 if imported <= 2 / 3 else 2] += 1
            elif steps <= 0:
                undistributed += 1
            else:
                counts[0 if steps <= p33 else 1 if steps <= p67 else 2] += 1
        chunk = undistributed // 3
        counts[0] += chunk
        counts[1] += chunk
        counts[2] += undistributed - 2 * chunk
        steps_list = [s for s, sorry, _ in rows if not sorry and s > 0]
        mean = sum(steps_list) / len(steps_list) if steps_list else math.inf
        out.append(RepoDifficulty(ids[rid], counts[0], counts[1], counts[2], mean))
    out.sort(key=lambda d: (-d.easy, d.hard, d.mean_steps, d.repo_id))
    return out
