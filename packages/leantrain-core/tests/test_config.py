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


BOMB = """\
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
repos: [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def _one_line_error(path, cls=TrainConfig) -> str:
    with pytest.raises(ConfigError) as e:
        config_from_yaml(cls, path)
    message = str(e.value)
    assert "\n" not in message and str(path) in message
    return message


def test_yaml_alias_bomb_fails_fast(tmp_path):
    import time
    import tracemalloc

    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)  # 9**9 ≈ 387 million strings once expanded
    tracemalloc.start()
    start = time.perf_counter()
    try:
        message = _one_line_error(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "alias bomb" in message
    assert time.perf_counter() - start < 5 and peak < 50 * 2**20
    # a few aliases (shared defaults) stay fine
    path.write_text("model_name: &m tiny\noutput_dir: *m\nrepos: [*m, *m]\n")
    assert config_from_yaml(TrainConfig, path).repos == ["tiny", "tiny"]


def test_yaml_recursive_alias_and_deep_nesting(tmp_path):
    path = tmp_path / "rec.yaml"
    path.write_text("repos: &a [*a]\n")
    assert "refers to itself" in _one_line_error(path)
    path.write_text("repos: " + "[" * 5000 + "]" * 5000 + "\n")
    _one_line_error(path)


@pytest.mark.parametrize("text", ["", "\n# only a comment\n", "null\n", "~\n", "{}\n"])
def test_empty_or_null_yaml_is_an_error(tmp_path, text):
    path = tmp_path / "empty.yaml"
    path.write_text(text)
    assert "the config file is empty" in _one_line_error(path)
    with pytest.raises(ConfigError, match="empty"):
        parse_cli(TrainConfig, ["--config", str(path)])


@pytest.mark.parametrize(
    "data",
    [b"\xff\xfe\x00\x01\x02binary", "model_name: tiny\n".encode("utf-16"), b"model_name: \xe9\n"],
)
def test_binary_and_non_utf8_yaml_name_the_file(tmp_path, data):
    path = tmp_path / "bin.yaml"
    path.write_bytes(data)
    assert "not a UTF-8 text file" in _one_line_error(path)


def test_yaml_control_characters_and_huge_files(tmp_path):
    path = tmp_path / "nul.yaml"
    path.write_bytes(b"model_name: a\x00b\n")
    assert "malformed YAML" in _one_line_error(path)
    path.write_bytes(b"#" * (11 * 2**20))
    assert "MiB" in _one_line_error(path)


def test_check_numbers_names_the_flag():
    from leantrain.core.config import check_numbers

    cfg = TrainConfig(max_steps=-5, learning_rate=float("nan"))
    with pytest.raises(ConfigError, match=r"^--max_steps must be -1 \(no limit\) or at least 1"):
        check_numbers(cfg, {"max_steps": "-1|>=1"})
    with pytest.raises(ConfigError, match="--learning_rate must be zero or more, got nan"):
        check_numbers(cfg, {"learning_rate": ">=0"})
    check_numbers(TrainConfig(output_dir=None), {"output_dir": ">=1", "missing": ">0"})


def test_check_numbers_refuses_huge_integers_in_one_line():
    from leantrain.core.config import MAX_INT, check_numbers

    check_numbers(TrainConfig(max_steps=MAX_INT), {"max_steps": "-1|>=1"})
    with pytest.raises(ConfigError) as e:  # math.isfinite(10**400) raised OverflowError
        check_numbers(TrainConfig(max_steps=10**400), {"max_steps": "-1|>=1"})
    assert str(e.value).startswith("--max_steps must be") and "401 digits" in str(e.value)
    assert "\n" not in str(e.value) and len(str(e.value)) < 200


@pytest.mark.parametrize(
    ("text", "key"),
    [("max_steps: [1, 2]\n", "max_steps"), ("model_name: {a: 1}\n", "model_name")],
)
def test_cli_config_file_values_are_type_checked(tmp_path, text, key):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"c.yaml: key '{key}' has the wrong type"):
        parse_cli(TrainConfig, ["--config", str(path)])
    path.write_text("learning_rate: 3\nrepos: [a]\n")  # an int is a float; lists stay lists
    assert parse_cli(TrainConfig, ["--config", str(path)]).learning_rate == 3


def test_choices_in_field_metadata_are_enforced() -> None:
    import dataclasses

    from leantrain.core.config import config_from_dict, parse_cli
    from leantrain.core.errors import ConfigError

    @dataclasses.dataclass
    class C:
        split: str = dataclasses.field(default="random", metadata={"choices": ("random", "novel")})
        steps: list[str] = dataclasses.field(default_factory=list, metadata={"choices": ("a", "b")})

    assert config_from_dict(C, {"split": "novel", "steps": ["a", "b"]}).split == "novel"
    with pytest.raises(ConfigError, match=r"'split' cannot be 'rand'.*random, novel"):
        config_from_dict(C, {"split": "rand"})
    with pytest.raises(ConfigError, match=r"'steps' cannot be 'c'"):
        config_from_dict(C, {"steps": ["a", "c"]})
    with pytest.raises(ConfigError, match=r"'split' cannot be 'x'"):
        parse_cli(C, ["--split", "x"])
