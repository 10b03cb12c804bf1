import dataclasses

import pytest
from leantrain.core.config import config_fields, config_from_dict, config_from_yaml, parse_cli
from leantrain.core.errors import ConfigError
from leantrain.retrieval import RetrievalConfig


def test_reprover_defaults():
    c = RetrievalConfig()
    assert (c.learning_rate, c.batch_size, c.num_negatives, c.num_in_file_negatives, c.loss) == (
        1e-4,
        8,
        3,
        1,
        "mse",
    )
    assert c.warmup_steps > 0


def test_yaml_and_dict_fill_the_same_dataclass(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text("model_name: tiny\nloss: infonce\newc_lambda: 10.0\nrepos: [a@1, b@2]\n")
    c = config_from_yaml(RetrievalConfig, p, trainer={"max_steps": 5})
    assert (
        c.loss == "infonce"
        and c.ewc_lambda == 10.0
        and c.repos == ["a@1", "b@2"]
        and c.trainer == {"max_steps": 5}
    )
    assert (
        config_from_dict(RetrievalConfig, {"loss": "infonce", "ewc_lambda": 10.0}).loss == "infonce"
    )


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"loss": "hinge"}, "key 'loss' has the wrong type: got str 'hinge'"),
        ({"num_negatives": 1, "num_in_file_negatives": 2}, "in-file"),
        ({"split": "novel"}, "key 'split' has the wrong type: got str 'novel'"),
        ({"batch_size": 0}, "key 'batch_size' must be at least 1"),
        ({"ewc_lamda": 1.0}, "did you mean 'ewc_lambda'"),
        ({"trainer": {"max_step": 3}}, "unknown Lightning Trainer argument 'max_step'"),
        ({"report_to": "comet"}, "key 'report_to' has the wrong type: got str 'comet'"),
    ],
)
def test_bad_config_is_a_config_error(bad, match):
    with pytest.raises(ConfigError, match=match):
        config_from_dict(RetrievalConfig, bad)


def test_repos_flag_repeats():
    from leantrain.core.config import parse_cli

    c = parse_cli(RetrievalConfig, ["--repos", "https://x/a@1", "--repos", "b@2"])
    assert c.repos == ["https://x/a@1", "b@2"]
    assert parse_cli(RetrievalConfig, []).repos is None  # core's LifelongData: the curriculum


def test_a_bad_trainer_key_suggests_the_right_one():
    with pytest.raises(ConfigError) as e:
        config_from_dict(RetrievalConfig, {"trainer": {"max_step": 3, "devices": 1}})
    assert "did you mean 'max_steps'" in e.value.one_line()


def test_lightning_flags_fill_the_trainer_section(tmp_path):
    """``--max-steps 20`` is ``trainer: {max_steps: 20}`` (core's ``flag_sections`` hook),
    each value read as YAML reads it, over the ``--config`` file's ``trainer:``."""
    argv = [
        "--model",
        "tiny",
        "--max-steps",
        "20",
        "--accelerator=cpu",
        "--precision",
        "bf16-mixed",
    ]
    cfg = parse_cli(RetrievalConfig, argv)
    assert cfg.model_name == "tiny"
    assert cfg.trainer == {"max_steps": 20, "accelerator": "cpu", "precision": "bf16-mixed"}
    # a fraction is a number, not the time-string form Lightning has
    assert parse_cli(RetrievalConfig, ["--val-check-interval", "0.5"]).trainer == {
        "val_check_interval": 0.5
    }
    path = tmp_path / "r.yaml"
    path.write_text("trainer: {max_steps: 3, max_epochs: 2}\n")
    merged = parse_cli(RetrievalConfig, ["--config", str(path), "--max-steps", "5"]).trainer
    assert merged == {"max_steps": 5, "max_epochs": 2}
    with pytest.raises(ConfigError, match="--max-steps"):
        parse_cli(RetrievalConfig, ["--max-step", "1"])


def test_num_gpus_names_the_devices_setting_in_every_spelling(tmp_path):
    """LeanDojo-v2's ``num_gpus`` is Lightning's ``devices``, in the trainer section
    (PORTING.md): each spelling says so in one line instead of a TypeError."""
    from leantrain.retrieval import RetrievalTrainer

    yaml_file = tmp_path / "r.yaml"
    yaml_file.write_text("num_gpus: 4\n")
    lines = set()
    for build in (
        lambda: RetrievalConfig(num_gpus=4),
        lambda: RetrievalTrainer(num_gpus=4),
        lambda: config_from_dict(RetrievalConfig, {"num_gpus": 4}),
        lambda: config_from_yaml(RetrievalConfig, yaml_file),
        lambda: parse_cli(RetrievalConfig, ["--config", str(yaml_file)]),
        lambda: parse_cli(RetrievalConfig, ["--num-gpus", "4"]),
    ):
        with pytest.raises(ConfigError) as e:
            build()
        lines.add(e.value.one_line())
    assert len(lines) == 1, lines  # the same line from a keyword, a dict, YAML, --config, a flag
    assert "'num_gpus' is Lightning's Trainer argument 'devices'" in lines.pop()
    assert "trainer={'devices': 4}" in e.value.one_line()
    with pytest.raises(ConfigError, match="did you mean 'devices'"):
        config_from_dict(RetrievalConfig, {"trainer": {"num_gpus": 4}})


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"max_epochs": 1}, "give trainer={'max_epochs': 1}"),
        ({"lr": 1e-3}, "did you mean 'learning_rate'"),
        ({"ewc_lamda": 1.0}, "did you mean 'ewc_lambda'"),
    ],
)
def test_an_unknown_python_keyword_is_one_line(kwargs, needle):
    with pytest.raises(ConfigError) as e:
        RetrievalConfig(**kwargs)
    assert needle in e.value.one_line()
    with pytest.raises(ConfigError):
        dataclasses.replace(RetrievalConfig(), **kwargs)


def test_each_setting_is_defined_once():
    """The model's and the data module's settings are RetrievalConfig's own fields (one
    default, one help text), and the constructors take exactly those."""
    from leantrain.retrieval.retrieval_config import DataModuleArgs, EncodingArgs, RetrieverArgs

    groups = (RetrieverArgs, DataModuleArgs, EncodingArgs)
    model, data, shared = (set(config_fields(c)) for c in groups)
    assert model & data == shared and shared
    assert model | data <= set(config_fields(RetrievalConfig))
    defaults = {f.name: f.default for f in dataclasses.fields(RetrievalConfig)}
    for cls in (RetrieverArgs, DataModuleArgs):
        for f in dataclasses.fields(cls):
            assert f.default == defaults[f.name] and f.metadata["help"]
