"""llm's and tactics' setting groups: every source gives the same value; help and errors."""

from __future__ import annotations

import pytest
from leantrain.core.config import config_from_dict, config_from_yaml
from leantrain.core.errors import ConfigError
from leantrain.core.parser import parse
from leantrain.llm.common_config import EvalArgs, LoraArgs, ModelArgs, TrainDataArgs
from leantrain.llm.eval_config import EvalConfig
from leantrain.tactics.dataset_config import PromptArgs, SplitArgs, TacticDatasetConfig

VALID = [
    (ModelArgs, "model_name", "1e3", "1e3"),
    (ModelArgs, "model_name", "runs/sft", "runs/sft"),
    (TrainDataArgs, "train_split", "val", "val"),
    (TrainDataArgs, "eval_split", "test", "test"),
    (TrainDataArgs, "max_train_samples", "5", 5),
    (LoraArgs, "use_lora", "true", True),
    (LoraArgs, "lora_r", "16", 16),
    (LoraArgs, "lora_alpha", "32", 32),
    (LoraArgs, "lora_dropout", "0.1", 0.1),
    (LoraArgs, "lora_target_modules", "[q_proj, v_proj]", ["q_proj", "v_proj"]),
    (EvalArgs, "eval_k", "1", 1),
    (EvalArgs, "eval_max_new_tokens", "32", 32),
    (EvalArgs, "max_eval_samples", "null", None),
    (PromptArgs, "system_prompt", "Prove it. #lean", "Prove it. #lean"),
    (PromptArgs, "first_line_only", "true", True),
    (PromptArgs, "retriever", "runs/ret", "runs/ret"),
    (PromptArgs, "num_premises", "3", 3),
    (PromptArgs, "max_premise_chars", "500", 500),
    (SplitArgs, "split_strategy", "novel_premises", "novel_premises"),
    (TacticDatasetConfig, "max_samples", "2", 2),
    (TacticDatasetConfig, "chunk_chars", "64", 64),
]


@pytest.mark.parametrize(("cls", "key", "text", "expected"), VALID)
def test_every_source_gives_the_same_value(cls, key, text, expected, tmp_path):
    path = tmp_path / "c.yaml"
    quoted = f"'{text}'" if isinstance(expected, str) else text  # YAML reads 1e3 as a float
    path.write_text(f"{key}: {quoted}\n")
    got = [
        getattr(config_from_dict(cls, {key: expected}), key),
        getattr(config_from_yaml(cls, path), key),
        getattr(parse(cls, [f"--{key}", text]), key),
        getattr(parse(cls, [f"--{key.replace('_', '-')}={text}"]), key),
        getattr(cls(**{key: expected}), key),
    ]
    assert all(g == expected and type(g) is type(expected) for g in got), got


@pytest.mark.parametrize(
    ("cls", "data", "message"),
    [
        (LoraArgs, {"lora_r": 0}, "--lora_r must be at least 1, got 0"),
        (LoraArgs, {"lora_dropout": 1.0}, "--lora_dropout must be at least 0 and below 1"),
        (EvalArgs, {"eval_k": 0}, "--eval_k must be at least 1, got 0"),
        (PromptArgs, {"num_premises": 0}, "--num_premises must be at least 1, got 0"),
        (TacticDatasetConfig, {"chunk_chars": 8}, "--chunk_chars must be at least 16, got 8"),
        (EvalConfig, {"split": "dev"}, "key 'split' has the wrong type: got str 'dev'"),
    ],
)
def test_keyword_and_flag_errors_are_the_same_line(cls, data, message):
    ((key, value),) = data.items()
    for build in (lambda: cls(**data), lambda: parse(cls, [f"--{key}", str(value)])):
        with pytest.raises(ConfigError) as e:
            build()
        assert message in str(e.value) and "\n" not in str(e.value)


def test_llm_eval_takes_the_whole_prompt_group_and_aliases(capsys):
    cfg = parse(EvalConfig, ["--model", "m", "--data", "d", "--k", "2", "--first-line-only"])
    assert (cfg.model_name, cfg.data_path, cfg.eval_k, cfg.first_line_only) == ("m", "d", 2, True)
    with pytest.raises(SystemExit):
        parse(EvalConfig, ["--help"], prog="leantrain llm eval")
    out = capsys.readouterr().out
    assert out.index("ModelArgs") < out.index("PromptArgs") and "--eval-k INT, --eval_k INT" in out
