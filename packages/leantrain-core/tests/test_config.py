"""One config dataclass, filled from dict / YAML / CLI with the same validation."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Annotated

import pytest
from annotated_types import Ge
from leantrain.core import (
    ConfigError,
    config_from_dict,
    config_from_yaml,
    config_to_dict,
    parse_cli,
)
from leantrain.core.config import MAX_INT, StepLimit, setting, validate_fields


@dataclass
class TrainConfig:
    model_name: str = field(default="tiny", metadata={"help": "Model to fine-tune."})
    learning_rate: float = field(default=1e-4, metadata={"help": "Peak learning rate."})
    max_steps: int = field(default=10, metadata={"help": "Optimizer steps."})
    use_lora: bool = field(default=False, metadata={"help": "Train LoRA adapters."})
    repos: list[str] = field(default_factory=list, metadata={"help": "Repositories, in order."})
    output_dir: str | None = field(default=None, metadata={"help": "Where to write the run."})


@dataclass
class AliasedTrainConfig(TrainConfig):
    model_name: str = setting("tiny", "Model to fine-tune.", aliases=("model",))


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


def test_suggest_prefers_swapped_letters():
    from leantrain.core.config import suggest

    # one deletion from 'mode', two letters swapped in 'model': the swap is the likelier typo
    assert suggest("modle", ["mode", "model"]) == "did you mean 'model'?"
    assert suggest("mod", ["mode", "model"]) == "did you mean 'mode'?"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max_steps", "ten"),
        ("max_steps", 1.5),
        ("use_lora", "maybe"),
        ("use_lora", 2),
        ("model_name", {"a": 1}),
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
        AliasedTrainConfig,
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
    )
    assert cfg == AliasedTrainConfig(
        model_name="m", learning_rate=0.5, max_steps=3, use_lora=True, repos=["a", "b"]
    )
    assert parse_cli(TrainConfig, ["--repos", '["x", "y"]']).repos == ["x", "y"]
    assert parse_cli(TrainConfig, ["--use-lora", "false"]).use_lora is False


def test_cli_config_file_then_flags_override(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("model_name: from-yaml\nmax_steps: 5\n")
    cfg = parse_cli(TrainConfig, ["--config", str(path), "--max-steps", "9"])
    assert (cfg.model_name, cfg.max_steps) == ("from-yaml", 9)


def test_cli_errors():
    with pytest.raises(ConfigError, match="unknown option '--max-step'") as e:
        parse_cli(TrainConfig, ["--max-step", "3"])
    assert "--max-steps" in str(e.value)
    with pytest.raises(ConfigError, match="command line: key 'max_steps' has the wrong type"):
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

    from leantrain.core.parser import parse_cli

    @dataclass
    class WithOptionalList:
        repos: list[str] | None = None

    cfg = parse_cli(WithOptionalList, ["--repos", "a", "--repos", "b"])
    assert cfg.repos == ["a", "b"]
    assert parse_cli(WithOptionalList, ["--repos", "a"]).repos == ["a"]


def test_config_to_dict_redacts_secrets() -> None:

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


@pytest.mark.slow
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


@dataclass
class Limits:
    """Two ranged settings checked on Python keywords too."""

    max_steps: StepLimit = setting(-1, "Steps.")
    learning_rate: Annotated[float, Ge(0)] = setting(1e-4, "Rate.")

    def __post_init__(self) -> None:
        validate_fields(self)


def test_ranges_name_the_flag_and_refuse_nan_and_huge_integers():
    assert Limits(max_steps=MAX_INT).max_steps == MAX_INT
    with pytest.raises(ConfigError, match=r"^--max_steps must be -1 \(no limit\) or at least 1"):
        Limits(max_steps=-5)
    with pytest.raises(ConfigError, match="--learning_rate must be zero or more, got nan"):
        Limits(learning_rate=float("nan"))
    with pytest.raises(ConfigError) as e:  # math.isfinite(10**400) raised OverflowError
        Limits(max_steps=10**400)
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


# --- one type system: the same value from a dict, a YAML file and a flag ------------------------

VALID = [
    # (key, YAML / flag text, dict value, expected typed value)
    ("learning_rate", "1e-5", 1e-5, 1e-5),
    ("learning_rate", "1E-5", "1E-5", 1e-5),
    ("learning_rate", ".5", 0.5, 0.5),
    ("learning_rate", "5e3", 5e3, 5000.0),
    ("learning_rate", "-2.5e-3", -2.5e-3, -2.5e-3),
    ("learning_rate", "3", 3, 3.0),
    ("max_steps", "7", 7, 7),
    ("use_lora", "true", True, True),
    ("output_dir", "~", None, None),
    ("output_dir", "null", None, None),
    ("output_dir", "runs/x", "runs/x", "runs/x"),
    ("model_name", "123", "123", "123"),
    ("repos", "[a, b]", ["a", "b"], ["a", "b"]),
]


@pytest.mark.parametrize(("key", "text", "value", "expected"), VALID)
def test_dict_yaml_and_flag_give_the_same_typed_value(tmp_path, key, text, value, expected):
    path = tmp_path / "c.yaml"
    path.write_text(f"{key}: {text}\n")
    from_dict = getattr(config_from_dict(TrainConfig, {key: value}), key)
    from_yaml = getattr(config_from_yaml(TrainConfig, path), key)
    from_config_flag = getattr(parse_cli(TrainConfig, ["--config", str(path)]), key)
    from_flag = getattr(parse_cli(TrainConfig, [f"--{key}", text]), key)
    assert from_dict == from_yaml == from_config_flag == from_flag == expected
    assert type(from_dict) is type(from_yaml) is type(from_flag) is type(expected)


@pytest.mark.parametrize(
    ("key", "text", "value"),
    [("max_steps", "ten", "ten"), ("learning_rate", "fast", "fast"), ("max_steps", "1.5", 1.5)],
)
def test_dict_yaml_and_flag_give_the_same_error(tmp_path, key, text, value):
    path = tmp_path / "c.yaml"
    path.write_text(f"{key}: {text}\n")
    messages = []
    for build in (
        lambda: config_from_dict(TrainConfig, {key: value}, source="S"),
        lambda: config_from_yaml(TrainConfig, path),
        lambda: parse_cli(TrainConfig, [f"--{key}", text]),
    ):
        with pytest.raises(ConfigError) as e:
            build()
        messages.append(str(e.value))
    tails = {m.split(": ", 1)[1] for m in messages}  # the same error after the source
    assert len(tails) == 1, messages
    assert messages[0].startswith("S: key") and messages[1].startswith(str(path))
    assert messages[2].startswith("command line: key")
    assert all("\n" not in m and "give a value of type" in m for m in messages)


def test_yaml_reads_yaml_1_2_floats_and_keeps_ints_and_strings(tmp_path):
    from leantrain.core.config import parse_yaml

    data = parse_yaml("a: 1e-5\nb: 1E-5\nc: .5\nd: 5e3\ne: 1.0e+3\nf: 7\ng: 1_000\nh: e5\ni: 1e\n")
    assert data == {"a": 1e-5, "b": 1e-5, "c": 0.5, "d": 5000.0, "e": 1000.0, "f": 7, "g": 1000,
                    "h": "e5", "i": "1e"}  # fmt: skip
    assert type(data["f"]) is int and type(data["d"]) is float


def test_yaml_duplicate_keys_are_refused_with_both_lines(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("max_steps: 1\nmodel_name: m\nmax_steps: 2\n")
    message = _one_line_error(path)
    assert "'max_steps' is given twice (lines 1 and 3)" in message
    path.write_text("base: &b {max_steps: 1}\nother:\n  <<: *b\n  max_steps: 2\n")  # merge: fine
    from leantrain.core.config import read_yaml_file

    assert read_yaml_file(path)["other"] == {"max_steps": 2}


def test_optional_field_takes_null_and_non_optional_refuses_it(tmp_path):
    assert config_from_dict(TrainConfig, {"output_dir": None}).output_dir is None
    with pytest.raises(ConfigError, match="key 'max_steps' has the wrong type: got NoneType"):
        parse_cli(TrainConfig, ["--max_steps", "null"])


def test_help_lists_own_options_before_engine_options(capsys):
    @dataclass
    class Engine:  # stands for TrainingArguments: a class from another package
        warmup: int = field(default=0, metadata={"help": "Engine warm-up steps."})

    Engine.__module__ = "transformers.training_args"

    @dataclass
    class Mine(TrainConfig, Engine):
        pass

    with pytest.raises(SystemExit):
        parse_cli(Mine, ["--help"], prog="leantrain x")
    out = capsys.readouterr().out
    own, engine = out.index("Peak learning rate."), out.index("Engine warm-up steps.")
    own_heading = out.index(f"{TrainConfig.__module__.split('.')[0]} options:")
    assert own_heading < own < out.index("transformers options of Engine") < engine
    assert "--learning_rate FLOAT" in out and "--use_lora [BOOL]" in out


def test_parse_known_reads_only_the_light_class_fields(tmp_path):
    from leantrain.core.parser import parse

    @dataclass
    class Light:
        max_steps: int = 1

    path = tmp_path / "c.yaml"
    path.write_text("max_steps: 4\nengine_only: x\n")
    argv = ["--config", str(path), "--bf16", "--engine-flag", "1"]
    assert parse(Light, argv, known_only=True).max_steps == 4
    with pytest.raises(ConfigError, match="command line: key 'max_steps' has the wrong type"):
        parse(Light, [*argv, "--max-steps", "many"], known_only=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1e3", "1e3"),  # not the YAML float's str, '1000.0'
        ("010", "010"),  # not YAML 1.1's octal 8
        ("0x10", "0x10"),
        ("1_000", "1_000"),
        ("Prove it. #lean", "Prove it. #lean"),  # not cut at a YAML comment
        ("  spaced  ", "  spaced  "),
        ("a: b", "a: b"),
        ("yes", "yes"),
        ("'quoted'", "quoted"),  # a quoted YAML string is still read as YAML
    ],
)
def test_a_string_flag_keeps_the_text_typed(text, expected):
    assert parse_cli(TrainConfig, ["--model_name", text]).model_name == expected
    assert parse_cli(TrainConfig, [f"--output_dir={text}"]).output_dir == expected
    assert parse_cli(TrainConfig, ["--repos", text]).repos == [text]


def test_an_alias_and_its_field_on_the_command_line_are_refused():
    for argv in (["--model", "a", "--model_name", "b"], ["--model-name", "b", "--model", "a"]):
        with pytest.raises(ConfigError, match="'--model' and '--model-name' are the same setting"):
            parse_cli(AliasedTrainConfig, argv)
    # the same flag repeated (or spelt with - and _) is not two settings: the last one wins
    assert parse_cli(TrainConfig, ["--model-name", "a", "--model_name", "b"]).model_name == "b"


def test_a_wrongly_typed_secret_is_not_echoed_in_the_error():
    @dataclass
    class C:
        hub_token: str | None = None
        api_key: int = 0

    for build in (
        lambda: config_from_dict(C, {"hub_token": ["hf_SECRETxyz"]}),
        lambda: config_from_dict(C, {"api_key": "sk-SECRETxyz"}),
        lambda: parse_cli(C, ["--api-key", "sk-SECRETxyz"]),
    ):
        with pytest.raises(ConfigError, match="wrong type") as e:
            build()
        assert "SECRET" not in str(e.value) and "<redacted>" in str(e.value)


def test_a_bare_flag_of_a_field_that_takes_no_boolean_needs_a_value():
    """``--model-name --max-steps 3`` (the value forgotten) was the model name "true"."""
    for argv, flag in (
        (["--model_name", "--max_steps", "3"], "--model-name"),
        (["--max-steps"], "--max-steps"),
        (["--repos", "a", "--repos"], "--repos"),
    ):
        with pytest.raises(ConfigError, match=f"{flag} needs a value"):
            parse_cli(TrainConfig, argv)
    assert parse_cli(TrainConfig, ["--use-lora", "--max_steps", "3"]).use_lora is True
    assert parse_cli(TrainConfig, ["--model_name", "true"]).model_name == "true"  # given: kept


def test_only_secret_settings_are_redacted():
    """``max_new_tokens`` or ``eos_token`` were redacted (the name holds 'token'), so a resume
    could not see them change: both sides compared '<redacted>'."""
    from leantrain.core.config import _is_secret

    for name in (
        "hub_token",
        "push_to_hub_token",
        "token",
        "wandb_api_key",
        "api_key",
        "client_secret",
        "secret_key",
        "db_password",
        "HUB_TOKEN",
    ):
        assert _is_secret(name), name
    for name in (
        "max_new_tokens",
        "eval_max_new_tokens",
        "average_tokens_across_devices",
        "include_num_input_tokens_seen",
        "eos_token",
        "pad_token",
        "tokenizer_name",
        "max_tokens",
        "lr",
    ):
        assert not _is_secret(name), name

    @dataclass
    class C:
        max_new_tokens: int = 64
        eos_token: str | None = "</s>"
        hub_token: str | None = "hf_abc"

    assert config_to_dict(C()) == {
        "max_new_tokens": 64,
        "eos_token": "</s>",
        "hub_token": "<redacted>",
    }


@pytest.mark.parametrize("text", ["*", "*.lean", "*Important*: prove it", "*m"])
def test_a_flag_starting_with_a_star_is_text_not_a_yaml_alias(text):
    """YAML scans a leading '*' as an alias: a glob or an emphasised prompt was refused as
    'malformed YAML' instead of being the text typed."""
    assert parse_cli(TrainConfig, ["--model_name", text]).model_name == text
    assert parse_cli(TrainConfig, ["--repos", text]).repos == [text]
    assert parse_cli(TrainConfig, ["--output_dir", text]).output_dir == text


def test_an_empty_flag_is_the_empty_string_where_the_field_takes_one():
    """``--system_prompt ""`` (no system message) was None (an empty YAML document), which the
    trainers read as 'the default system prompt'."""

    @dataclass
    class C:
        system_prompt: str | None = "default"
        name: str = "x"
        limit: int | None = 3

    assert parse_cli(C, ["--system_prompt", ""]).system_prompt == ""
    assert parse_cli(C, ["--system-prompt="]).system_prompt == ""
    assert parse_cli(C, ["--name", ""]).name == ""
    assert parse_cli(C, ["--system_prompt", "null"]).system_prompt is None
    assert parse_cli(C, ["--limit", ""]).limit is None  # a number field: still None
