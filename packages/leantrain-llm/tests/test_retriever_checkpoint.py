"""A retriever setting is resolved to the checkpoint it names now, and that checkpoint (with
its fingerprint) is what a saved model's prompt.json records: a lifelong retrieval run that
trains on before the SFT run goes on to its next repository is a one-line error naming both
checkpoints (the run's previous checkpoint says which one it trained with); a new model or
``llm eval`` given the newer one is warned about, not refused."""

from __future__ import annotations

import json
import logging

import pytest
from leantrain.core.config import config_from_dict
from leantrain.core.errors import ConfigError
from leantrain.llm.sft_config import SFTConfig
from leantrain.llm.training_data import dataset_config, model_prompt
from leantrain.tactics.model_prompt import write_prompt


def _run_dir(path, trainers):
    from leantrain.core.manifest import RunManifest
    from leantrain.core.output_dir import write_marker

    path.mkdir(parents=True)
    write_marker(path, "run")
    RunManifest.create(path, kind="lifelong", trainers=trainers)
    return path


def _train_retriever(run, index):
    """The retrieval run saves its checkpoint of repository ``index`` (a stand-in retriever:
    only its files are read here)."""
    from leantrain.core.manifest import RunManifest, StepRecord

    manifest = RunManifest.load(run)
    ckpt = run / "retrieval" / f"{index:03d}-repo{index}"
    ckpt.mkdir(parents=True)
    (ckpt / "retriever.json").write_text(json.dumps({"model": "tiny"}))
    (ckpt / "model.safetensors").write_bytes(bytes([index]) * 64)
    manifest.record_step(
        StepRecord(
            trainer="retrieval", index=index, repo=f"r{index}", checkpoint=manifest.checksum(ckpt)
        )
    )
    return ckpt.resolve()


def _cfg(tmp_path, retriever, **more):
    values = {"output_dir": str(tmp_path / "o"), "retriever": str(retriever), **more}
    return config_from_dict(SFTConfig, values)


def _saved(path, prompt):
    """A checkpoint as a trainer saves it (only its prompt.json is read here)."""
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    write_prompt(path, prompt)
    return path


def test_a_retriever_run_is_resolved_to_its_newest_checkpoint(tmp_path):
    ret = _run_dir(tmp_path / "ret", ["retrieval"])
    first = _train_retriever(ret, 0)
    assert dataset_config(_cfg(tmp_path, ret)).retriever == str(first)
    newer = _train_retriever(ret, 1)
    assert dataset_config(_cfg(tmp_path, ret)).retriever == str(newer)
    assert dataset_config(_cfg(tmp_path, first)).retriever == str(first)


def test_a_run_goes_on_with_the_retriever_checkpoint_it_trained_with(tmp_path):
    ret = _run_dir(tmp_path / "ret", ["retrieval"])
    first = _train_retriever(ret, 0)
    step0 = _saved(tmp_path / "sft" / "sft" / "000-r0", model_prompt(_cfg(tmp_path, ret)))
    assert model_prompt(_cfg(tmp_path, ret), step0, in_run=True).retriever == str(first)

    newer = _train_retriever(ret, 1)  # retrieval trained on repository 2
    with pytest.raises(ConfigError) as e:
        model_prompt(_cfg(tmp_path, ret), step0, in_run=True)  # SFT goes on to repository 2
    line = e.value.one_line()
    assert "\n" not in line and str(first) in line and str(newer) in line
    assert f"--retriever {first}" in line
    # the checkpoint it trained with, by its path: the same prompts
    assert model_prompt(_cfg(tmp_path, first), step0, in_run=True).retriever == str(first)


def test_a_new_model_or_eval_with_the_newer_checkpoint_is_warned_about(tmp_path, caplog):
    ret = _run_dir(tmp_path / "ret", ["retrieval"])
    first = _train_retriever(ret, 0)
    model = _saved(tmp_path / "model", model_prompt(_cfg(tmp_path, ret)))
    newer = _train_retriever(ret, 1)
    # not given: the model's own checkpoint, whatever the retrieval run did since
    cfg = config_from_dict(SFTConfig, {"model_name": str(model), "output_dir": str(tmp_path)})
    assert dataset_config(cfg).retriever == str(first)
    for given, used, warned in [(first, first, False), (ret, newer, True), (newer, newer, False)]:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="leantrain.tactics"):
            got = dataset_config(_cfg(tmp_path, given, model_name=str(model)))
        assert got.retriever == str(used)
        assert bool(caplog.records) == warned
        if warned:  # once per process: the same difference again is not repeated
            assert str(first) in caplog.text and str(newer) in caplog.text
