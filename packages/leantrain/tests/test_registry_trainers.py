"""The pipeline's trainers, sections and report metrics come from the one command registry:
a trainer registered by its ``Command`` alone is runnable by the pipeline."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from leantrain.core.command import Command
from leantrain.core.config import setting
from leantrain.core.errors import ConfigError
from leantrain.core.groups import RunArgs
from leantrain.pipeline import pipeline as pipeline_module
from leantrain.pipeline import pipeline_config as pc
from leantrain.pipeline.report import key_metrics


@dataclass
class EchoConfig(RunArgs):
    """The settings of a trainer registered only through its command."""

    model_name: str = setting("tiny", "Model.")
    width: int = setting(3, "Width.")


class EchoTrainer:
    """A trainer class as a package would register it."""

    def __init__(self, config: EchoConfig) -> None:
        self.config = config


@pytest.fixture
def echo_registered(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    found = dict(pc.commands())
    command = Command(
        "train",
        "train the echo model",
        "unused:run",
        groups=(EchoConfig,),
        trainer=f"{__name__}:EchoTrainer",
        metrics=("acc", "topk_accuracy"),
    )
    found["echo"] = ("echo train", command)
    monkeypatch.setattr(pc, "commands", lambda: found)


def test_the_registry_declares_the_shipped_trainers():
    assert {"sft", "grpo", "retrieval", "progress"} <= set(pc.trainer_names())
    assert pc.trainer_names()[-1] == "prove"
    assert key_metrics("sft", ["test_eval_loss", "eval_loss", "test_top4_accuracy"]) == [
        "test_eval_loss",
        "test_top4_accuracy",
    ]
    assert key_metrics("grpo", ["reward", "test_eval_loss", "test_top1_accuracy"]) == [
        "reward",
        "test_eval_loss",
        "test_top1_accuracy",
    ]


def test_a_trainer_registered_by_its_command_alone_runs_in_the_pipeline(echo_registered):
    config_class = pc.make_pipeline_config()
    cfg = config_class(trainers=["echo"], seed=5, echo={"width": 7}, run_dir="r")
    assert isinstance(cfg.echo, EchoConfig)
    assert (cfg.echo.width, cfg.echo.seed, cfg.echo.output_dir) == (7, 5, "r/echo")
    trainer = pipeline_module.build_trainer("echo", cfg.echo, cfg)
    assert isinstance(trainer, EchoTrainer) and trainer.config is cfg.echo
    assert key_metrics("echo", ["test_acc", "acc", "test_top1_accuracy", "test_top8_accuracy"]) == [
        "test_acc",
        "test_top1_accuracy",
        "test_top8_accuracy",
    ]
    with pytest.raises(ConfigError, match="section 'echo:': unknown key 'widht'"):
        config_class(trainers=["echo"], echo={"widht": 1})


def test_an_unregistered_trainer_is_one_line_naming_the_registered_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="'trainers' cannot be 'echo'") as e:
        pc.PipelineConfig(trainers=["echo"])
    assert "sft" in str(e.value) and "prove" in str(e.value)
