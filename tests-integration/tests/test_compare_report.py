"""`leantrain compare` and the report's forgetting section, on runs the engine wrote with a
trainer whose scores are known by construction."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from it_support import leantrain_cmd
from leantrain.core.lifelong import LifelongEngine, Step
from leantrain.pipeline.compare import compare_runs
from leantrain.pipeline.report import render_report

REPOS = ["https://x/a@1", "https://x/b@2", "https://x/c@3"]


class Db:
    def export_merged_data(self, repos: list[str], path: Path) -> None:
        rows = [{"url": r.split("@")[0], "commit": r.split("@")[1], "full_name": r} for r in repos]
        for strategy in ("random", "novel_premises"):
            (path / strategy).mkdir(parents=True)
            (path / strategy / "test.json").write_text(json.dumps(rows))


class Memory:
    """Remembers the last ``keep`` repositories: score 1 on those, 0 on older ones."""

    name, score_key, higher_is_better = "retrieval", "R@10", True

    def __init__(self, keep: int) -> None:
        self.keep, self.seen = keep, []

    def train_step(self, step: Step) -> dict[str, Any]:
        self.seen = [*self.seen, step.repo]
        return {}

    def evaluate(self, data: Any, split: str = "test") -> dict[str, float]:
        rows = json.loads((Path(data) / "random" / f"{split}.json").read_text())
        return {"R@10": sum(r["full_name"] in self.seen[-self.keep :] for r in rows) / len(rows)}

    def save(self, path: Path) -> None:
        (path / "seen.json").write_text(json.dumps(self.seen))

    def load(self, path: Path) -> None:
        self.seen = json.loads((path / "seen.json").read_text())


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "forgetful", tmp_path / "stable"
    LifelongEngine(a, [Memory(keep=1)], database=Db(), repos=REPOS).run()
    LifelongEngine(b, [Memory(keep=3)], database=Db(), repos=REPOS).run()
    return a, b


@pytest.mark.slow
def test_compare_shows_the_stable_run_forgets_less(two_runs: tuple[Path, Path]) -> None:
    rows = {r["metric"]: r for r in compare_runs(*two_runs)}
    assert rows["BWT (R@10)"]["a"] == pytest.approx(-1.0)
    assert rows["BWT (R@10)"]["b"] == pytest.approx(0.0)
    assert rows["forgetting (R@10)"]["delta"] == pytest.approx(-1.0)
    assert rows["ACC (R@10)"]["a"] == pytest.approx(1 / 3)
    assert rows["test_R@10"]["b"] == pytest.approx(1.0)
    out = subprocess.run(
        [*leantrain_cmd(), "compare", *map(str, two_runs)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "BWT (R@10)" in out.stdout


@pytest.mark.slow
def test_compare_refuses_a_directory_that_is_not_a_run(tmp_path: Path) -> None:
    out = subprocess.run(
        [*leantrain_cmd(), "compare", str(tmp_path), str(tmp_path)], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert "not a leantrain run directory" in out.stderr
    assert "Traceback" not in out.stderr


def test_report_has_the_forgetting_heatmap_and_numbers(two_runs: tuple[Path, Path]) -> None:
    report = render_report(two_runs[0]).read_text()
    assert "| retrieval | R@10 ↑ | 0.3333 | -1.0000 | 1.0000 | a 1.0000, b 1.0000 |" in report
    assert (two_runs[0] / "plots" / "retrieval_forgetting.png").read_bytes()[:4] == b"\x89PNG"
    assert "plots/retrieval_forgetting.png" in report
