"""VERLTrainingManager: dry run, a lifelong step with VERL's launch stubbed, save/load/evaluate,
the CLI, and how far a real CPU run gets in verl 0.9.1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from leantrain.core.errors import ConfigError, LeanTrainError
from leantrain.verl import VERLTrainingManager

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "grpo_trainer.yaml"


def test_dry_run_resolves_config_and_command(small, tmp_path):
    manager = VERLTrainingManager(small, "grpo", output_dir=tmp_path / "run")
    plan = manager.dry_run()
    assert plan["adv_estimator"] == "grpo"
    assert plan["command"][1:3] == ["-m", "verl.trainer.main_ppo"]
    assert "compute_score" in plan["config"]
    assert "path: pkg://leantrain.verl.rewards" in plan["config"]  # the package's registries


def test_bad_config_fails_at_construction(small):
    small["leantrain"]["rewardz"] = ["format"]
    with pytest.raises(ConfigError, match="did you mean 'rewards'"):
        VERLTrainingManager(small)
    del small["leantrain"]["rewardz"]
    small["data"]["train_batch_size"] = 1
    with pytest.raises(ConfigError, match="ppo_mini_batch_size"):
        VERLTrainingManager(small)


def test_custom_advantage_goes_into_the_config_and_ray_workers(small, algos_module):
    manager = VERLTrainingManager(small, "grpo", core_algos=algos_module)
    cfg = manager.resolved_config()
    assert cfg.algorithm.adv_estimator == "compute_weighted_grpo_advantage"
    env = cfg.ray_kwargs.ray_init.runtime_env
    assert env.worker_process_setup_hook == "leantrain.verl.worker_setup.setup_worker"
    assert (
        f"{algos_module}:compute_weighted_grpo_advantage" == env.env_vars.LEANTRAIN_VERL_CORE_ALGOS
    )


def _fake_verl(tiny_dir, calls):
    """Stands in for `python -m verl.trainer.main_ppo` and VERL's model merger."""

    def launcher(command, env, log_file):
        calls.append(command)
        log_file.parent.mkdir(parents=True, exist_ok=True)
        if "verl.trainer.main_ppo" in command:
            work = Path(command[-2].split("=", 1)[1])
            cfg = (work / "verl_config.yaml").read_text()
            assert "train.parquet" in cfg
            (work / "checkpoints/global_step_1/actor").mkdir(parents=True)
            log_file.write_text("step:1 - critic/score/mean:0.75 - timing_s/gen:2.0\n")
        else:
            target = Path(command[command.index("--target_dir") + 1])
            shutil.copytree(tiny_dir, target)
        return 0

    return launcher


def test_train_step_save_load_evaluate(small, tmp_path, export_dir, tiny_dir):
    from leantrain.tactics.model_prompt import ModelPrompt, read_prompt, write_prompt

    start = shutil.copytree(tiny_dir, tmp_path / "start")  # an SFT model with its prompt
    write_prompt(start, ModelPrompt(system_prompt="Be brief."))
    small["leantrain"] = {"model_name": str(start), "max_eval_samples": 2}
    calls: list = []
    manager = VERLTrainingManager(small, "grpo", launcher=_fake_verl(tiny_dir, calls))
    result = manager.train(data_path=export_dir, output_dir=tmp_path / "run")
    assert [c[2] for c in calls] == ["verl.trainer.main_ppo", "verl.model_merger"]
    assert result["final"]["critic/score/mean"] == 0.75
    assert any("top1_accuracy" in k for k in result["final"]), result["final"]  # evaluated
    model_dir = Path(result["model_dir"])
    assert (model_dir / "config.json").is_file()
    manager.save(tmp_path / "saved")  # the trained model, after the engine removed its work dir
    assert (tmp_path / "saved/config.json").is_file()
    assert json.loads((model_dir / "leantrain_model.json").read_text())["trainer"] == "verl"
    # trained (and saved) with the start model's prompt: its prompt.json says so
    assert read_prompt(model_dir) == read_prompt(tmp_path / "saved") == read_prompt(start)
    other = VERLTrainingManager(small, "grpo")
    other.load(model_dir)
    assert set(other.evaluate(export_dir, "test")) >= {"eval_loss", "top1_accuracy"}
    with pytest.raises(LeanTrainError, match=r"config\.json"):
        other.load(tmp_path)


def test_overwrite_from_the_section_starts_over_and_a_resume_without_it_goes_on(
    small, tmp_path, export_dir, tiny_dir
):
    small["leantrain"] = {"model_name": str(tiny_dir)}
    run = tmp_path / "run"
    first = VERLTrainingManager(small, launcher=_fake_verl(tiny_dir, []))
    first.train(data_path=export_dir, output_dir=run)
    calls: list = []
    again = VERLTrainingManager(small, overwrite=True, launcher=_fake_verl(tiny_dir, calls))
    assert again.section.overwrite is True
    again.train(data_path=export_dir, output_dir=run)
    assert calls  # started over: VERL ran again
    resumed: list = []
    VERLTrainingManager(small, launcher=_fake_verl(tiny_dir, resumed)).train(
        data_path=export_dir, output_dir=run
    )
    assert resumed == []  # the same config without overwrite: the finished run, not a conflict


def test_failed_verl_run_is_one_clear_error(small, tmp_path, export_dir, tiny_dir):
    small["leantrain"] = {"model_name": str(tiny_dir)}
    manager = VERLTrainingManager(small, launcher=lambda c, e, log: 3)
    with pytest.raises(LeanTrainError, match="VERL exited with code 3"):
        manager.train(data_path=export_dir, output_dir=tmp_path / "run")


def test_cli_dry_run(tmp_path, capsys, algos_module, monkeypatch, export_dir):
    from leantrain.core.cli import main

    monkeypatch.delenv("LEANTRAIN_ALLOW_CODE", raising=False)  # --core_algos is the opt-in
    code = main(
        [
            "verl",
            "train",
            "--config",
            str(EXAMPLE),
            "--algorithm",
            "ppo",
            "--data_path",
            str(export_dir),
            "--output_dir",
            str(tmp_path / "run"),
            "--core_algos",
            algos_module,
            "--core_function",
            "compute_plain_rloo_advantage",
            "--dry-run",
            "critic.ppo_micro_batch_size_per_gpu=4",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "adv_estimator: compute_plain_rloo_advantage" in out
    assert "# command:" in out and "verl.trainer.main_ppo" in out
    assert not (tmp_path / "run").exists()  # a dry run writes nothing


def test_cli_bad_key_is_one_line(tmp_path, capsys):
    from leantrain.core.cli import main

    code = main(["verl", "train", "--config", str(EXAMPLE), "--dry-run", "data.train_batch_sze=3"])
    err = capsys.readouterr().err
    assert code == 2
    assert "did you mean 'data.train_batch_size'" in err
    assert "Traceback" not in err


@pytest.mark.slow
def test_cpu_end_to_end_stops_at_verl_rollout_registry():
    """verl 0.9.1 can only roll out through an inference server (vLLM / SGLang / TensorRT-LLM):
    its HF rollout is no longer registered, so main_ppo cannot run on a CPU-only machine. When
    a VERL release registers a CPU-capable rollout again, this test fails: make the tiny run an
    integration test then (README, "CPU end to end")."""
    from verl.workers.rollout.base import _ROLLOUT_REGISTRY, get_rollout_class

    assert {name for name, _ in _ROLLOUT_REGISTRY} == {"vllm", "sglang", "trtllm"}
    with pytest.raises(AssertionError, match="Rollout hf with mode async not found"):
        get_rollout_class("hf", "async")
    import importlib.util

    assert importlib.util.find_spec("vllm") is None  # not pulled by leantrain-verl


def test_leantrain_keys_as_overrides(small):
    manager = VERLTrainingManager(
        small, "grpo", overrides=["leantrain.eval_k=3", "data.train_batch_size=16"]
    )
    assert manager.settings["eval_k"] == 3
    assert manager.resolved_config().data.train_batch_size == 16
    with pytest.raises(ConfigError, match=r"unknown key 'eval_kk'.*did you mean 'eval_k'"):
        VERLTrainingManager(small, "grpo", overrides={"leantrain.eval_kk": 3})


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"eval_k": "abc"}, "key 'eval_k' has the wrong type: got str 'abc'"),
        ({"eval_k": 0}, "section 'leantrain:': key 'eval_k' must be at least 1, got 0"),
        ({"rewards": "format"}, "key 'rewards' has the wrong type"),
        ({"split_strategy": "rand"}, "key 'split_strategy' has the wrong type: got str 'rand'"),
        ({"num_premises": 0}, "key 'num_premises' must be at least 1"),
        ({"max_train_samples": 0}, "key 'max_train_samples' must be at least 1"),
    ],
)
def test_leantrain_section_is_typed_when_the_manager_is_built(small, section, message):
    small["leantrain"].update(section)
    with pytest.raises(ConfigError, match=message) as e:
        VERLTrainingManager(small, "grpo")  # fails before VERL's config is composed
    assert "\n" not in str(e.value) and "leantrain" in str(e.value)


def test_leantrain_section_takes_the_shared_groups_defaults(small, tmp_path, export_dir):
    """One default everywhere: eval_k, eval_max_new_tokens and max_eval_samples are llm's
    EvalArgs', split_strategy and the prompt tactics', allow_code / overwrite core's; given
    values are typed, and only they are the run's fingerprint."""
    from leantrain.llm.common_config import EvalArgs
    from leantrain.tactics.dataset_config import PromptArgs

    manager = VERLTrainingManager(small, "grpo", overrides=["leantrain.max_eval_samples=~"])
    section = manager.section
    assert (section.eval_k, section.eval_max_new_tokens) == (EvalArgs().eval_k, 48)
    assert section.max_eval_samples is None and section.split_strategy == "random"
    assert section.num_premises == PromptArgs().num_premises and section.overwrite is False
    assert manager.settings == {"model_name": "tiny-model-dir", "max_eval_samples": None}
    typed = VERLTrainingManager(small, "grpo", eval_k="3", model="m")  # aliases, typed
    assert (typed.section.eval_k, typed.section.model_name) == (3, "m")
    with pytest.raises(ConfigError, match="'model' and 'model_name' are the same setting"):
        VERLTrainingManager(small, "grpo", model="m", model_name="n")
