"""``LeanArgs`` and ``build_backend``; ``leantrain verify`` end to end on the fake REPL;
statements of an export read from the Lean project's files."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from leantrain.core.errors import ConfigError, MissingDependencyError
from leantrain.lean import (
    KiminaBackend,
    LeanArgs,
    ProjectSources,
    ReplBackend,
    build_backend,
    theorem_from_source,
)
from leantrain.lean.cli import register

FAKE = Path(__file__).parent / "fake_repl.py"


def verify_cli(argv: list[str]) -> int:
    """``leantrain verify`` on ``argv`` through core's dispatch (errors raised, not printed)."""
    from leantrain.core.command import dispatch

    return dispatch(register()[0], argv)


def test_lean_args_defaults_and_one_line_errors():
    args = LeanArgs()
    assert (args.tactic_timeout, args.start_timeout) == (60.0, 600.0)
    assert args.allowed_axioms == ["propext", "Classical.choice", "Quot.sound"]
    with pytest.raises(ConfigError, match="--start_timeout must be positive"):
        LeanArgs(start_timeout=0)
    with pytest.raises(ConfigError, match="--memory_limit_mb must be"):
        LeanArgs(memory_limit_mb=0)


def test_build_backend_checks_early_and_names_the_flag(tmp_path):
    repl = build_backend(
        "repl", LeanArgs(repl_command=f"{sys.executable} {FAKE}", memory_limit_mb=4096)
    )
    assert isinstance(repl, ReplBackend) and repl.memory_limit_mb == 4096
    assert isinstance(build_backend("kimina", LeanArgs(url="http://h:1")), KiminaBackend)
    with pytest.raises(MissingDependencyError, match="no-such-repl") as info:
        build_backend("repl", LeanArgs(repl_command="no-such-repl"))
    assert "\n" not in info.value.one_line()
    with pytest.raises(ConfigError, match="--lean-backend: unknown or unsupported backend 'x'"):
        build_backend("x", LeanArgs(), flag="--lean-backend")
    with pytest.raises(ConfigError, match="choose one of: repl, kimina"):
        build_backend("leandojo", LeanArgs(), choices=("repl", "kimina"))


SOURCE = """import Mathlib.Data.Nat.Basic

open Nat

namespace Foo

/-- doc -/
theorem bar (n : ℕ) (h : n = (fun x => x) 1) : n + 0 = n := by
  simp

theorem no_proof_sep (n : ℕ) : n = n
  | _ => rfl
end Foo
"""


def test_a_statement_is_read_at_the_traced_position():
    t = theorem_from_source(SOURCE, [7, 1], "Foo.bar", where="F.lean:7")
    assert t.name == "bar"
    assert t.statement == "/-- doc -/\ntheorem bar (n : ℕ) (h : n = (fun x => x) 1) : n + 0 = n"
    assert t.header.endswith("namespace Foo") and t.header.startswith("import Mathlib")
    with pytest.raises(ValueError, match="no ':='"):
        theorem_from_source(SOURCE, [10, 1], "Foo.no_proof_sep")
    with pytest.raises(ValueError, match="outside the file"):
        theorem_from_source(SOURCE, [99, 1], "x")


def test_project_sources_read_each_file_once_and_name_a_missing_one(tmp_path):
    (tmp_path / "Foo").mkdir()
    (tmp_path / "Foo" / "A.lean").write_text(SOURCE)
    sources = ProjectSources(tmp_path)
    rec = SimpleNamespace(file_path="Foo/A.lean", full_name="Foo.bar", start=[7, 1])
    assert sources.theorem(rec).name == "bar"
    (tmp_path / "Foo" / "A.lean").unlink()
    assert sources.theorem(rec).name == "bar"  # read once
    missing = SimpleNamespace(file_path="Foo/B.lean", full_name="Foo.b", start=[1, 1])
    with pytest.raises(ValueError, match=r"B\.lean: cannot read it"):
        sources.theorem(missing)


def _write(path, records):
    path.write_text(json.dumps(records))
    return str(path)


def test_verify_command_prints_statuses_and_exits_by_the_worst(tmp_path, capsys, mathlib_header):
    proofs = _write(
        tmp_path / "proofs.json",
        [
            {
                "name": "mathd_numbertheory_188",
                "formal_statement": "theorem mathd_numbertheory_188 : Nat.gcd 180 168 = 12 := by",
                "header": mathlib_header,
                "proof": "norm_num",
            }
        ],
    )
    cmd = shlex.join([sys.executable, str(FAKE), "--use", "mathlib_H20231020"])
    assert verify_cli([proofs, "--backend", "repl", "--repl-command", cmd]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["proofs"][0]["status"] == "proved" and out["summary"]["proved"] == 1
    both = _write(
        tmp_path / "two.json",
        [
            json.loads((tmp_path / "proofs.json").read_text())[0],
            {"name": "g", "formal_statement": "theorem g : True := by", "proof": "sorry"},
        ],
    )
    assert verify_cli([both, "--repl-command", cmd]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [p["status"] for p in out["proofs"]] == ["proved", "rejected"]


def test_verify_command_exits_3_when_lean_does_not_answer(tmp_path, capsys):
    proofs = _write(
        tmp_path / "p.json",
        [{"name": "g", "formal_statement": "theorem g : True := by", "proof": "trivial"}],
    )
    cmd = shlex.join([sys.executable, str(FAKE)])  # no recorded answer: the REPL dies
    assert verify_cli([proofs, "--repl-command", cmd]) == 3
    assert json.loads(capsys.readouterr().out)["proofs"][0]["status"] == "error"


def test_verify_command_refuses_bad_input_in_one_line(tmp_path):
    with pytest.raises(ConfigError, match="missing required PROOFS"):
        verify_cli(["--backend", "repl"])
    with pytest.raises(ConfigError, match="leandojo"):
        verify_cli([str(tmp_path / "p.json"), "--backend", "leandojo"])
    proofs = _write(tmp_path / "p.json", [{"name": "x"}])
    with pytest.raises(Exception, match="theorem_statement"):
        verify_cli([proofs, "--repl-command", "no-such-repl"])  # the data first, then Lean
    good = _write(
        tmp_path / "g.json",
        [{"name": "g", "formal_statement": "theorem g : True := by", "proof": "trivial"}],
    )
    with pytest.raises(MissingDependencyError, match="no-such-repl"):
        verify_cli([good, "--repl-command", "no-such-repl"])


def test_verify_reads_an_export_theorem_from_the_lean_project(tmp_path, capsys, mathlib_header):
    """A prover proofs.json of an export's theorem has no header: with --lean-project the
    statement and header are read from the project's file, as the prover read them."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "F.lean").write_text(mathlib_header + "\n\n" + (
        "theorem mathd_numbertheory_188 : Nat.gcd 180 168 = 12 := by\n  decide\n"
    ))  # fmt: skip
    line = mathlib_header.count("\n") + 3
    record = {
        "url": "u", "commit": "c", "file_path": "F.lean",
        "full_name": "mathd_numbertheory_188", "start": [line, 1], "end": [line + 1, 9],
        "theorem_statement": "theorem mathd_numbertheory_188 : Nat.gcd 180 168 = 12 :=",
        "traced_tactics": [{"tactic": "norm_num", "annotated_tactic": ["norm_num", []],
                            "state_before": "", "state_after": "no goals"}],
    }  # fmt: skip
    proofs = _write(tmp_path / "proofs.json", [record])
    cmd = shlex.join([sys.executable, str(FAKE), "--use", "mathlib_H20231020"])
    argv = [proofs, "--repl-command", cmd, "--lean-project", str(tmp_path / "proj")]
    assert verify_cli(argv) == 0
    assert json.loads(capsys.readouterr().out)["proofs"][0]["status"] == "proved"


def test_a_lean_project_that_is_no_directory_is_refused_when_read(tmp_path):
    with pytest.raises(ConfigError, match=r"--lean-project: .*nope is not a directory"):
        LeanArgs(lean_project=str(tmp_path / "nope"))
    assert LeanArgs(lean_project=str(tmp_path)).lean_project == str(tmp_path)


def test_a_project_on_a_lean_version_the_backend_does_not_support_is_one_line(tmp_path):
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.2.0\n")
    args = LeanArgs(repl_command=f"{sys.executable} {FAKE}", lean_project=str(tmp_path))
    with pytest.raises(ConfigError, match=r"Lean v4\.2\.0 is outside what the repl backend") as e:
        build_backend("repl", args)
    assert "\n" not in e.value.one_line()
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.26.0\n")
    assert isinstance(build_backend("repl", args), ReplBackend)
