"""tools/bench/prover.py's pure helpers: the synthetic backend of the throughput section, the
replay ceiling's generator, the figures and the report (no model is loaded)."""

from __future__ import annotations

import importlib.util

from leantrain.core.schemas import Theorem
from leantrain.prover.replay import ReplayBackend
from leantrain.prover.search import SearchSettings, best_first_search
from leantrain_tools.workspace import REPO_ROOT

_spec = importlib.util.spec_from_file_location(
    "bench_prover", REPO_ROOT / "tools" / "bench" / "prover.py"
)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _theorem(name: str, steps: list[tuple[str, str, str]]) -> Theorem:
    return Theorem.model_validate(
        {
            "url": "https://example.com/r",
            "commit": "0" * 40,
            "file_path": "A.lean",
            "full_name": name,
            "start": [1, 1],
            "end": [2, 1],
            "traced_tactics": [
                {"tactic": t, "state_before": b, "state_after": a} for t, b, a in steps
            ],
        }
    )


PROVED = _theorem("two", [("intro x", "⊢ P", "x ⊢ Q"), ("exact  h x", "x ⊢ Q", "no goals")])
EMPTY = _theorem("none", [])


def test_with_traced_proof_and_state_pool():
    assert bench.with_traced_proof([EMPTY, PROVED]) == [PROVED]
    assert bench.state_pool([PROVED, PROVED]) == ["x ⊢ Q", "⊢ P"]


def test_traced_tactics_generator_is_the_replay_ceiling():
    gen = bench.TracedTacticsGenerator([PROVED])
    assert gen.propose(["x  ⊢ Q", "other"], 8) == [[("exact  h x", 0.0)], []]
    session = ReplayBackend().start(PROVED)
    result = best_first_search(session, gen, SearchSettings(max_expansions=4))
    assert result.proved and [s.tactic for s in result.proof] == ["intro x", "exact  h x"]


def test_every_tactic_backend_grows_the_frontier_deterministically():
    backend = bench.EveryTacticBackend(["s1", "s2", "s3"])
    session = backend.start(PROVED)
    assert session.initial_state.pp == "⊢ P"
    a = session.run(session.initial_state, "simp")
    assert a.kind == "state" and a.state.pp in {"s1", "s2", "s3"}
    assert session.run(session.initial_state, " simp ").state.pp == a.state.pp

    class Gen:
        def propose(self, states, k):
            return [[(f"t{i}", -1.0) for i in range(k)] for _ in states]

    counter = bench.CountingGenerator(Gen())
    result = best_first_search(
        session, counter, SearchSettings(num_sampled_tactics=2, max_expansions=3)
    )
    assert result.status == "budget" and result.expansions == 3 and counter.tactics == 6


def test_speed_ratio_and_render():
    counter = bench.CountingGenerator(None)
    counter.tactics, counter.calls, counter.states, counter.prompt_chars = 40, 5, 5, 500
    rows = [{"time_s": 4.0, "expansions": 5, "tactics_tried": 40}]
    s = bench.speed(rows, counter)
    assert s["expansions_per_s"] == 1.25 and s["tactics_per_s"] == 10.0
    assert s["mean_prompt_chars"] == 100
    res = {
        "throughput": {
            "modes": {"one": s, "batched": {**s, "expansions_per_s": 2.5, "tactics_per_s": 20.0}},
            "ratio_expansions_per_s": 2.0,
            "ratio_tactics_per_s": 2.0,
            "config": {
                "generator": "g",
                "theorems": ["two"],
                "k": 8,
                "decoding": "beam",
                "max_new_tokens": 64,
                "max_expansions": 5,
                "backend": "every-tactic (synthetic)",
                "state_pool": 3,
                "expansion_batch": 8,
                "generation_batch_size": 8,
            },
        },
        "proof_rate": {
            "theorems": ["two"],
            "test_theorems": 2,
            "test_theorems_with_traced_proof": 1,
            "budget": {
                "num_sampled_tactics": 8,
                "decoding": "beam",
                "max_new_tokens": 64,
                "max_expansions": 8,
                "timeout": 120.0,
                "progress_weight": 1.0,
            },
            "configs": {
                "sft": {
                    "proved": 1,
                    "attempted": 2,
                    "statuses": {"failed": 1, "proved": 1},
                    "mean_expansions": 1.5,
                    "mean_tactics_tried": 9.0,
                    "mean_time_s": 3.0,
                    "wall_s": 6.0,
                    "proofs": {"two": ["intro x", "exact h x"]},
                }
            },
        },
    }
    text = bench.render(res)
    assert "expansions/s 2.00x" in text
    assert "| SmolLM2-135M-Instruct, SFT | 50.0 % | 1 / 2 | failed 1, proved 1 |" in text
    assert "replay proof rate" in text and "`intro x ; exact h x`" in text
    assert bench.slug("SFT + progress") == "sft-progress"
    assert bench.label("sft+progress") == "SmolLM2-135M-Instruct, SFT + progress model"
