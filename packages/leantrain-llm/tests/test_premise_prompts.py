"""Retrieval-augmented prompts reach the trainers' datasets; a model trained with a retriever
is not trained on or evaluated with premise-free prompts by default."""

from __future__ import annotations

import pytest
from leantrain.core.config import config_from_dict
from leantrain.core.errors import ConfigError
from leantrain.llm.eval_config import EvalConfig
from leantrain.llm.grpo_config import GRPOConfig
from leantrain.llm.sft_config import SFTConfig
from leantrain.llm.training_data import dataset_config


def _run(path, section):
    from leantrain.core.manifest import RunManifest
    from leantrain.core.output_dir import write_marker

    path.mkdir(parents=True)
    write_marker(path, "run")
    RunManifest.create(path, kind="lifelong", trainers=["sft"], config={"sft": section})
    (path / "sft" / "000-x").mkdir(parents=True)
    return path


@pytest.mark.parametrize("config_class", [SFTConfig, GRPOConfig])
def test_the_settings_reach_the_dataset_config(config_class, tmp_path):
    rag = {"retriever": "runs/ret", "num_premises": 3, "max_premise_chars": 99}
    cfg = config_from_dict(config_class, {**rag, "output_dir": str(tmp_path)})
    got = dataset_config(cfg)
    assert (got.retriever, got.num_premises, got.max_premise_chars) == ("runs/ret", 3, 99)
    plain = dataset_config(config_from_dict(config_class, {"output_dir": str(tmp_path)}))
    assert plain.retriever is None
    assert set(rag) <= set(vars(EvalConfig()))  # llm eval takes them too


def test_a_retrieval_trained_model_needs_its_retriever_given(tmp_path):
    run = _run(tmp_path / "rag", {"system_prompt": None, "retriever": "runs/ret"})
    for model in (run, run / "sft" / "000-x"):
        cfg = config_from_dict(SFTConfig, {"model_name": str(model), "output_dir": str(tmp_path)})
        with pytest.raises(ConfigError) as e:
            dataset_config(cfg)
        line = e.value.one_line()
        assert "\n" not in line and "retriever=runs/ret" in line and "--retriever" in line
    # given (the same or another), or dropped on purpose with '': no error
    for given in ("runs/ret", ""):
        cfg = config_from_dict(
            SFTConfig, {"model_name": str(run), "retriever": given, "output_dir": str(tmp_path)}
        )
        assert dataset_config(cfg).retriever == (given or None)
    # a run trained without one, a plain name: nothing to check
    plain = _run(tmp_path / "plain", {"system_prompt": None})
    for model in (str(plain), "tiny"):
        cfg = config_from_dict(SFTConfig, {"model_name": model, "output_dir": str(tmp_path)})
        assert dataset_config(cfg).retriever is None


def test_suggest_tactics_refuses_to_drop_the_premises(tmp_path):
    from leantrain.llm import SFTTrainer

    trainer = SFTTrainer(model_name="tiny", output_dir=str(tmp_path), retriever="runs/ret")
    with pytest.raises(ConfigError, match="suggest_tactics does not retrieve premises"):
        trainer.suggest_tactics("⊢ True")
    assert trainer._model is None  # refused before the model loads
