"""Proving at scale (issue 34): attempts seeded per (seed, theorem, attempt) across a kill,
pass@k in the summary, the budget ledger, presets, the run's identity, shards that merge into
the unsharded run, negatives.jsonl, and --num-workers without Ray."""

from __future__ import annotations

import json
import sys
import time

import pytest
from leantrain.core.errors import ConfigError, LeanTrainError
from leantrain.core.parser import parse
from leantrain.prover import Prover, ReplayBackend
from leantrain.prover.prover_config import ProveArgs, finalize
from leantrain.prover.replay import ReplaySession
from leantrain.prover.results import merge_runs
from leantrain.prover.shards import attempt_seed, in_shard, shard_index
from leantrain.prover.summary import summarize
from leantrain.prover.theorems import load_split, theorem_id
from prover_helpers import SHARED_DATA, SampledOracle, TracedOracle

TIMES = ("time_s", "generator_time_s", "backend_time_s", "wall_s", "startup_s", "recheck_s")


def _prover(data, out, gen, backend=None, **kw):
    return Prover(
        tactic_generator=gen,
        lean_backend=backend or ReplayBackend(),
        data=str(data),
        output_dir=str(out) if out else "",
        progress_bar=False,
        **kw,
    )


def _rows(out, name="results.jsonl"):
    return [json.loads(x) for x in (out / name).read_text().splitlines()]


def _untimed(rows):
    return sorted(
        ({k: v for k, v in r.items() if k not in TIMES} for r in rows),
        key=lambda r: (r["id"], r.get("attempt", 0)),
    )


def test_seeds_are_stable_hashes_of_seed_theorem_and_attempt():
    # pinned: Python's hash() is salted per process, so a value that held in a resumed process
    # would fail here
    assert attempt_seed(0, "T", 0) == 3749193513519657792
    assert len({attempt_seed(s, t, a) for s in (0, 1) for t in "TU" for a in range(3)}) == 12
    assert [shard_index(f"t{i}", 3) for i in range(6)] == [
        shard_index(f"t{i}", 3) for i in range(6)
    ]
    assert all(sum(in_shard(f"t{i}", f"{j}/3") for j in range(3)) == 1 for i in range(50))


def test_sampled_attempts_reproduce_across_a_kill_and_resume(nat_basics, tmp_path):
    theorems = load_split(nat_basics, "test")
    settings = {"decoding": "sample", "attempts": 3, "num_sampled_tactics": 2, "seed": 7}
    whole = _prover(nat_basics, tmp_path / "a", SampledOracle(theorems), **settings).evaluate()
    killed = SampledOracle(theorems, kill_at=5)
    with pytest.raises(KeyboardInterrupt):
        _prover(nat_basics, tmp_path / "b", killed, **settings).evaluate()
    assert 0 < len(_rows(tmp_path / "b")) < 9
    # some torch draws in between, as other work in a resumed process would make
    import torch

    torch.rand(17)
    resumed = _prover(nat_basics, tmp_path / "b", SampledOracle(theorems), **settings).evaluate()
    a, b = _untimed(_rows(tmp_path / "a")), _untimed(_rows(tmp_path / "b"))
    assert len(a) == 9 and a == b
    assert whole["pass_at_k"] == resumed["pass_at_k"]
    assert sorted({r["attempt"] for r in a}) == [0, 1, 2]
    negatives = _rows(tmp_path / "a", "negatives.jsonl")
    assert negatives == _rows(tmp_path / "b", "negatives.jsonl")  # in order, unbroken
    # the attempts are independent draws, not copies: their wrong tactics differ
    drawn = {(n["id"], n["attempt"]): n["tactic"] for n in negatives}
    for t in theorems:
        assert len({drawn.get((theorem_id(t), a)) for a in range(3)}) > 1


def test_pass_at_k_in_the_summary_of_hand_made_rows():
    def row(i, attempt, proved):
        return {"id": i, "attempt": attempt, "proved": proved, "status": "proved" if proved else "failed", "split": "test", "repository": "r"}  # fmt: skip

    rows = [row("A", a, p) for a, p in enumerate([True, False, False, False])]
    rows += [row("B", a, False) for a in range(4)]
    rows += [row("C", a, True) for a in range(4)]
    rows += [row("D", 0, True)]  # cut short: not in pass@k, but proved
    s = summarize(rows, "replay proof rate", attempts=4)
    assert s["attempts"] == 4 and s["pass_at_k_theorems"] == 3 and s["searches"] == 13
    # A: 1 of 4, B: 0 of 4, C: 4 of 4 → pass@1 = (1/4 + 0 + 1)/3, pass@4 = 2/3
    assert s["pass_at_k"] == {
        "pass@1": pytest.approx((0.25 + 0 + 1) / 3),
        "pass@2": pytest.approx((0.5 + 0 + 1) / 3),
        "pass@4": pytest.approx(2 / 3),
    }
    assert s["proved"] == 3 and s["attempted"] == 4  # theorems, any attempt
    assert s["statuses"] == {"failed": 7, "proved": 6}  # searches
    # one attempt: pass@1 is the rate
    one = summarize([row("A", 0, True), row("B", 0, False)], "proof rate")
    assert one["pass_at_k"] == {"pass@1": 0.5} == {"pass@1": one["proof_rate"]}


class SlowReplay(ReplayBackend):
    """Replay with a start-up and a per-tactic latency, as Lean has."""

    def start(self, theorem):
        time.sleep(0.03)
        return SlowSession(theorem)


class SlowSession(ReplaySession):
    def run(self, state, tactic):
        time.sleep(0.002)
        return super().run(state, tactic)


def test_the_ledger_adds_up(nat_basics, tmp_path):
    theorems = load_split(nat_basics, "test")
    out = tmp_path / "out"
    summary = _prover(nat_basics, out, TracedOracle(theorems), SlowReplay()).evaluate()
    rows = _rows(out)
    for r in rows:
        assert r["startup_s"] >= 0.03 and r["lean_calls"] == 1 + r["tactics_tried"]
        assert r["backend_time_s"] >= 0.002 * r["tactics_tried"]
        assert r["generator_time_s"] + r["backend_time_s"] <= r["time_s"] + 1e-3
        parts = r["startup_s"] + r["time_s"] + r["recheck_s"]
        assert parts <= r["wall_s"] + 1e-3 and r["wall_s"] - parts < 0.05
    ledger = summary["ledger"]
    assert (
        ledger["lean_calls"] == sum(r["lean_calls"] for r in rows) == 3 + (2 + 8 + 2)
    )  # starts + tactics
    assert ledger["expansions"] == sum(r["expansions"] for r in rows) == 6
    assert ledger["wall_s"] == pytest.approx(sum(r["wall_s"] for r in rows), abs=1e-3)
    assert ledger["startup_s"] >= 0.09 and ledger["tokens_generated"] == 0
    assert ledger["proved_per_1000_lean_calls"] == pytest.approx(1000 * 3 / 15)
    assert json.loads((out / "summary.json").read_text())["ledger"] == ledger


def test_failed_tactics_go_to_negatives_and_a_killed_searchs_are_dropped(nat_basics, tmp_path):
    theorems = load_split(nat_basics, "test")
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):  # the 3rd call: even_add's 2nd expansion
        _prover(nat_basics, out, TracedOracle(theorems, kill_at=3)).evaluate()
    negs = _rows(out, "negatives.jsonl")
    assert len(negs) == 1 and negs[0]["tactic"] == "nonsense"  # sumTo_succ's one expansion
    (out / "negatives.jsonl").open("a").write(json.dumps({**negs[0], "id": "ghost"}) + "\n")
    _prover(nat_basics, out, TracedOracle(theorems)).evaluate()
    negs = _rows(out, "negatives.jsonl")
    rows = _rows(out)
    assert {(n["id"], n["attempt"]) for n in negs} == {(r["id"], 0) for r in rows}
    assert len(negs) == sum(r["expansions"] for r in rows) == 6  # one wrong tactic a state
    n = negs[0]
    assert set(n) == {"id", "attempt", "state", "tactic", "error", "logprob"}
    assert n["logprob"] == -0.1 and "not a traced tactic" in n["error"]
    assert "negatives" not in rows[0]


def test_beam_attempts_are_refused_and_presets_fill_what_is_not_given(nat_basics, tmp_path):
    with pytest.raises(ConfigError, match=r"--attempts 4 with --decoding beam.*same search"):
        _prover(nat_basics, "", TracedOracle([]), attempts=4)
    base = ["--generator", "g", "--data", str(nat_basics), "--output-dir", str(tmp_path / "o")]
    cfg = finalize(parse(ProveArgs, [*base, "--preset", "reprover", "--k", "8"]))
    assert cfg.num_sampled_tactics == 8  # given, though it is the default
    assert (cfg.max_expansions, cfg.timeout, cfg.max_new_tokens) == (None, 600.0, 512)
    cfg = finalize(parse(ProveArgs, [*base, "--preset", "bfs-prover", "--attempts", "4"]))
    assert (cfg.decoding, cfg.num_sampled_tactics, cfg.max_expansions) == ("sample", 2, 600)
    assert cfg.depth_exponent == 1.0 and cfg.attempts == 4
    given = finalize(parse(ProveArgs, [*base, "--preset", "bfs-prover", "--depth-exponent", "2"]))
    assert given.depth_exponent == 2.0  # given: the preset does not fill it
    prover = _prover(nat_basics, "", TracedOracle([]), preset="reprover", max_expansions=5)
    assert prover.settings.num_sampled_tactics == 64 and prover.settings.max_expansions == 5


@pytest.mark.parametrize(("key", "value"), [("generation_batch_size", 4), ("device", "cpu")])
def test_settings_that_change_results_are_part_of_the_runs_identity(
    nat_basics, tmp_path, key, value
):
    theorems = load_split(nat_basics, "test")
    out = tmp_path / "out"
    _prover(nat_basics, out, TracedOracle(theorems), max_theorems=1).evaluate()
    with pytest.raises(ConfigError, match=f"changed: {key}"):
        _prover(nat_basics, out, TracedOracle(theorems), **{key: value})
    # which theorems, how many attempts and which shard are not: they extend the run
    _prover(nat_basics, out, TracedOracle(theorems), shard="0/1").evaluate()


def test_merged_shards_equal_the_unsharded_run(nat_basics, tmp_path):
    _check_merge(nat_basics, 3, tmp_path)  # one theorem a shard


@pytest.mark.slow
def test_merged_shards_equal_the_unsharded_run_on_mathlib(tmp_path):
    data = SHARED_DATA / "mathlib-sample" / "test.json"
    if not data.is_file():
        pytest.skip(f"needs the shared Lean data ({data})")
    _check_merge(data, 30, tmp_path)


def _check_merge(data, limit, tmp_path):
    theorems = load_split(data, "test", limit=limit)
    settings = {
        "decoding": "sample",
        "attempts": 2,
        "num_sampled_tactics": 3,
        "max_theorems": limit,
    }
    settings["max_expansions"] = 6
    whole = _prover(data, tmp_path / "all", SampledOracle(theorems), **settings).evaluate()
    parts = []
    for i in range(3):
        out = tmp_path / f"s{i}"
        got = _prover(data, out, SampledOracle(theorems), shard=f"{i}/3", **settings).evaluate()
        parts.append(got["attempted"])
        assert {r["id"] for r in _rows(out)} == {
            theorem_id(t) for t in theorems if shard_index(theorem_id(t), 3) == i
        }
    assert sum(parts) == whole["attempted"] == len(theorems) and min(parts) > 0
    merged = merge_runs([tmp_path / f"s{i}" for i in range(3)], tmp_path / "m")
    untimed = {"ledger", "mean_time_s"}
    assert {k: v for k, v in merged.items() if k not in untimed} == {
        k: v for k, v in whole.items() if k not in untimed
    }
    assert _untimed(_rows(tmp_path / "m")) == _untimed(_rows(tmp_path / "all"))
    proofs = [json.loads((tmp_path / d / "proofs.json").read_text()) for d in ("m", "all")]
    assert sorted(map(json.dumps, proofs[0])) == sorted(map(json.dumps, proofs[1]))
    assert json.loads((tmp_path / "m" / "prover_config.json").read_text()) == json.loads(
        (tmp_path / "all" / "prover_config.json").read_text()
    )
    with pytest.raises(ConfigError, match="both hold"):
        merge_runs([tmp_path / "s0", tmp_path / "s0"], tmp_path / "m2")
    other = tmp_path / "k"  # a run made with another seed
    other.mkdir()
    config = json.loads((tmp_path / "s1" / "prover_config.json").read_text())
    (other / "prover_config.json").write_text(json.dumps({**config, "seed": 1}))
    (other / "results.jsonl").write_text("")
    with pytest.raises(ConfigError, match="changed: seed"):
        merge_runs([tmp_path / "s0", other], tmp_path / "m3")


def test_a_shard_resumes_on_its_own(nat_basics, tmp_path):
    theorems = load_split(nat_basics, "test")
    shard = next(f"{i}/2" for i in range(2) if sum(in_shard(theorem_id(t), f"{i}/2") for t in theorems) >= 2)  # fmt: skip
    out = tmp_path / "s"
    with pytest.raises(KeyboardInterrupt):
        _prover(nat_basics, out, TracedOracle(theorems, kill_at=2), shard=shard).evaluate()
    done = len(_rows(out)) if (out / "results.jsonl").is_file() else 0
    again = TracedOracle(theorems)
    summary = _prover(nat_basics, out, again, shard=shard).evaluate()
    assert summary["attempted"] == sum(in_shard(theorem_id(t), shard) for t in theorems)
    assert len(_rows(out)) == summary["attempted"] > done


def test_workers_without_ray_is_one_line_and_one_worker_never_imports_ray(
    nat_basics, tmp_path, monkeypatch
):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "ray" else find_spec(n, *a)
    )
    with pytest.raises(LeanTrainError, match=r"pip install 'leantrain-prover\[ray\]'"):
        _prover(nat_basics, tmp_path / "w", TracedOracle([]), num_workers=2)
    monkeypatch.setitem(sys.modules, "ray", None)  # importing it now raises
    theorems = load_split(nat_basics, "test")
    assert _prover(nat_basics, tmp_path / "one", TracedOracle(theorems)).evaluate()["proved"] == 3


def test_the_generation_service_batches_workers_and_charges_each_its_own():
    """The service (a plain class; Ray makes it an actor) puts two workers' requests into one
    generator call and gives each its proposals, tokens and cut-off candidates."""
    import asyncio

    from leantrain.prover.parallel import GenerationService

    class Generator:  # finish reasons and tokens per state, as HFGenerator reports them
        def __init__(self):
            self.calls, self.deadline, self.deadlines = [], None, []

        def candidates(self, states, k):
            self.calls.append(list(states))
            self.deadlines.append(self.deadline)
            self.last_tokens = [10 * len(s) for s in states]
            return [[(s + "!", -1.0, "stop"), (s + "?", -2.0, "length")][:k] for s in states]

    gen = Generator()
    service = GenerationService(gen, None, workers=2)

    async def two_workers():
        return await asyncio.gather(
            service.propose(["a"], 2, seconds_left=5.0),
            service.propose(["bb", "c"], 2, seconds_left=60.0),
        )

    before = time.monotonic()
    first, second = asyncio.run(two_workers())
    assert gen.calls == [["a", "bb", "c"]]  # one call for both workers
    # it may run until the later of the two theorems' timeouts
    assert before + 60.0 <= gen.deadlines[0] <= time.monotonic() + 60.0
    assert first == ([[("a!", -1.0)]], 10, 1)
    assert second == ([[("bb!", -1.0)], [("c!", -1.0)]], 30, 2)
    assert service.stats() == {
        "generator_calls": 1,
        "states": 3,
        "requests": 2,
        "states_per_call": 3.0,
    }
