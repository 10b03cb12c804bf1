"""``verify`` of a proofs.json through the repl backend; ``check_toolchain``."""

from __future__ import annotations

import json

import pytest
from leantrain.core.errors import ConfigError, DataError
from leantrain.lean import SUPPORT, check_toolchain, load_proofs, summarize, verify


def prover_record(name, statement, tactics):
    """A record as leantrain.prover writes proofs.json (``traced_record``)."""
    return {
        "url": "https://github.com/x/y",
        "commit": "0" * 40,
        "file_path": "Y/Z.lean",
        "full_name": name,
        "theorem_statement": statement,
        "start": [1, 1],
        "end": [2, 1],
        "traced_tactics": [
            {"tactic": t, "annotated_tactic": [t, []], "state_before": "", "state_after": ""}
            for t in tactics
        ],
    }


def test_verify_a_proofs_json_through_the_repl(fake, tmp_path):
    b = fake.backend("native_decide", "tactic_sorry")
    proofs = tmp_path / "proofs.json"
    proofs.write_text(
        json.dumps(
            [
                prover_record("ex1", "theorem ex1 : True :=", ["native_decide"]),
                prover_record("f", "def f : Nat :=", ["sorry"]),
                prover_record("g", "theorem g : True :=", ["exact?"]),
            ]
        )
    )
    rows = verify(proofs, b)
    assert [r["status"] for r in rows] == ["rejected", "rejected", "rejected"]
    assert "Lean.ofReduceBool" in rows[0]["reason"] and rows[0]["axioms"] == ["Lean.ofReduceBool"]
    assert "sorry" in rows[1]["reason"] and "search tactic" in rows[2]["reason"]
    rows_ok = verify(proofs, b, allowed_axioms=("propext", "Lean.ofReduceBool"))
    assert rows_ok[0]["status"] == "proved"
    s = summarize(rows_ok)
    assert s["total"] == 3 and s["proved"] == 1 and s["rejected"] == 2


def test_verify_uses_the_recorded_mathlib_header(fake, mathlib_header):
    b = fake.backend("mathlib_H20231020")
    rows = verify(
        [
            {
                "name": "mathd_numbertheory_188",
                "formal_statement": "theorem mathd_numbertheory_188 : Nat.gcd 180 168 = 12 := by",
                "proof": "norm_num",
            }
        ],
        b,
        header=mathlib_header,
    )
    assert rows[0]["status"] == "proved"


@pytest.mark.parametrize(
    ("record", "words"),
    [
        ({"full_name": "x"}, "record 0, field 'theorem_statement': missing"),
        ({"full_name": "x", "theorem_statement": "theorem x : True :="}, "field 'traced_tactics'"),
        (
            {
                "full_name": "x",
                "theorem_statement": "theorem x : True :=",
                "traced_tactics": [{"t": 1}],
            },
            "'tactic' string",
        ),
        (
            {"full_name": "x", "theorem_statement": "theorem x : True :=", "proof": ""},
            "field 'proof'",
        ),
    ],
)
def test_a_bad_record_is_one_line_before_lean_is_asked(fake, tmp_path, record, words):
    b = fake.backend("readme")
    p = tmp_path / "proofs.json"
    p.write_text(json.dumps([record]))
    with pytest.raises(DataError) as e:
        verify(p, b)
    assert words in e.value.one_line()
    assert fake.sent() == []


def test_load_proofs_reads_json_and_jsonl(tmp_path):
    (tmp_path / "a.json").write_text('[{"x": 1}]')
    (tmp_path / "b.jsonl").write_text('{"x": 1}\n{"x": 2}\n')
    assert load_proofs(tmp_path / "a.json") == [{"x": 1}]
    assert len(load_proofs(tmp_path / "b.jsonl")) == 2
    (tmp_path / "c.json").write_text("[{")
    with pytest.raises(DataError, match="not JSON"):
        load_proofs(tmp_path / "c.json")


# -- toolchain ---------------------------------------------------------------------------------


def project(tmp_path, toolchain):
    (tmp_path / "lean-toolchain").write_text(toolchain + "\n")
    return tmp_path


def test_supported_toolchains_answer_their_version(tmp_path):
    p = project(tmp_path, "leanprover/lean4:v4.26.0")
    for backend in SUPPORT:
        assert check_toolchain(p, backend) == "v4.26.0"
    assert check_toolchain(project(tmp_path, "leanprover/lean4:v4.9.0-rc1"), "repl") == "v4.9.0-rc1"


def test_a_toolchain_outside_the_range_is_one_line(tmp_path):
    p = project(tmp_path, "leanprover/lean4:v4.2.0")
    with pytest.raises(ConfigError) as e:
        check_toolchain(p, "repl")
    line = e.value.one_line()
    assert "Lean v4.2.0 is outside what the repl backend supports (v4.3.0 to the newest" in line
    assert "\n" not in line
    # v4.3.0-rc2 is LeanDojo's floor: rc1 is below it, rc2 is in
    with pytest.raises(ConfigError):
        check_toolchain(project(tmp_path, "leanprover/lean4:v4.3.0-rc1"), "leandojo")
    assert (
        check_toolchain(project(tmp_path, "leanprover/lean4:v4.3.0-rc2"), "leandojo")
        == "v4.3.0-rc2"
    )


def test_expected_version_must_match_exactly(tmp_path):
    p = project(tmp_path, "leanprover/lean4:v4.21.0")
    with pytest.raises(ConfigError, match=r"built for v4\.26\.0"):
        check_toolchain(p, "kimina", expected="v4.26.0")
    assert check_toolchain(p, "pantograph", expected="v4.21.0") == "v4.21.0"


def test_missing_nightly_and_unknown_backend_are_one_line(tmp_path):
    with pytest.raises(ConfigError, match="lean-toolchain: missing"):
        check_toolchain(tmp_path, "repl")
    with pytest.raises(ConfigError, match="names no Lean release"):
        check_toolchain(project(tmp_path, "leanprover/lean4:nightly"), "repl")
    with pytest.raises(ConfigError, match="unknown Lean backend 'coq'"):
        check_toolchain(tmp_path, "coq")
