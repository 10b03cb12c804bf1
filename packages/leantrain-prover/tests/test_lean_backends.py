"""The prover over leantrain-lean's contract: theorems from a benchmark JSONL file and from an
export (statements read from the Lean project), sound by construction (a found proof counts
only after the whole-theorem re-check; ``rejected`` with the reason otherwise; only checked
proofs in proofs.json, which ``leantrain verify`` reads back), the proof rate with and
without start-up failures, and the one-line refusals of ``--backend repl|kimina``."""

from __future__ import annotations

import json
import sys

import pytest
from leantrain.core.command import dispatch
from leantrain.core.errors import ConfigError
from leantrain.lean import BackendError, CheckResult, verify
from leantrain.lean.verify import proof_item
from leantrain.prover import Prover
from leantrain.prover.backend import LeanContractBackend
from leantrain.prover.cli import register
from leantrain.prover.prover import make_backend
from leantrain.prover.prover_config import ProverConfig
from leantrain.prover.theorems import load_split
from prover_helpers import ScriptedGenerator, TreeSession

HEADER = "import Mathlib\nopen Nat"
ROWS = [
    {
        "name": "good",
        "split": "test",
        "header": HEADER,
        "formal_statement": "theorem good (n : ℕ) : n + 0 = n := by",
    },
    {
        "name": "sneaky",
        "split": "test",
        "header": HEADER,
        "formal_statement": "theorem sneaky : 1 = 2 := by",
    },
    {
        "name": "broken",
        "split": "test",
        "header": HEADER,
        "formal_statement": "theorem broken : True := by",
    },
    {
        "name": "other_split",
        "split": "valid",
        "header": HEADER,
        "formal_statement": "theorem other_split : True := by",
    },
]


@pytest.fixture
def minif2f(tmp_path):
    path = tmp_path / "minif2f.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


class FakeLean:
    """A leantrain-lean backend: each theorem a one-move tree (``simp`` finishes it); the
    whole-theorem check answers as Lean would for a proof through ``sorryAx`` for ``sneaky``."""

    name = "repl"
    metric = "proof rate"

    def __init__(self):
        self.started, self.checked = [], []

    def start(self, theorem):
        self.started.append(theorem)
        if theorem.name == "broken":
            raise BackendError("broken: the header does not elaborate")
        return TreeSession("⊢ goal", {("⊢ goal", "simp"): "no goals"})

    def check(self, theorem, proof):
        self.checked.append((theorem, proof))
        axioms = ("sorryAx",) if theorem.name == "sneaky" else ("propext",)
        return CheckResult("ok", axioms=axioms)

    def close(self):
        pass


def _prover(data, out, lean, **kw):
    return Prover(
        tactic_generator=ScriptedGenerator({"⊢ goal": [("simp", -0.1)]}),
        lean_backend=LeanContractBackend(lean),
        data=str(data),
        output_dir=str(out),
        backend="repl",
        progress_bar=False,
        **kw,
    )


def test_benchmark_rows_are_theorems_of_their_split(minif2f):
    theorems = load_split(minif2f, "test")
    assert [t.full_name for t in theorems] == ["good", "sneaky", "broken"]
    assert theorems[0].header == HEADER
    assert [t.full_name for t in load_split(minif2f, "valid")] == ["other_split"]
    with pytest.raises(Exception, match="no row has split 'train'"):
        load_split(minif2f, "train")


def test_found_proofs_count_only_after_the_recheck(minif2f, tmp_path):
    lean = FakeLean()
    summary = _prover(minif2f, tmp_path / "p", lean).evaluate()
    # Lean was asked about the benchmark's own statement and header
    assert lean.started[0].statement == "theorem good (n : ℕ) : n + 0 = n"
    assert lean.started[0].header == HEADER
    assert [(t.name, proof) for t, proof in lean.checked] == [("good", "simp"), ("sneaky", "simp")]
    rows = [json.loads(x) for x in (tmp_path / "p" / "results.jsonl").read_text().splitlines()]
    by = {r["full_name"]: r for r in rows}
    assert by["good"]["status"] == "proved" and by["good"]["checked"]
    assert by["good"]["axioms"] == ["propext"]
    assert by["sneaky"]["status"] == "rejected" and not by["sneaky"]["proved"]
    assert "sorryAx" in by["sneaky"]["error"]
    assert by["broken"]["status"] == "init_failed"
    assert summary["statuses"] == {"init_failed": 1, "proved": 1, "rejected": 1}
    assert summary["proof_rate"] == pytest.approx(1 / 3)
    assert summary["proof_rate_excluding_init_failed"] == pytest.approx(1 / 2)
    assert summary["init_failed"] == 1 and summary["rejected"] == 1
    proofs = json.loads((tmp_path / "p" / "proofs.json").read_text())
    assert [p["full_name"] for p in proofs] == ["good"]  # only checked proofs
    theorem, proof = proof_item(proofs[0])
    assert (theorem.name, theorem.header, proof) == ("good", HEADER, "simp")
    again = FakeLean()
    assert verify(proofs, again)[0]["status"] == "proved"
    assert again.checked[0][0].statement == "theorem good (n : ℕ) : n + 0 = n"


def test_an_export_theorem_is_read_from_the_lean_project(nat_basics, tmp_path):
    project = tmp_path / "nat-basics"
    (project / "NatBasics").mkdir(parents=True)
    lines = ["import NatBasics.Defs", "", "namespace NatBasics", ""] + [""] * 26
    lines += ["theorem sumTo_succ (n : ℕ) : sumTo (n + 1) = sumTo n + (n + 1) := by", "  simp"]
    (project / "NatBasics" / "Lemmas.lean").write_text("\n".join(lines) + "\nend NatBasics\n")
    theorem = next(
        t for t in load_split(nat_basics, "test") if t.full_name == "NatBasics.sumTo_succ"
    )
    backend = LeanContractBackend(FakeLean(), str(project))
    lean = backend.lean_theorem(theorem)
    assert lean.name == "sumTo_succ"
    assert lean.statement == "theorem sumTo_succ (n : ℕ) : sumTo (n + 1) = sumTo n + (n + 1)"
    assert lean.header.startswith("import NatBasics.Defs") and "namespace NatBasics" in lean.header
    with pytest.raises(BackendError, match="--lean-project"):
        LeanContractBackend(FakeLean()).lean_theorem(theorem)


def test_replay_proofs_are_not_rechecked_and_say_so(nat_basics, tmp_path):
    from leantrain.prover import ReplayBackend
    from leantrain.prover.summary import one_line

    theorems = load_split(nat_basics, "test")
    gen = ScriptedGenerator(
        {tt.state_before: [(tt.tactic, -0.1)] for t in theorems for tt in t.traced_tactics}
    )
    prover = Prover(tactic_generator=gen, lean_backend=ReplayBackend(), progress_bar=False)
    row = prover.prove(theorems[0], "test")
    assert row["proved"] and row["checked"] is False
    summary = prover.evaluate(theorems)
    assert "not re-checked in Lean" in one_line(summary)


def test_make_backend_repl_and_the_refusals():
    cfg = ProverConfig(backend="repl", repl_command=f"{sys.executable} -c pass")
    assert isinstance(make_backend(cfg), LeanContractBackend)
    with pytest.raises(ConfigError, match="kimina checks whole proofs only") as info:
        make_backend(ProverConfig(backend="kimina"))
    assert "leantrain verify" in info.value.one_line()
    from leantrain.core.config import config_from_dict

    with pytest.raises(ConfigError, match=r"'backend'.*choose one of: 'repl', 'kimina'"):
        config_from_dict(ProverConfig, {"backend": "nope"})
    assert ProverConfig().backend == "replay"  # prove's default (LeanArgs' backend unset)
    assert config_from_dict(ProverConfig, {"lean_backend": "repl"}).backend == "repl"


def test_cli_no_such_repl_is_one_line_before_any_model_loads(nat_basics, tmp_path, capsys):
    from leantrain.core.cli import main

    code = main(
        [
            "prove", "--generator", str(tmp_path / "no-model"), "--data", str(nat_basics),
            "--backend", "repl", "--repl-command", "no-such-repl",
            "--output-dir", str(tmp_path / "o"),
        ]
    )  # fmt: skip
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    assert code != 0 and len(lines) == 1 and "no-such-repl" in lines[0], err
    assert not (tmp_path / "o").exists()
    with pytest.raises(ConfigError, match="kimina"):
        dispatch(
            register()[0],
            ["--generator", "x", "--data", str(nat_basics), "--backend", "kimina",
             "--output-dir", str(tmp_path / "o")]
        )  # fmt: skip


def test_an_export_without_a_lean_project_is_one_line_before_any_search(nat_basics, tmp_path):
    gen = ScriptedGenerator({})
    prover = Prover(
        tactic_generator=gen,
        lean_backend=LeanContractBackend(FakeLean()),
        backend="repl",
        progress_bar=False,
        output_dir=str(tmp_path / "o"),
    )
    with pytest.raises(ConfigError, match="no --lean-project is given"):
        prover.evaluate(load_split(nat_basics, "test"))
    assert gen.calls == [] and not (tmp_path / "o").exists()
