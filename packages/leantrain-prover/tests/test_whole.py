"""``prove --mode whole``: k sampled whole proofs per theorem, checked by the replay check (only
the traced proof counts) and by Lean (leantrain-lean's fake REPL); pass@k, costs, proofs.json,
resume, one round of error feedback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest_whole import MATHLIB_HEADER, fake_repl_command
from leantrain.core.config import config_from_dict
from leantrain.core.errors import ConfigError
from leantrain.core.schemas import Theorem
from leantrain.prover.prover_config import ProverConfig
from leantrain.prover.whole import Sample, WholeProver, prove_whole


class Scripted:
    """Replies by statement: the first words of the user turn's statement line → replies."""

    def __init__(self, replies: dict[str, list[str]], retry: dict[str, str] | None = None):
        self.replies, self.retry, self.prompts = replies, retry or {}, []

    def sample(self, prompts, k):
        out = []
        for messages in prompts:
            user = messages[-1]["content"]
            self.prompts.append(user)
            if "A previous attempt:" in user:
                failed = user.split("A previous attempt:\n", 1)[1].split("\n\n", 1)[0]
                out.append([Sample(self.retry.get(failed, "by skip"), 3, True)] * k)
                continue
            name = next(n for n in self.replies if n in user)
            out.append([Sample(t, len(t), not t.endswith("…")) for t in self.replies[name][:k]])
        return out


def _cfg(tmp_path, data, **kw):
    return config_from_dict(
        ProverConfig,
        {
            "mode": "whole",
            "data": str(data),
            "output_dir": str(tmp_path / "pw"),
            "attempts": 3,
            "progress_bar": False,
            **kw,
        },
    )


REPLIES = {
    "sumTo_succ": ["by simp [sumTo]", "by\n  simp [sumTo]", "by sorry"],  # the traced proof twice
    "even_add": [
        "```lean\nby\n  obtain ⟨a, rfl⟩ := hm\n  obtain ⟨b, rfl⟩ := hn\n  refine ⟨a + b, ?_⟩\n  omega\n```",
        "by omega",
        "by simp [sumTo]…",  # cut off at the token limit: no proof
    ],
    "add_zero'": ["by simp", "Nat.add_zero n", "by exact Nat.add_zero n"],
}


def test_replay_counts_only_the_traced_proof_and_reports_pass_at_k(tmp_path, nat_basics):
    cfg = _cfg(tmp_path, nat_basics)
    sampler = Scripted(REPLIES)
    summary = prove_whole(cfg, sampler=sampler)
    assert summary["metric"] == "replay whole proof rate"
    assert (summary["proved"], summary["attempted"]) == (3, 3)
    rows = {r["full_name"]: r for r in map(json.loads, (tmp_path / "pw/results.jsonl").open())}
    assert rows["NatBasics.sumTo_succ"]["outcomes"] == [True, True, False]
    assert rows["NatBasics.even_add"]["outcomes"] == [True, False, False]
    # another proof is a failure (a lower bound); a term proof is checked as `exact` of it
    assert rows["NatBasics.add_zero'"]["outcomes"] == [False, True, True]
    assert rows["NatBasics.even_add"]["proofs_cut_off"] == 1
    # pass@1 = mean of c/n = (2/3 + 1/3 + 2/3) / 3; pass@3 = 1
    assert summary["replay_pass@1"] == pytest.approx(5 / 9)
    assert summary["replay_pass@3"] == 1.0 and "pass@1" not in summary
    assert summary["lean_calls"] == 0 and summary["tokens"] > 0 and summary["attempts"] == 3
    proofs = json.loads((tmp_path / "pw/proofs.json").read_text())
    found = {p["full_name"]: p for p in proofs}
    assert found["NatBasics.add_zero'"]["formal_proof"] == "Nat.add_zero n"
    assert found["NatBasics.add_zero'"]["proof"] == "exact Nat.add_zero n"
    assert found["NatBasics.add_zero'"]["proof_origin"] == "found"
    Theorem.model_validate(found["NatBasics.even_add"])  # a theorem record export reads
    # the prompt is the whole-proof prompt: the statement ending ':='
    assert any(p.endswith("theorem add_zero' (n : ℕ) : n + 0 = n :=") for p in sampler.prompts)
    # resumed: nothing sampled again, the same summary
    again = Scripted(REPLIES)
    assert prove_whole(cfg, sampler=again) == summary and again.prompts == []


def test_another_config_in_the_output_dir_is_refused(tmp_path, nat_basics):
    prove_whole(_cfg(tmp_path, nat_basics), sampler=Scripted(REPLIES))
    with pytest.raises(ConfigError, match="changed: attempts"):
        prove_whole(_cfg(tmp_path, nat_basics, attempts=2), sampler=Scripted(REPLIES))


def test_feedback_round_retries_failed_attempts_with_the_reason(tmp_path, nat_basics):
    cfg = _cfg(tmp_path, nat_basics, feedback_rounds=1, theorems=["NatBasics.add_zero'"])
    sampler = Scripted(REPLIES, retry={"by simp": "by exact Nat.add_zero n"})
    summary = prove_whole(cfg, sampler=sampler)
    retries = [p for p in sampler.prompts if "A previous attempt:" in p]
    assert len(retries) == 1  # the failed attempt (`by simp`), asked once more
    assert "by simp\n\nLean's answer:\nnot the traced proof" in retries[0]
    assert summary["replay_pass@1"] == 1.0  # `by simp`, retried, now passes


def _benchmark(tmp_path):
    rows = [
        {
            "name": "mathd_numbertheory_188",
            "split": "test",
            "header": MATHLIB_HEADER,
            "formal_statement": "theorem mathd_numbertheory_188 : Nat.gcd 180 168 = 12 := by sorry",
        },
        {"name": "f", "split": "test", "header": "", "formal_statement": "def f : Nat := by sorry"},
    ]
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_lean_check_on_the_fake_repl(tmp_path):
    cmd = fake_repl_command("mathlib_H20231020", "unfinished_tactic_block")
    cfg = _cfg(tmp_path, _benchmark(tmp_path), backend="repl", repl_command=cmd, attempts=2)
    replies = {
        "mathd_numbertheory_188": ["by norm_num", "by sorry"],  # Lean accepts; sorry: refused
        "def f": ["by skip", "by skip"],  # Lean: unsolved goals
    }
    summary = prove_whole(cfg, sampler=Scripted(replies))
    assert summary["metric"] == "whole proof rate" and summary["pass@1"] == pytest.approx(0.25)
    rows = {r["full_name"]: r for r in map(json.loads, (tmp_path / "pw/results.jsonl").open())}
    ok, bad = rows["mathd_numbertheory_188"], rows["f"]
    assert ok["outcomes"] == [True, False] and ok["checked"] and ok["lean_calls"] == 1
    assert ok["axioms"] == ["Classical.choice", "Quot.sound", "propext"]
    assert bad["outcomes"] == [False, False] and "unsolved goals" in bad["error"]
    assert summary["lean_calls"] == 3


def test_step_wise_prover_refuses_whole_mode_and_kimina_is_a_whole_backend(tmp_path, nat_basics):
    from leantrain.prover import Prover

    with pytest.raises(ConfigError, match="tactic by tactic"):
        Prover(mode="whole", data=str(nat_basics), tactic_generator=object())
    with pytest.raises(ConfigError, match="cannot check whole proofs"):
        WholeProver(_cfg(tmp_path, nat_basics, backend="leandojo"), sampler=Scripted({}))


@pytest.mark.slow  # loads transformers and the tiny model (~30 s on 2 shared cores)
def test_the_tiny_model_samples_k_proofs_per_theorem(tmp_path, nat_basics):
    cfg = _cfg(
        tmp_path,
        nat_basics,
        generator="tiny",
        attempts=2,
        max_proof_tokens=4,
        max_theorems=2,
        device="cpu",
    )
    prover = WholeProver(cfg)
    assert prover.system_prompt.startswith("You are a Lean 4 theorem prover. Given a Lean 4")
    summary = prover.evaluate(prover_theorems(nat_basics)[:2], "test")
    assert summary["attempted"] == 2 and summary["attempts"] == 2
    rows = [json.loads(line) for line in (tmp_path / "pw/results.jsonl").open()]
    assert all(len(r["outcomes"]) == 2 for r in rows)
    assert 0 < summary["tokens"] <= 2 * 2 * 4 and summary["generator_time_s"] > 0


def prover_theorems(data):
    from leantrain.prover.theorems import load_split

    return load_split(data, "test")


class BatchChecker:
    """A whole-proof backend with ``check_many`` (as kimina): records its batches."""

    name, metric = "kimina", "proof rate"

    def __init__(self):
        self.batches = []

    def check_many(self, items):
        from leantrain.lean import CheckResult

        self.batches.append([(t.name, p) for t, p in items])
        good = ("propext",)
        return [
            CheckResult("ok", axioms=good) if p == "norm_num" else CheckResult("ok", errors=("no",))
            for _, p in items
        ]

    def close(self):
        pass


def test_the_k_proofs_of_a_theorem_go_to_lean_in_one_batch(tmp_path):
    from leantrain.prover.whole import LeanProofCheck

    backend = BatchChecker()
    cfg = _cfg(tmp_path, _benchmark(tmp_path), backend="kimina", attempts=3)
    checker = LeanProofCheck(backend, cfg.allowed_axioms, None)
    replies = {
        "mathd_numbertheory_188": ["by norm_num", "by\n  simp", "by sorry"],
        "def f": ["by skip"] * 3,
    }
    prover = WholeProver(cfg, sampler=Scripted(replies), checker=checker)
    summary = prover.evaluate(theorems=None, split="test")
    # sorry is screened out; the other two go in one request, as the check's tactic scripts
    first = [("mathd_numbertheory_188", "norm_num"), ("mathd_numbertheory_188", "simp")]
    assert backend.batches == [first, [("f", "skip")] * 3]
    assert summary["pass@1"] == pytest.approx((1 / 3 + 0) / 2)


def test_summary_ledger_and_pass_at_k_are_the_whole_proof_figures(tmp_path, nat_basics):
    summary = prove_whole(_cfg(tmp_path, nat_basics), sampler=Scripted(REPLIES))
    # pass@k over each theorem's k sampled proofs, not over one "search" per theorem
    assert summary["pass_at_k"]["pass@1"] == pytest.approx(5 / 9)
    assert summary["pass_at_k"]["pass@3"] == 1.0 and summary["pass_at_k_theorems"] == 3
    assert "searches" not in summary
    ledger = summary["ledger"]
    assert ledger["tokens_generated"] == summary["tokens"] > 0
    assert ledger["wall_s"] == ledger["search_s"] == summary["time_s"]
    assert ledger["lean_calls"] == summary["lean_calls"] and "expansions" not in ledger


LB4_HEAD = Path(__file__).parents[3] / ".." / "shared" / "data" / "leandojo-benchmark-4-head"


class Traced:
    """Replies to a state-form prompt with the traced proof of the theorem it names, then
    another proof."""

    def __init__(self, proofs: dict[str, str]):
        self.proofs, self.prompts = proofs, []

    def sample(self, prompts, k):
        out = []
        for messages in prompts:
            user = messages[-1]["content"]
            self.prompts.append(user)
            name = user.splitlines()[0].removeprefix("theorem ")
            replies = [self.proofs[name], "by simp"][:k]
            out.append([Sample(t, len(t), True) for t in replies])
        return out


@pytest.mark.skipif(
    not LB4_HEAD.exists(), reason="../shared/data/leandojo-benchmark-4-head is absent"
)
def test_replay_proves_statement_less_lb4_theorems_from_their_initial_state(tmp_path):
    from leantrain.tactics.whole_proof import STATE_MARKER, tactics_proof, top_level_tactics

    records = json.loads((LB4_HEAD / "test_head.json").read_text())
    traced = [r for r in records if top_level_tactics(r["traced_tactics"])][:3]
    # a record with no statement and no traced tactic: one init_failed row, not a crash
    bare = {**records[0], "full_name": "Bare.thm", "traced_tactics": []}
    data = tmp_path / "lb4.json"
    data.write_text(json.dumps([*traced, bare]))
    proofs = {
        r["full_name"]: tactics_proof(top_level_tactics(r["traced_tactics"]) or []) for r in traced
    }
    sampler = Traced(proofs)
    summary = prove_whole(_cfg(tmp_path, data, attempts=2, split="test"), sampler=sampler)
    assert (summary["proved"], summary["attempted"]) == (3, 4)
    assert summary["replay_pass@1"] == pytest.approx(3 / 8)  # (1/2 · 3 + 0) / 4
    rows = {r["full_name"]: r for r in map(json.loads, (tmp_path / "pw/results.jsonl").open())}
    assert all(rows[name]["outcomes"] == [True, False] for name in proofs)
    assert rows["Bare.thm"]["status"] == "init_failed"
    assert "no theorem_statement and no traced initial state" in rows["Bare.thm"]["error"]
    # asked by name and initial state, as --mode whole SFT trains on them
    first = traced[0]
    assert sampler.prompts[0] == (
        f"theorem {first['full_name']}\n{STATE_MARKER}\n"
        + first["traced_tactics"][0]["state_before"].strip()
    )
