"""``leantrain prove``: a memorising generator proves what it memorised, an untrained one
does not; bad input is one line, a non-zero exit and no output."""

from __future__ import annotations

import json

import pytest
from leantrain.core.cli import main


def _prove(capsys, *args):
    code = main(["prove", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def memorised(tmp_path_factory):
    """A tiny generator trained with leantrain's SFT until it has memorised the nat-basics test
    proofs (6 tactics of 3 theorems)."""
    import torch
    from leantrain.core.sample import sample_data_dir
    from leantrain.llm import SFTTrainer

    torch.set_num_threads(1)
    run = tmp_path_factory.mktemp("memorised") / "run"
    SFTTrainer(
        model_name="tiny",
        output_dir=run,
        lr=3e-3,
        batch_size=6,
        max_steps=150,
        logging_steps=50,
        evaluate_each_repo=False,
        save_steps=1000,
        train_split="test",
        allow_contamination=True,  # trains on the theorems it proves, on purpose
    ).train(sample_data_dir() / "nat-basics")
    return run


SEARCH = ["--k", 2, "--max-new-tokens", 24, "--max-expansions", 8, "--progress-bar", "false"]


@pytest.mark.slow
def test_a_memorising_generator_proves_its_proofs_and_an_untrained_one_does_not(
    memorised, nat_basics, tmp_path, capsys
):
    code, out, err = _prove(
        capsys,
        "--generator",
        memorised,
        "--data",
        nat_basics,
        "--out",
        tmp_path / "a.jsonl",  # the rows go to a.jsonl, the run (to resume) into a/
        *SEARCH,
    )
    assert code == 0, err
    rows = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert [r["proved"] for r in rows] == [True] * 3
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "a" / "results.jsonl").read_bytes()
    from leantrain.llm.model_loading import resolve_model_path
    from leantrain.tactics import DEFAULT_SYSTEM_PROMPT
    from leantrain.tactics.model_prompt import read_prompt

    # trained with the default prompt, which its checkpoint's prompt.json records
    assert read_prompt(resolve_model_path(memorised)).system_prompt == DEFAULT_SYSTEM_PROMPT
    summary = json.loads(out)
    assert summary["metric"] == "replay proof rate"
    assert (summary["proved"], summary["attempted"]) == (3, 3)
    assert "replay proof rate: 3/3 (100.0 %) — a lower bound" in err
    code, out, err = _prove(
        capsys, "--generator", "tiny", "--data", nat_basics, "--output-dir", tmp_path / "b", *SEARCH
    )
    assert code == 0, err
    assert json.loads(out)["proved"] == 0


def test_unknown_theorem(nat_basics, tmp_path, capsys):
    code, _, err = _prove(
        capsys,
        "--generator", "tiny", "--data", nat_basics, "--output-dir", tmp_path / "o",
        "--theorems", "NatBasics.even_ad",
    )  # fmt: skip
    assert code == 1
    assert "no theorem named 'NatBasics.even_ad'" in _one_line_error(err)
    assert "did you mean 'NatBasics.even_add'" in err
    assert not (tmp_path / "o").exists()


def test_missing_data_and_empty_or_unknown_split(tmp_path, capsys):
    code, _, err = _prove(
        capsys, "--generator", "tiny", "--data", tmp_path / "nope", "--output-dir", tmp_path / "o"
    )
    assert code == 1 and "no such file or directory" in _one_line_error(err)
    empty = tmp_path / "export" / "random"
    empty.mkdir(parents=True)
    (empty / "test.json").write_text("[]")
    code, _, err = _prove(
        capsys, "--generator", "tiny", "--data", tmp_path / "export", "--output-dir", tmp_path / "o"
    )
    assert code == 1 and "holds no theorems" in _one_line_error(err)
    code, _, err = _prove(
        capsys,
        "--generator", "tiny", "--data", tmp_path / "export", "--output-dir", tmp_path / "o",
        "--split", "tset",
    )  # fmt: skip
    assert code == 2 and "'split'" in (line := _one_line_error(err))
    assert "choose one of: 'train', 'val', 'test'" in line  # core's Literal wording
    assert not (tmp_path / "o").exists()


def test_missing_model(nat_basics, tmp_path, capsys):
    code, _, err = _prove(
        capsys,
        "--generator", tmp_path / "no-model", "--data", nat_basics, "--output-dir", tmp_path / "o",
    )  # fmt: skip
    assert code == 2 and "model not found" in _one_line_error(err)
    assert not (tmp_path / "o").exists()


def test_leandojo_without_lean_dojo_is_one_line_before_any_model_loads(
    nat_basics, tmp_path, capsys, monkeypatch
):
    import sys

    monkeypatch.setitem(sys.modules, "lean_dojo", None)
    code, _, err = _prove(
        capsys,
        "--generator", tmp_path / "no-model",  # loading it would fail with another message
        "--data", nat_basics, "--output-dir", tmp_path / "o", "--backend", "leandojo",
    )  # fmt: skip
    assert code == 3
    assert "pip install 'leantrain-prover[leandojo]'" in _one_line_error(err)
    assert not (tmp_path / "o").exists()


def test_missing_flags_and_foreign_output_dir(nat_basics, tmp_path, capsys):
    code, _, err = _prove(capsys, "--data", nat_basics, "--output-dir", tmp_path / "o")
    assert code == 2 and "--generator" in _one_line_error(err)
    code, _, err = _prove(
        capsys, "--generator", "tiny", "--data", nat_basics, "--out", tmp_path / "p.json"
    )
    assert code == 2 and "looks like a file name" in _one_line_error(err)
    assert not (tmp_path / "p.json").exists()
    (tmp_path / "theirs.jsonl").write_text("keep me\n")  # not written by a proof run
    code, _, err = _prove(
        capsys, "--generator", "tiny", "--data", nat_basics, "--out", tmp_path / "theirs.jsonl"
    )
    assert code == 2 and "holds no proof run" in _one_line_error(err)
    assert (tmp_path / "theirs.jsonl").read_text() == "keep me\n"
    assert not (tmp_path / "theirs").exists()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    code, _, err = _prove(
        capsys, "--generator", "tiny", "--data", nat_basics, "--output-dir", foreign
    )
    assert code == 2 and "files leantrain did not write" in _one_line_error(err)
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]


def test_a_bad_progress_model_is_one_line_before_the_generator_loads(nat_basics, tmp_path, capsys):
    code, _, err = _prove(
        capsys,
        "--generator", tmp_path / "no-model",  # loading it would fail with another message
        "--progress", tmp_path / "no-progress",
        "--data", nat_basics, "--output-dir", tmp_path / "o",
    )  # fmt: skip
    assert code == 1 and "not a trained progress model" in _one_line_error(err)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("device", "cuda", "message"),
    [
        ("tpu", 0, "--device 'tpu' is no device of the prover"),
        ("cuda", 0, "--device cuda: this machine has no CUDA GPU"),
        ("cuda:1", 1, "--device cuda:1: this machine has 1 CUDA device(s)"),
    ],
)
def test_a_device_this_machine_lacks_is_one_line_when_the_options_are_read(
    device, cuda, message, nat_basics, tmp_path, capsys, monkeypatch
):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: cuda)
    code, _, err = _prove(
        capsys,
        "--generator", tmp_path / "no-model",  # loading it would fail with another message
        "--data", nat_basics, "--output-dir", tmp_path / "o", "--device", device,
    )  # fmt: skip
    assert code == 2 and message in _one_line_error(err)
    assert not (tmp_path / "o").exists()


def test_cpu_and_an_available_cuda_device_are_taken(monkeypatch):
    import torch
    from leantrain.prover import ProverConfig

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    for device in ("cpu", "cuda", "cuda:1", None):
        assert ProverConfig(device=device).device == device


def test_required_options_are_marked_in_help_and_have_no_default(tmp_path, capsys):
    from leantrain.core.cli import main

    with pytest.raises(SystemExit) as done:
        main(["prove", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "--generator STR" in out.split("\n")[0] and "--output-dir STR" in out.split("\n")[0]
    assert out.count("(required)") == 3
    code, _, err = _prove(capsys, "--generator", "tiny", "--output-dir", tmp_path / "o")
    assert code == 2 and "missing required --data" in _one_line_error(err)


def test_whole_proof_settings_refused_in_tactic_mode():
    from leantrain.core.errors import ConfigError
    from leantrain.prover.prover_config import ProverConfig

    with pytest.raises(ConfigError, match="--feedback-rounds is a setting of --mode whole"):
        ProverConfig(feedback_rounds=1)
    with pytest.raises(ConfigError, match="--max-proof-tokens is a setting of --mode whole"):
        ProverConfig(max_proof_tokens=64)
    assert ProverConfig(mode="whole", feedback_rounds=1, max_proof_tokens=64).feedback_rounds == 1


@pytest.mark.parametrize("shard", ["2/2", "x", "1/0", "1/", "-1/2"])
def test_a_shard_that_is_not_i_of_n_is_one_line(shard):
    from leantrain.core.errors import ConfigError
    from leantrain.prover import ProverConfig

    with pytest.raises(ConfigError, match=r"--shard '.*' is not i/n with 0 <= i < n"):
        ProverConfig(shard=shard)
    assert ProverConfig(shard="3/4").shard == "3/4"
