"""Prover outputs: rows, summary, proofs in the traced format; kill and rerun resumes."""

from __future__ import annotations

import json
import time

import pytest
from leantrain.core.errors import ConfigError
from leantrain.core.schemas import load_theorems
from leantrain.prover import Prover, ReplayBackend
from leantrain.prover.theorems import load_split


class Oracle:
    """Proposes every traced tactic of a state (and one wrong tactic), counting calls;
    raises ``Killed`` at call ``kill_at`` as a kill would stop the run."""

    def __init__(self, theorems, kill_at=None):
        self.table = {}
        for t in theorems:
            for tt in t.traced_tactics:
                self.table.setdefault(tt.state_before, []).append((tt.tactic, -0.5))
        self.calls = 0
        self.kill_at = kill_at

    def propose(self, states, k):
        self.calls += 1
        if self.calls == self.kill_at:
            raise Killed
        return [[("nonsense", -0.1), *self.table.get(s, [])][:k] for s in states]


class Killed(BaseException):
    """A kill (KeyboardInterrupt, SystemExit are BaseExceptions): an Exception would now be
    that theorem's ``error`` row and the run would go on."""


def _prover(data, out, gen, **kw):
    return Prover(
        tactic_generator=gen,
        lean_backend=ReplayBackend(),
        data=str(data),
        output_dir=str(out),
        progress_bar=False,
        **kw,
    )


def test_rows_summary_and_proofs_in_the_traced_format(nat_basics, tmp_path):
    theorems = load_split(nat_basics, "test")
    summary = _prover(nat_basics, tmp_path / "out", Oracle(theorems)).evaluate()
    assert summary["metric"] == "replay proof rate"
    assert summary["proved"] == summary["attempted"] == 3 and summary["replay_proof_rate"] == 1.0
    assert summary["by_split"] == {"test": {"proved": 3, "attempted": 3, "replay_proof_rate": 1.0}}
    assert len(summary["by_repository"]) == 1
    rows = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    by_name = {r["full_name"]: r for r in rows}
    even = by_name["NatBasics.even_add"]
    assert even["proof"] == [
        "obtain ⟨a, rfl⟩ := hm",
        "obtain ⟨b, rfl⟩ := hn",
        "refine ⟨a + b, ?_⟩",
        "omega",
    ]
    assert even["expansions"] == 4 and even["tactics_tried"] == 8  # one wrong tactic a state
    assert even["backend"] == "replay" and even["split"] == "test"
    # the found proofs read back as LeanDojo theorems, equal to the traced ones
    found = {t.full_name: t for t in load_theorems(tmp_path / "out" / "proofs.json")}
    for thm in theorems:
        got = found[thm.full_name]
        assert got.key == thm.key
        assert [(t.tactic, t.state_before, t.state_after) for t in got.traced_tactics] == [
            (t.tactic, t.state_before, t.state_after) for t in thm.traced_tactics
        ]
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["proved"] == 3


def test_proofs_import_as_training_data(nat_basics, tmp_path):
    export = pytest.importorskip("leantrain.export.sources")
    theorems = load_split(nat_basics, "test")
    _prover(nat_basics, tmp_path / "out", Oracle(theorems)).evaluate()
    items = list(export.read_source(tmp_path / "out" / "proofs.json"))
    # a pseudo-repository of its own (leantrain-export's whole_proofs), then the found proofs
    assert [i.kind for i in items] == ["repo"] + ["theorem"] * 3
    assert items[0].value.url == "out/proofs.json"
    assert {i.value["proof_origin"] for i in items[1:]} == {"found"}
    assert all(i.value["formal_proof"].startswith("by\n  ") for i in items[1:])


def test_kill_and_rerun_resumes(nat_basics, tmp_path):
    theorems = load_split(nat_basics, "test")
    out = tmp_path / "out"
    first = Oracle(theorems, kill_at=3)  # theorem 1 takes 1 call, theorem 2 is killed in its 2nd
    with pytest.raises(Killed):
        _prover(nat_basics, out, first).evaluate()
    assert len((out / "results.jsonl").read_text().splitlines()) == 1
    # a kill in the middle of writing a row leaves a cut line: it is dropped, not fatal
    with (out / "results.jsonl").open("a") as f:
        f.write('{"id": "half a ro')
    again = Oracle(theorems)
    summary = _prover(nat_basics, out, again).evaluate()
    assert summary["attempted"] == 3 and summary["proved"] == 3
    assert again.calls == 4 + 1  # even_add (4 expansions) and add_zero' (1); sumTo_succ skipped
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["full_name"] for r in rows) == sorted(t.full_name for t in theorems)
    # everything done: a third run searches nothing and reports the same
    third = Oracle(theorems)
    assert _prover(nat_basics, out, third).evaluate() == summary and third.calls == 0


def test_a_changed_config_into_the_same_output_dir_is_refused(nat_basics, tmp_path):
    theorems = load_split(nat_basics, "test")
    out = tmp_path / "out"
    _prover(nat_basics, out, Oracle(theorems), max_theorems=1).evaluate()
    with pytest.raises(ConfigError, match=r"different config \(changed: num_sampled_tactics\)"):
        _prover(nat_basics, out, Oracle(theorems), num_sampled_tactics=3)  # refused at once
    with pytest.raises(ConfigError, match="changed: generator"):
        Prover(generator="./no-such-model", data=str(nat_basics), output_dir=str(out))
    # which theorems and where are not the search's config: more theorems extend the run
    summary = _prover(nat_basics, out, Oracle(theorems), max_theorems=2).evaluate()
    assert summary["attempted"] == 2


def test_prove_one_theorem_without_an_output_dir(nat_basics):
    theorems = load_split(nat_basics, "test")
    prover = Prover(
        tactic_generator=Oracle(theorems), lean_backend=ReplayBackend(), progress_bar=False
    )
    row = prover.prove(theorems[0].to_json())  # a LeanDojo record is accepted as is
    assert row["proved"] and row["proof"] == ["simp [sumTo]"]
    assert row["traced"]["traced_tactics"][0]["state_after"] == "no goals"


def test_a_progress_predictor_guides_the_search(nat_basics):
    progress = pytest.importorskip("leantrain.progress")
    theorems = load_split(nat_basics, "test")
    texts = [tt.state_before for t in theorems for tt in t.traced_tactics]
    tokenizer = progress.build_tiny_tokenizer(texts)
    predictor = progress.ProgressPredictor(progress.build_tiny_model(tokenizer), tokenizer)
    seen = []

    class Recording:
        def predict_many(self, goals, prefixes, tactics):
            seen.extend(prefixes)
            return predictor.predict_many(goals, prefixes, tactics)

    prover = Prover(
        tactic_generator=Oracle(theorems),
        lean_backend=ReplayBackend(),
        progress_model=Recording(),
        progress_bar=False,
    )
    rows = [prover.prove(t) for t in theorems]
    assert all(r["proved"] for r in rows)
    assert "obtain ⟨a, rfl⟩ := hm\nobtain ⟨b, rfl⟩ := hn" in seen  # prefix: tactics so far


def test_a_changed_max_new_tokens_is_refused_too(nat_basics, tmp_path):
    """max_new_tokens was recorded as '<redacted>' (its name holds 'token'), so a rerun with
    another generation budget resumed and mixed the two configurations silently."""
    theorems = load_split(nat_basics, "test")
    out = tmp_path / "out"
    _prover(nat_basics, out, Oracle(theorems), max_theorems=1, max_new_tokens=64).evaluate()
    assert json.loads((out / "prover_config.json").read_text())["max_new_tokens"] == 64
    with pytest.raises(ConfigError, match=r"changed: max_new_tokens"):
        _prover(nat_basics, out, Oracle(theorems), max_new_tokens=8)


def test_a_run_recorded_with_a_removed_setting_at_its_default_resumes(nat_basics, tmp_path):
    """A run recorded before ``length_normalize`` was removed (``false``: the default) resumes;
    one recorded with ``true`` (then depth exponent 1) does not silently mix searches."""
    theorems = load_split(nat_basics, "test")
    out = tmp_path / "out"
    _prover(nat_basics, out, Oracle(theorems), max_theorems=1).evaluate()
    saved = out / "prover_config.json"
    recorded = json.loads(saved.read_text())
    saved.write_text(json.dumps({**recorded, "length_normalize": False}))
    assert _prover(nat_basics, out, Oracle(theorems)).evaluate()["attempted"] == len(theorems)
    saved.write_text(json.dumps({**recorded, "length_normalize": True}))
    with pytest.raises(ConfigError, match=r"changed: length_normalize"):
        _prover(nat_basics, out, Oracle(theorems))


def test_the_generator_deadline_is_the_theorems_timeout(nat_basics):
    """An HF generator gets ``deadline`` = search start + ``timeout`` while a theorem is searched
    (its ``generate`` stops there) and ``None`` after."""
    theorems = load_split(nat_basics, "test")

    class Timed(Oracle):
        deadline = None

        def propose(self, states, k):
            self.seen = self.deadline
            return super().propose(states, k)

    gen = Timed(theorems)
    before = time.monotonic()
    Prover(
        tactic_generator=gen, lean_backend=ReplayBackend(), progress_bar=False, timeout=30.0
    ).prove(theorems[0])
    assert before + 30.0 <= gen.seen <= time.monotonic() + 30.0
    assert gen.deadline is None
