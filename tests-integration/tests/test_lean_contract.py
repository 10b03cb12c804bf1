"""The prover's best-first search runs on a leantrain-lean session unchanged (issue 33).

``leantrain.lean``'s ``repl`` session, driven against the fake REPL process of leantrain-lean's
tests (which answers as the REPL's recorded transcripts), is searched by
``leantrain.prover.search.best_first_search``; the found proof is then judged by the
whole-theorem check. Then ``leantrain prove`` and ``leantrain verify`` run on it as a user
runs them.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from leantrain.lean import LeanTheorem, ReplBackend, check_proof
from leantrain.lean import Session as LeanSession
from leantrain.prover.backend import Session as ProverSession
from leantrain.prover.search import SearchSettings, best_first_search

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "packages" / "leantrain-lean" / "tests" / "fake_repl.py"


class Scripted:
    """A generator proposing fixed tactics per state (best first)."""

    def __init__(self, table: dict[str, list[tuple[str, float]]]) -> None:
        self.table = table

    def propose(self, states, k):
        return [self.table.get(s, [])[:k] for s in states]


def test_best_first_search_runs_on_a_repl_session():
    backend = ReplBackend([sys.executable, str(FAKE), "--use", "proof_branching"])
    try:
        theorem = LeanTheorem.parse(
            "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r"
        )
        session = backend.start(theorem)
        assert isinstance(session, LeanSession) and isinstance(session, ProverSession)
        s0 = session.initial_state.pp
        left = "case left\np q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ p"
        right = "case right\np q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ r"
        generator = Scripted(
            {
                s0: [("apply And.intro", -0.1)],
                f"{left}\n\n{right}": [("exact h1.left", -0.1)],
                right: [("apply h2", -0.1)],
                "case right\np q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ q": [("exact h1.right", -0.1)],
            }
        )
        result = best_first_search(session, generator, SearchSettings(timeout=None))
        assert result.status == "proved"
        tactics = [step.tactic for step in result.proof]
        assert tactics == ["apply And.intro", "exact h1.left", "apply h2", "exact h1.right"]
        assert result.proof[-1].state_after == "no goals"
        # a proof counts only after the whole-theorem check; one Lean cannot answer (here the
        # fake has no recording for the 4-line check and exits) is an error, never proved
        verdict = check_proof(backend, theorem, "\n".join(tactics))
        assert verdict.status == "error"
    finally:
        backend.close()


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    from it_support import leantrain_cmd, quiet_env

    return subprocess.run(
        [*leantrain_cmd(), *args], capture_output=True, text=True, env=quiet_env(), cwd=cwd,
        timeout=600,
    )  # fmt: skip


def test_prove_a_benchmark_file_on_the_repl_then_verify(tmp_path):
    """``leantrain prove --data bench.jsonl --backend repl --repl-command …`` as a user runs it,
    on the fake REPL process: the row's statement is started in Lean (``:= by sorry``), only
    finished tactics reach it (the tiny model's cut-off ones are counted, never sent), the
    run ends with its rows and summary; ``leantrain verify`` on a proofs file then answers per
    proof with its exit status."""
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"name": "f", "formal_statement": "def f : Nat := by"}) + "\n")
    log = tmp_path / "sent.log"
    repl = shlex.join([sys.executable, str(FAKE), "--use", "tactic_sorry", "--log", str(log)])
    out = _run(
        "prove", "--generator", "tiny", "--data", str(bench), "--backend", "repl",
        "--repl-command", repl, "--output-dir", "p", "--k", "2", "--max-expansions", "2",
        "--max-new-tokens", "3", "--progress-bar", "false", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    [row] = [json.loads(x) for x in (tmp_path / "p" / "results.jsonl").read_text().splitlines()]
    assert row["status"] in ("failed", "budget") and not row["proved"]
    sent = [s.strip() for s in log.read_text().splitlines()]
    assert sent[0] == '{"cmd": "def f : Nat := by sorry"}'
    tactics_sent = [s for s in sent if '"tactic"' in s]
    assert len(tactics_sent) == row["tactics_tried"]  # each tried tactic went to Lean once…
    assert row["tactics_cut_off"] + row["tactics_tried"] >= 1  # …and the cut-off ones never
    summary = json.loads((tmp_path / "p" / "summary.json").read_text())
    assert summary["metric"] == "proof rate" and summary["init_failed"] == 0
    assert "proof_rate_excluding_init_failed" in summary
    proofs = tmp_path / "proofs.jsonl"
    proofs.write_text(
        json.dumps({"name": "f", "formal_statement": "def f : Nat := by", "proof": "sorry"}) + "\n"
    )
    out = _run("verify", str(proofs), "--backend", "repl", "--repl-command", repl, cwd=tmp_path)
    assert out.returncode == 1, out.stderr  # rejected
    assert json.loads(out.stdout)["proofs"][0]["status"] == "rejected"
