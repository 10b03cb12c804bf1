import pytest
from leantrain.core.config import config_from_dict, config_from_yaml
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
        ({"loss": "hinge"}, "'loss' cannot be 'hinge'"),
        ({"num_negatives": 1, "num_in_file_negatives": 2}, "in-file"),
        ({"split": "novel"}, "'split' cannot be 'novel'"),
        ({"batch_size": 0}, "--batch-size must be at least 1"),
        ({"ewc_lamda": 1.0}, "did you mean 'ewc_lambda'"),
        ({"trainer": {"max_step": 3}}, "unknown Lightning Trainer argument 'max_step'"),
        ({"report_to": "comet"}, "unknown report_to"),
    ],
)
def test_bad_config_is_a_config_error(bad, match):
    with pytest.raises(ConfigError, match=match):
        config_from_dict(RetrievalConfig, bad)


def test_repos_flag_repeats():
    from leantrain.core.config import parse_cli

    c = parse_cli(RetrievalConfig, ["--repos", "https://x/a@1", "--repos", "b@2"])
    assert c.repos == ["https://x/a@1", "b@2"]
    assert parse_cli(RetrievalConfig, []).repos == []


def test_a_bad_trainer_key_suggests_the_right_one():
    with pytest.raises(ConfigError) as e:
        config_from_dict(RetrievalConfig, {"trainer": {"max_step": 3, "devices": 1}})
    assert "did you mean 'max_steps'" in e.value.one_line()


def test_lightning_flags_fill_the_trainer_section(tmp_path):
    from leantrain.retrieval.cli import _trainer_flags

    rest, trainer = _trainer_flags(
        ["--model", "tiny", "--max-steps", "20", "--devices=0,1", "--precision", "bf16-mixed"]
    )
    assert rest == ["--model", "tiny"]
    assert trainer == {"max_steps": 20, "devices": "0,1", "precision": "bf16-mixed"}
    with pytest.raises(ConfigError, match="--max-steps"):
        _trainer_flags(["--max-step", "1"])
