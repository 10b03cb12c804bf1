"""Configs never run unrequested code; bad numbers and a missing GPU are one line at config time."""

from __future__ import annotations

import sys

import pytest
from leantrain.core.cli import main
from leantrain.core.config import config_from_dict
from leantrain.core.errors import ConfigError
from leantrain.retrieval import RetrievalConfig


@pytest.fixture(autouse=True)
def _no_env_opt_in(monkeypatch):
    monkeypatch.delenv("LEANTRAIN_ALLOW_CODE", raising=False)


def _error(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), lines
    return lines[0]


def test_module_attr_encoder_needs_the_opt_in(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as e:
        RetrievalConfig(model_name="os:system", output_dir=str(tmp_path / "r"))
    assert str(e.value) == (
        "'os:system' is not a registered encoder; loading code named in a config needs "
        "allow_code: true / --allow-code / LEANTRAIN_ALLOW_CODE=1"
    )
    argv = ["retrieval", "train", "--model", "os:system", "--output-dir", str(tmp_path / "r")]
    assert main(argv) == 2
    assert "--allow-code" in _error(capsys)
    for sub in (["evaluate"], ["index", "--output", str(tmp_path / "i")]):
        argv = ["retrieval", *sub, "--model", "os:system", "--data", str(tmp_path)]
        assert main(argv) == 2
        assert "is not a registered encoder" in _error(capsys)
    assert not (tmp_path / "r").exists() and not (tmp_path / "i").exists()


def test_with_the_opt_in_a_module_attr_encoder_loads(tmp_path, monkeypatch):
    (tmp_path / "my_encoders.py").write_text(
        "from leantrain.retrieval.encoder import build_tiny_encoder\n"
        "def small():\n"
        "    return build_tiny_encoder(d_model=16, num_layers=1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        from leantrain.retrieval.encoder import build_encoder

        cfg = RetrievalConfig(model_name="my_encoders:small", allow_code=True)
        model, tokenizer = build_encoder(cfg.model_name, allow_code=cfg.allow_code)
        assert model.config.d_model == 16 and tokenizer is not None
        monkeypatch.setenv("LEANTRAIN_ALLOW_CODE", "1")
        RetrievalConfig(model_name="my_encoders:small")
        assert build_encoder("my_encoders:small")[0].config.d_model == 16
    finally:
        sys.modules.pop("my_encoders", None)


@pytest.mark.parametrize(
    ("trainer", "message"),
    [
        # Lightning's own checks, run when the config is built
        ({"limit_train_batches": 1.5}, "invalid value 1.5 for limit_train_batches"),
        ({"limit_val_batches": -1}, "invalid value -1 for limit_val_batches"),
        ({"devices": "abc"}, "`devices` selected with `CPUAccelerator` should be an int > 0"),
        ({"devices": 0}, "Trainer(devices=0)"),
        ({"strategy": "dpp"}, "invalid strategy name: `strategy='dpp'`"),
        # Lightning's types (its signature, through core's one type check)
        ({"precision": "fp8"}, "trainer: key 'precision' has the wrong type: got str 'fp8'"),
        ({"max_steps": "ten"}, "trainer: key 'max_steps' has the wrong type: got str 'ten'"),
        ({"gradient_clip_val": "big"}, "trainer: key 'gradient_clip_val' has the wrong type"),
        # what Lightning accepts and leantrain refuses: no training, a later division by 0
        ({"max_steps": -5}, "trainer: key 'max_steps' must be -1 (no limit) or at least 1, got -5"),
        ({"max_steps": 0}, "trainer: key 'max_steps' must be -1 (no limit) or at least 1, got 0"),
        ({"max_epochs": 0}, "trainer: key 'max_epochs' must be -1 (no limit) or at least 1, got 0"),
        (
            {"accumulate_grad_batches": 0},
            "trainer: key 'accumulate_grad_batches' must be at least 1",
        ),
        ({"val_check_interval": 0}, "trainer: key 'val_check_interval' must be positive"),
        # what leantrain sets itself
        ({"callbacks": []}, "trainer.callbacks cannot be set"),
        ({"logger": False}, "trainer.logger cannot be set — choose the logger with report_to"),
    ],
)
def test_bad_lightning_values_are_one_line(trainer, message):
    with pytest.raises(ConfigError) as e:
        RetrievalConfig(trainer=trainer)
    assert message in e.value.one_line() and "\n" not in e.value.one_line()


def test_a_bad_precision_lists_lightnings_values():
    with pytest.raises(ConfigError) as e:
        config_from_dict(RetrievalConfig, {"trainer": {"precision": "fp8"}})
    assert "'bf16-mixed'" in e.value.one_line() and "'16-mixed'" in e.value.one_line()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"batch_size": 0}, "config: key 'batch_size' must be at least 1"),
        ({"warmup_steps": -1}, "config: key 'warmup_steps' must be zero or more"),
        ({"num_workers": -1}, "config: key 'num_workers' must be zero or more"),
        ({"learning_rate": -1e-4}, "config: key 'learning_rate' must be zero or more"),
        ({"learning_rate": float("nan")}, "config: key 'learning_rate' must be zero or more"),
        ({"temperature": -0.1}, "config: key 'temperature' must be positive"),
        ({"ewc_gamma": 1.5}, "config: key 'ewc_gamma' must be between 0 and 1"),
        ({"tiny_layers": 0}, "config: key 'tiny_layers' must be at least 1"),
        ({"context_max_len": 0}, "config: key 'context_max_len' must be at least 1"),
    ],
)
def test_bad_numbers_name_the_flag(values, message):
    with pytest.raises(ConfigError) as e:
        config_from_dict(RetrievalConfig, values)
    assert str(e.value).startswith(message)


def test_good_lightning_values_pass():
    RetrievalConfig(trainer={"max_steps": -1, "max_epochs": None, "limit_val_batches": 0.5})
    RetrievalConfig(trainer={"max_steps": 20, "val_check_interval": 10, "accelerator": "cpu"})
    typed = RetrievalConfig(trainer={"max_steps": "20", "gradient_clip_val": "1e-1"}).trainer
    assert typed == {"max_steps": 20, "gradient_clip_val": 0.1}  # typed as Lightning declares


def test_cli_max_steps_k_and_gpu(tmp_path, monkeypatch, capsys):
    out = str(tmp_path / "r")
    assert main(["retrieval", "train", "--max-steps", "-5", "--output-dir", out]) == 2
    assert "trainer: key 'max_steps' must be -1 (no limit) or at least 1" in _error(capsys)
    from lightning.pytorch.accelerators import CUDAAccelerator

    monkeypatch.setattr(CUDAAccelerator, "is_available", staticmethod(lambda: False))
    assert main(["retrieval", "train", "--accelerator", "gpu", "--output-dir", out]) == 2
    assert "Lightning refuses trainer: {accelerator='gpu'}" in _error(capsys)
    assert main(["retrieval", "train", "--devices", "abc", "--output-dir", out]) == 2
    assert "should be an int > 0" in _error(capsys)
    common = ["--model", "tiny", "--data", str(tmp_path)]
    argv = ["retrieval", "retrieve", *common, "--state", "s", "--file", "f", "-k", "-1"]
    assert main(argv) == 2
    assert "--k must be at least 1, got -1" in _error(capsys)
    assert main(["retrieval", "evaluate", *common, "-k", "0"]) == 2
    assert "--k must be at least 1, got 0" in _error(capsys)
    for flag in ("--batch-size", "--batch_size", "--eval-batch-size"):  # one setting, 3 spellings
        assert main(["retrieval", "evaluate", *common, flag, "0"]) == 2
        assert "--eval_batch_size must be at least 1, got 0" in _error(capsys)
    assert not (tmp_path / "r").exists()


def test_report_to_a_service_without_its_client_says_what_to_install(tmp_path, monkeypatch):
    import importlib.util

    from leantrain.core.errors import MissingDependencyError
    from leantrain.core.lifelong import Step
    from leantrain.retrieval import RetrievalConfig, RetrievalTrainer

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "wandb" else real(name, *a)
    )
    trainer = RetrievalTrainer(RetrievalConfig(output_dir=str(tmp_path), report_to="wandb"))
    step = Step(0, "r@1", ["r@1"], tmp_path, None, tmp_path / "w", tmp_path / "logs" / "000.jsonl")
    with pytest.raises(MissingDependencyError, match="pip install wandb"):
        trainer._logger(step)
