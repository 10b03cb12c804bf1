"""One config dataclass, filled from dict / YAML / CLI with the same validation."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from leantrain.core import (
    ConfigError,
    config_from_dict,
    config_from_yaml,
    config_to_dict,
    parse_cli,
)


@dataclass
class TrainConfig:
    model_name: str = field(default="tiny", metadata={"help": "Model to fine-tune."})
    learning_rate: float = field(default=1e-4, metadata={"help": "Peak learning rate."})
    max_steps: int = field(default=10, metadata={"help": "Optimizer steps."})
    use_lora: bool = field(default=False, metadata={"help": "Train LoRA adapters."})
    repos: list[str] = field(default_factory=list, metadata={"help": "Repositories, in order."})
    output_dir: str | None = field(default=None, metadata={"help": "Where to write the run."})


def test_from_dict_and_round_trip():
    cfg = config_from_dict(
        TrainConfig, {"model_name": "m", "learning_rate": 3, "repos": ["a", "b"]}
    )
    assert cfg == TrainConfig(model_name="m", learning_rate=3, repos=["a", "b"])
    assert config_from_dict(TrainConfig, config_to_dict(cfg)) == cfg


def test_unknown_key_suggests_closest():
    with pytest.raises(ConfigError, match="unknown key 'learning_rte'") as e:
        config_from_dict(TrainConfig, {"learning_rte": 1e-3})
    assert "did you mean 'learning_rate'" in str(e.value)
    assert e.value.exit_code == 2


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max_steps", "ten"),
        ("max_steps", 1.5),
        ("use_lora", "yes"),
        ("repos", "a"),
        ("learning_rate", True),
    ],
)
def test_wrong_type_is_rejected(key, value):
    with pytest.raises(ConfigError, match=f"key '{key}' has the wrong type"):
        config_from_dict(TrainConfig, {key: value})


def test_yaml_with_overrides_and_errors(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("model_name: from-yaml\nmax_steps: 5\nrepos: [x, y]\n")
    cfg = config_from_yaml(TrainConfig, path, max_steps=7)
    assert (cfg.model_name, cfg.max_steps, cfg.repos) == ("from-yaml", 7, ["x", "y"])
    path.write_text("max_stepz: 5\n")
    with pytest.raises(ConfigError, match="did you mean 'max_steps'"):
        config_from_yaml(TrainConfig, path)
    path.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        config_from_yaml(TrainConfig, path)
    path.write_text("a: [\n")
    with pytest.raises(ConfigError, match="malformed YAML"):
        config_from_yaml(TrainConfig, path)
    with pytest.raises(ConfigError, match="not found"):
        config_from_yaml(TrainConfig, tmp_path / "missing.yaml")


def test_cli_flags_types_aliases_and_lists():
    cfg = parse_cli(
        TrainConfig,
        [
            "--model",
            "m",
            "--learning-rate",
            "0.5",
            "--max_steps=3",
            "--use-lora",
            "--repos",
            "a",
            "--repos",
            "b",
        ],
        aliases={"model": "model_name"},
    )
    assert cfg == TrainConfig(
        model_name="m", learning_rate=0.5, max_steps=3, use_lora=True, repos=["a", "b"]
    )
    assert parse_cli(TrainConfig, ["--repos", '["x", "y"]']).repos == ["x", "y"]
    assert parse_cli(TrainConfig, ["--use-lora", "false"]).use_lora is False


def test_cli_config_file_then_flags_override(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("model_name: from-yaml\nmax_steps: 5\n")
    cfg = parse_cli(
        TrainConfig, ["--config", str(path), "--max-steps", "9"], defaults={"learning_rate": 0.25}
    )
    assert (cfg.model_name, cfg.max_steps, cfg.learning_rate) == ("from-yaml", 9, 0.25)


def test_cli_errors():
    with pytest.raises(ConfigError, match="unknown option '--max-step'") as e:
        parse_cli(TrainConfig, ["--max-step", "3"])
    assert "--max-steps" in str(e.value)
    with pytest.raises(ConfigError, match="invalid command-line value"):
        parse_cli(TrainConfig, ["--max-steps", "three"])
    with pytest.raises(ConfigError, match="unexpected argument"):
        parse_cli(TrainConfig, ["positional"])


def test_cli_help_uses_field_metadata(capsys):
    with pytest.raises(SystemExit) as e:
        parse_cli(TrainConfig, ["--help"], prog="leantrain train")
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "Peak learning rate." in out and "Repositories, in order." in out


def test_optional_list_field_collects_repeated_flags():
    from dataclasses import dataclass

    from leantrain.core.config import parse_cli

    @dataclass
    class WithOptionalList:
        repos: list[str] | None = None

    cfg = parse_cli(WithOptionalList, ["--repos", "a", "--repos", "b"])
    assert cfg.repos == ["a", "b"]
    assert parse_cli(WithOptionalList, ["--repos", "a"]).repos == ["a"]


def test_config_to_dict_redacts_secrets() -> None:
    import dataclasses

    from leantrain.core.config import config_to_dict

    @dataclasses.dataclass
    class C:
        hub_token: str | None = None
        lr: float = 0.1

    assert config_to_dict(C(hub_token="hf_abc")) == {"hub_token": "<redacted>", "lr": 0.1}
    assert config_to_dict(C()) == {"hub_token": None, "lr": 0.1}
