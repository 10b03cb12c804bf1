"""The prover on leantrain-lean's leandojo backend (the fake of lean-dojo 4.20 in
packages/leantrain-lean/tests): the search goes on after a tactic timeout, a theorem LeanDojo
cannot start is ``init_failed``, any exception is that theorem's ``error`` row and a resume
moves past it, an untraced repository is one line before any model loads."""

from __future__ import annotations

import json
import re

import fake_lean_dojo as ld
import pytest
from leantrain.core.errors import ConfigError
from leantrain.core.schemas import Theorem
from leantrain.prover import LeanDojoBackend, Prover, SearchSettings, best_first_search
from leantrain.prover.prover import make_backend
from leantrain.prover.prover_config import ProverConfig
from prover_helpers import ScriptedGenerator

ROOT = "p q : Prop\n⊢ p → p ∨ q"
H = "p q : Prop\nh : p\n⊢ p ∨ q"


def _theorem(name="t.or", url="https://github.com/x/r", commit="abc"):
    return Theorem.model_validate(
        {
            "url": url,
            "commit": commit,
            "file_path": "R/Basic.lean",
            "full_name": name,
            "start": [1, 1],
            "end": [2, 1],
        }
    )


@pytest.fixture(autouse=True)
def _fresh_fake():
    ld.LOG.clear()
    ld.REPOS.clear()
    ld.SLOW_TIMEOUTS["left"] = None


def _prover(gen, tmp_path=None, **kw):
    return Prover(
        tactic_generator=gen,
        lean_backend=LeanDojoBackend(lean_dojo=ld),
        backend="leandojo",
        progress_bar=False,
        output_dir=str(tmp_path) if tmp_path else "",
        **kw,
    )


def test_make_backend_builds_leandojo_with_its_own_start_up_timeout():
    cfg = ProverConfig(backend="leandojo", tactic_timeout=5, start_timeout=900)
    backend = make_backend(cfg, lean_dojo=ld)
    assert isinstance(backend, LeanDojoBackend)
    assert (backend.tactic_timeout, backend.start_timeout) == (5.0, 900.0)
    assert ProverConfig().start_timeout == 600.0  # ReProver's start-up budget by default


def test_a_tactic_timeout_no_longer_ends_the_theorem():
    gen = ScriptedGenerator(
        {ROOT: [("slow", -0.1), ("intro h", -0.2)], H: [("exact Or.inl h", -0.1)]}
    )
    result = best_first_search(
        LeanDojoBackend(lean_dojo=ld).start(_theorem()), gen, SearchSettings()
    )
    assert result.proved and [s.tactic for s in result.proof] == ["intro h", "exact Or.inl h"]


def test_rows_init_failed_error_and_a_rechecked_proof(tmp_path):
    gen = ScriptedGenerator({ROOT: [("intro h", -0.1)], H: [("exact Or.inl h", -0.1)]})
    prover = _prover(gen)
    row = prover.prove(_theorem("t.unknown"), "test")
    assert row["status"] == "init_failed" and "DojoInitError" in row["error"]
    row = prover.prove(_theorem(), "test")
    assert row["status"] == "proved" and row["checked"] and row["proved"]
    assert ld.LOG.count(("enter", "t.or", 600)) == 2  # the search, then a fresh Dojo re-checks
    boom = _prover(ScriptedGenerator({ROOT: [("boom", -0.1)]})).prove(_theorem(), "test")
    assert boom["status"] == "error" and boom["error"].startswith("AssertionError")


class Exploding:
    """A generator that raises an exception nobody declared on the first theorem only."""

    def __init__(self):
        self.calls = 0

    def propose(self, states, k):
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("CUDA out of memory")
        return [[("intro h", -0.1)] if s == ROOT else [("exact Or.inl h", -0.1)] for s in states]


def test_any_exception_is_an_error_row_the_run_goes_on_and_a_resume_moves_past_it(tmp_path):
    ld.THEOREMS["t.or2"] = ld.THEOREMS["t.or"]
    try:
        theorems = [_theorem(), _theorem("t.or2")]
        summary = _prover(Exploding(), tmp_path).evaluate(theorems, split="test")
        assert summary["statuses"] == {"error": 1, "proved": 1}
        rows = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
        assert (
            rows[0]["status"] == "error" and "RuntimeError: CUDA out of memory" in rows[0]["error"]
        )
        gen = Exploding()
        gen.calls = 1  # would not raise again, but the theorem is not proved again either
        again = _prover(gen, tmp_path).evaluate(theorems, split="test")
        assert gen.calls == 1 and again["statuses"] == {"error": 1, "proved": 1}
    finally:
        del ld.THEOREMS["t.or2"]


def test_an_untraced_repository_is_one_line_before_any_search(tmp_path):
    gen = ScriptedGenerator({})
    with pytest.raises(
        ConfigError, match=re.escape("leantrain export trace https://github.com/x/new def")
    ):
        _prover(gen, tmp_path).evaluate([_theorem(url="https://github.com/x/new", commit="def")])
    assert gen.calls == [] and ld.LOG == []
