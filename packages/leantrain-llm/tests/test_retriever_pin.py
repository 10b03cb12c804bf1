"""A training run pins the retriever checkpoint its prompts were built with: a lifelong
retrieval run that trains on before the SFT run resumes or continues on its next repository is
a one-line error naming both checkpoints, not prompts from a newer retriever mid-run."""

from __future__ import annotations

import json

import pytest
from leantrain.core.config import config_from_dict
from leantrain.core.errors import ConfigError
from leantrain.llm.sft_config import SFTConfig
from leantrain.llm.training_data import dataset_config


def _run_dir(path, trainers=None, config=None):
    from leantrain.core.manifest import RunManifest
    from leantrain.core.output_dir import write_marker

    path.mkdir(parents=True)
    write_marker(path, "run")
    RunManifest.create(path, kind="lifelong", trainers=trainers or ["sft"], config=config)
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


def _cfg(output_dir, retriever):
    return config_from_dict(SFTConfig, {"output_dir": str(output_dir), "retriever": str(retriever)})


def test_a_run_keeps_the_retriever_checkpoint_it_started_with(tmp_path):
    ret = _run_dir(tmp_path / "ret", ["retrieval"])
    first = _train_retriever(ret, 0)
    sft = _run_dir(tmp_path / "sft")
    assert dataset_config(_cfg(sft, ret)).retriever == str(first)  # pinned now
    assert dataset_config(_cfg(sft, ret)).retriever == str(first)

    newer = _train_retriever(ret, 1)  # retrieval trained on repository 2
    with pytest.raises(ConfigError) as e:
        dataset_config(_cfg(sft, ret))  # the SFT run resumes / goes on to repository 2
    line = e.value.one_line()
    assert "\n" not in line and str(first) in line and str(newer) in line
    assert f"--retriever {first}" in line
    # the pinned checkpoint by its path: the same prompts
    assert dataset_config(_cfg(sft, first)).retriever == str(first)
    # a new run pins the newer one
    assert dataset_config(_cfg(_run_dir(tmp_path / "sft2"), ret)).retriever == str(newer)


def test_outside_a_run_the_retriever_is_as_given(tmp_path):
    ret = _run_dir(tmp_path / "ret", ["retrieval"])
    _train_retriever(ret, 0)
    assert dataset_config(_cfg(tmp_path / "not-a-run", ret)).retriever == str(ret)


def test_a_model_is_not_asked_with_its_retriever_runs_newer_checkpoint(tmp_path):
    """`llm eval` / a new run from a pinned model with the same --retriever path that has
    trained on since: one line; the newer checkpoint named by its own path is a choice."""
    ret = _run_dir(tmp_path / "ret", ["retrieval"])
    first = _train_retriever(ret, 0)
    sft = _run_dir(tmp_path / "sft", config={"sft": {"system_prompt": None, "retriever": str(ret)}})
    dataset_config(_cfg(sft, ret))  # the run trains with (and pins) the first checkpoint
    (sft / "sft" / "000-x").mkdir(parents=True)
    newer = _train_retriever(ret, 1)
    on = {"model_name": str(sft / "sft" / "000-x"), "output_dir": str(tmp_path / "ev")}
    with pytest.raises(ConfigError) as e:
        dataset_config(config_from_dict(SFTConfig, {**on, "retriever": str(ret)}))
    line = e.value.one_line()
    assert "\n" not in line and str(first) in line and str(newer) in line
    for given in (first, newer):
        cfg = config_from_dict(SFTConfig, {**on, "retriever": str(given)})
        assert dataset_config(cfg).retriever == str(given)
