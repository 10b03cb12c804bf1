"""Retrieval-augmented prompts reach the trainers' datasets; a model is trained on and
evaluated with the prompt of its prompt.json unless a setting is given (then one warning)."""

from __future__ import annotations

import json
import logging

import pytest
from leantrain.core.config import config_from_dict
from leantrain.core.errors import ConfigError
from leantrain.llm.eval_config import EvalConfig
from leantrain.llm.grpo_config import GRPOConfig
from leantrain.llm.sft_config import SFTConfig
from leantrain.llm.training_data import dataset_config
from leantrain.tactics import DEFAULT_SYSTEM_PROMPT


def _retriever(path, content="a"):
    """A directory that passes as a saved retriever (no weights are loaded here)."""
    path.mkdir(parents=True)
    (path / "retriever.json").write_text(json.dumps({"content": content}))
    return path


def _model(path, **fields):
    """A model directory (its config.json is never loaded here) with a prompt.json."""
    from leantrain.tactics.model_prompt import ModelPrompt, write_prompt

    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    write_prompt(path, ModelPrompt(**fields))
    return path


@pytest.mark.parametrize("config_class", [SFTConfig, GRPOConfig])
def test_the_settings_reach_the_dataset_config(config_class, tmp_path):
    ret = _retriever(tmp_path / "ret")
    rag = {"retriever": str(ret), "num_premises": 3, "max_premise_chars": 99}
    cfg = config_from_dict(config_class, {**rag, "output_dir": str(tmp_path)})
    got = dataset_config(cfg)
    assert (got.retriever, got.num_premises, got.max_premise_chars) == (str(ret.resolve()), 3, 99)
    plain = dataset_config(config_from_dict(config_class, {"output_dir": str(tmp_path)}))
    assert plain.retriever is None
    assert set(rag) <= set(vars(EvalConfig()))  # llm eval takes them too


def test_a_model_is_trained_on_and_evaluated_with_its_prompt_json(tmp_path, caplog):
    from leantrain.tactics.premises import retriever_checkpoint

    ret = retriever_checkpoint(_retriever(tmp_path / "ret"))
    model = _model(tmp_path / "m", system_prompt="Be brief.", first_line_only=True,
                   retriever=ret.path, retriever_sha256=ret.sha256, num_premises=3)  # fmt: skip
    for config_class in (SFTConfig, GRPOConfig):
        cfg = config_from_dict(
            config_class, {"model_name": str(model), "output_dir": str(tmp_path)}
        )
        got = dataset_config(cfg)
        assert (got.system_prompt, got.first_line_only) == ("Be brief.", True)
        assert (got.retriever, got.num_premises) == (ret.path, 3)
    # a given setting that differs: one warning line, and the given one is used
    for given, named in [
        ({"retriever": ""}, "retriever None"),
        ({"num_premises": 5}, "num_premises 5"),
    ]:
        cfg = config_from_dict(
            SFTConfig, {"model_name": str(model), "output_dir": str(tmp_path), **given}
        )
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="leantrain.tactics"):
            got = dataset_config(cfg)
        assert len(caplog.records) == 1 and named in caplog.text, caplog.text
        assert "\n" not in caplog.records[0].getMessage()
        key, value = next(iter(given.items()))
        assert getattr(got, key) == (value or None)
    # a plain name, a model without prompt.json: the config's settings
    for name in ("tiny", str(_model(tmp_path / "bare"))):
        cfg = config_from_dict(SFTConfig, {"model_name": name, "output_dir": str(tmp_path)})
        assert dataset_config(cfg).system_prompt == DEFAULT_SYSTEM_PROMPT


def test_a_bad_prompt_json_is_one_line_before_any_model_loads(tmp_path):
    from leantrain.core.errors import CheckpointError
    from leantrain.tactics.model_prompt import PROMPT_NAME

    model = _model(tmp_path / "m")
    (model / PROMPT_NAME).write_text("{")
    cfg = config_from_dict(SFTConfig, {"model_name": str(model), "output_dir": str(tmp_path)})
    with pytest.raises(CheckpointError, match=f"{model / PROMPT_NAME}: not valid JSON"):
        dataset_config(cfg)


def test_suggest_tactics_refuses_to_drop_the_premises(tmp_path):
    from leantrain.llm import SFTTrainer

    ret = _retriever(tmp_path / "ret")
    trainer = SFTTrainer(model_name="tiny", output_dir=str(tmp_path / "o"), retriever=str(ret))
    with pytest.raises(ConfigError, match="suggest_tactics does not retrieve premises"):
        trainer.suggest_tactics("⊢ True")
    assert trainer._model is None  # refused before the model loads


def test_the_files_of_a_model_are_found_where_it_loads_from(tmp_path):
    """prompt.json is looked for in the model directory: not for tiny, a hub id or a GGUF
    file; a directory holding a GGUF file is its own (no run lookup, no error)."""
    from leantrain.llm.model_loading import model_files_dir

    gguf = tmp_path / "gguf"
    gguf.mkdir()
    (gguf / "m.gguf").write_bytes(b"GGUF")
    assert model_files_dir(gguf) == gguf
    model = _model(tmp_path / "m")
    assert model_files_dir(model) == model
    for name in ("tiny", "org/model", gguf / "m.gguf"):
        assert model_files_dir(name) is None
