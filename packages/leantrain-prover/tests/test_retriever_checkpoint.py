"""The retriever checkpoint a generator trained with (its prompt.json) is what the prover asks
with: a lifelong retrieval run that gains a checkpoint after SFT changes nothing unless named,
and naming it is refused in one line (both checkpoints and the fixes) unless --prompt-override;
prover_config.json records the effective premise settings, so a rerun with another checkpoint
is refused."""

from __future__ import annotations

import json
import shutil

import pytest
from leantrain.core.cli import main
from leantrain.core.errors import ConfigError
from leantrain.prover import Prover

SEARCH = {"num_sampled_tactics": 1, "max_expansions": 2, "progress_bar": False}


@pytest.fixture(scope="module")
def retrievers(tmp_path_factory):
    """Two tiny (untrained) premise retrievers with different weights."""
    import torch
    from leantrain.retrieval import PremiseRetriever

    out = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        path = tmp_path_factory.mktemp("ret") / f"retriever{seed}"
        PremiseRetriever.from_name("tiny").save_pretrained(path)
        out.append(path)
    return out


def _retrieval_run(path, retriever):
    """A lifelong retrieval run whose first checkpoint is ``retriever``."""
    from leantrain.core.manifest import RunManifest
    from leantrain.core.output_dir import write_marker

    path.mkdir(parents=True)
    write_marker(path, "run")
    RunManifest.create(path, kind="lifelong", trainers=["retrieval"])
    _train_on(path, 0, retriever)
    return path


def _train_on(run, index, retriever):
    """The retrieval run trains on its ``index``-th repository: a newer checkpoint."""
    from leantrain.core.manifest import RunManifest, StepRecord

    manifest = RunManifest.load(run)
    ckpt = run / "retrieval" / f"{index:03d}-repo{index}"
    shutil.copytree(retriever, ckpt)
    record = StepRecord(
        trainer="retrieval", index=index, repo=f"repo{index}", checkpoint=manifest.checksum(ckpt)
    )
    manifest.record_step(record)
    return ckpt


def _generator(path, retriever_run, **rag):
    """A generator trained with ``retriever_run`` (its prompt.json as ``leantrain sft
    --retriever`` writes it: the checkpoint the run names now)."""
    from leantrain.tactics.model_prompt import ModelPrompt, write_prompt
    from leantrain.tactics.premises import retriever_checkpoint

    ckpt = retriever_checkpoint(retriever_run)
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    write_prompt(path, ModelPrompt(retriever=ckpt.path, retriever_sha256=ckpt.sha256, **rag))
    return path


class PremiseGenerator:
    def propose(self, states, k, premises=None):
        return [[] for _ in states]


def test_a_retriever_run_that_trained_on_after_sft_changes_nothing_unless_named(
    nat_basics, retrievers, tmp_path, capsys
):
    ret = _retrieval_run(tmp_path / "ret", retrievers[0])
    gen = _generator(tmp_path / "gen", ret, num_premises=3)
    pinned = ret / "retrieval" / "000-repo0"
    kw = {"tactic_generator": PremiseGenerator(), "data": str(nat_basics), **SEARCH}
    prover = Prover(generator=str(gen), **kw)
    assert prover.premise_settings.checkpoint == str(pinned.resolve())

    newer = _train_on(ret, 1, retrievers[1])  # the retrieval run goes on to repository 2
    prover = Prover(generator=str(gen), **kw)  # the model's own checkpoint still
    assert prover.premise_settings.checkpoint == str(pinned.resolve())
    with pytest.raises(ConfigError) as e:
        Prover(generator=str(gen), retriever=str(ret), **kw)
    line = e.value.one_line()
    assert "\n" not in line
    assert str(pinned.resolve()) in line and str(newer.resolve()) in line
    assert "--prompt-override" in line
    # the CLI: one line, nothing written
    capsys.readouterr()
    code = main(
        [
            "prove", "--generator", str(gen), "--data", str(nat_basics), "--retriever", str(ret),
            "--output-dir", str(tmp_path / "o"),
        ]
    )  # fmt: skip
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert code != 0 and len(err) == 1 and str(newer.resolve()) in err[0], err
    assert not (tmp_path / "o").exists()

    # the fixes: the pinned checkpoint by its path, or the newer one on purpose
    prover = Prover(generator=str(gen), retriever=str(pinned), **kw)
    assert prover.premise_settings.checkpoint == str(pinned.resolve())
    prover = Prover(generator=str(gen), retriever=str(ret), prompt_override=True, **kw)
    assert prover.premise_settings.checkpoint == str(newer.resolve())
    assert prover.premise_source is not None


def test_prover_config_records_the_effective_premise_settings(nat_basics, retrievers, tmp_path):
    from leantrain.tactics.premises import retriever_checkpoint

    ret = _retrieval_run(tmp_path / "ret", retrievers[0])
    gen = _generator(tmp_path / "gen", ret, num_premises=3, max_premise_chars=400)
    out = tmp_path / "proofs"
    kw = {"tactic_generator": PremiseGenerator(), "data": str(nat_basics), **SEARCH}
    Prover(generator=str(gen), output_dir=str(out), **kw).evaluate()
    saved = json.loads((out / "prover_config.json").read_text())
    pinned = retriever_checkpoint(ret / "retrieval" / "000-repo0")
    assert saved["retriever"] == pinned.path
    assert saved["retriever_checkpoint"] == pinned.path
    assert saved["retriever_sha256"] == pinned.sha256
    assert (saved["num_premises"], saved["max_premise_chars"]) == (3, 400)
    # the same effective settings resume; another checkpoint (on purpose) is another config
    Prover(generator=str(gen), output_dir=str(out), **kw).evaluate()
    _train_on(ret, 1, retrievers[1])
    with pytest.raises(ConfigError, match=r"different config.*retriever_checkpoint"):
        Prover(
            generator=str(gen), output_dir=str(out), retriever=str(ret), prompt_override=True, **kw
        )


def test_the_fingerprint_is_the_recorded_checksums_or_the_files(retrievers, tmp_path):
    """A retrieval run's checkpoint and a copy of it outside any run have one fingerprint."""
    from leantrain.tactics.premises import retriever_checkpoint

    ret = _retrieval_run(tmp_path / "ret", retrievers[0])
    in_run = retriever_checkpoint(ret)
    assert in_run == retriever_checkpoint(ret / "retrieval" / "000-repo0")
    assert in_run.sha256 == retriever_checkpoint(retrievers[0]).sha256
    assert in_run.sha256 != retriever_checkpoint(retrievers[1]).sha256
