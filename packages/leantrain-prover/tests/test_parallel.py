"""Provers on Ray (``--num-workers``): the same rows as one process, one shared generator whose
batches hold several workers' states, and a resume that skips what is done. Starts a local Ray
instance (slow tier)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from leantrain.prover import Prover, ReplayBackend
from leantrain.prover.theorems import load_split
from prover_helpers import SHARED_DATA, TracedOracle

ray = pytest.importorskip("ray", reason="needs leantrain-prover[ray] (the dev group has it)")
pytestmark = pytest.mark.slow
TIMES = ("time_s", "generator_time_s", "backend_time_s", "wall_s", "startup_s", "recheck_s")


@pytest.fixture(scope="module")
def local_ray():
    # the workers import the test helpers (the generator copied to the service is one of them)
    here = str(Path(__file__).parent)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": here}},
    )
    yield
    ray.shutdown()


def _rows(out):
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return sorted(({k: v for k, v in r.items() if k not in TIMES} for r in rows), key=str)


def _run(data, out, known, **kw):
    return Prover(
        tactic_generator=TracedOracle(known),
        lean_backend=ReplayBackend(),
        data=str(data),
        output_dir=str(out),
        progress_bar=False,
        **kw,
    ).evaluate()


def test_two_workers_give_the_rows_of_one_resume_it_and_share_one_generator(local_ray, tmp_path):
    data = SHARED_DATA / "mathlib-sample" / "test.json"
    if not data.is_file():
        pytest.skip(f"needs the shared Lean data ({data})")
    theorems = load_split(data, "test", limit=8)
    settings = {"max_theorems": 8, "max_expansions": 6}
    one = _run(data, tmp_path / "one", theorems, **settings)
    # a run one process began (killed after its first theorem) resumes on two workers
    first = _run(data, tmp_path / "two", theorems, **settings, theorems=[theorems[0].full_name])
    two = _run(data, tmp_path / "two", theorems, **settings, num_workers=2)
    assert _rows(tmp_path / "one") == _rows(tmp_path / "two")
    assert two["proved"] == one["proved"] > 0
    service = two["generation_service"]
    assert service["workers"] == 2
    assert service["requests"] == two["ledger"]["expansions"] - first["ledger"]["expansions"]
    assert service["generator_calls"] <= service["requests"]
    assert 0.5 <= service["batch_fill"] <= 1.0
    written = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert written["generation_service"] == service
