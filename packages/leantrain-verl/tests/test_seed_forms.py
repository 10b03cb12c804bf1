"""Every form the seed toolkit takes, converted at the edge (issue 37): a ready VERL parquet as
``data_path``, a ``.py`` file and the seed's advantage signature for ``core_algos``, the seed's
reward-manager contract on a real ``DataProto``, the ``verifier:`` section, DAPO's dynamic
sampling, PRIME's line, the algorithm registry and ``mode: whole``."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest
from leantrain.core.cli import main
from leantrain.core.errors import ConfigError, LeanTrainError
from leantrain.verl import VERLTrainingManager, convert_to_verl
from leantrain.verl.rewards import REWARD_MANAGERS, register_reward_manager

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "grpo_trainer.yaml"
FAKE_REPL = Path(__file__).resolve().parents[2] / "leantrain-lean" / "tests" / "fake_repl.py"


@pytest.fixture
def parquet(tmp_path, export_dir) -> Path:
    return convert_to_verl(export_dir, tmp_path / "pq")["train"]


def _hand_written(path: Path, drop: str | None = None) -> Path:
    import pandas as pd

    frame = pd.DataFrame(
        {
            "data_source": ["mine/lean4"] * 2,
            "prompt": [[{"role": "user", "content": "n : Nat ⊢ n + 0 = n"}]] * 2,
            "ability": ["lean4"] * 2,
            "reward_model": [{"style": "rule", "ground_truth": "simp"}] * 2,
        }
    )
    (frame.drop(columns=[drop]) if drop else frame).to_parquet(path)
    return path


def test_convert_to_verl_parquet_and_a_pandas_one_pass_the_dry_run(small, tmp_path, parquet):
    manager = VERLTrainingManager(small, output_dir=tmp_path / "run")
    for data in (parquet, _hand_written(tmp_path / "mine.parquet"), tmp_path / "pq"):
        assert manager.dry_run(data)["adv_estimator"] == "grpo"
    from leantrain.verl.data import parquet_dataset, parquet_files

    files = parquet_files(parquet)
    assert files == {"train": parquet, "val": parquet.with_name("val.parquet")}
    rows = parquet_dataset(tmp_path / "mine.parquet")
    assert rows[0]["reference"] == "simp" and rows[0]["prompt"][0]["role"] == "user"


@pytest.mark.parametrize(
    ("column", "message"),
    [
        ("data_source", "has no column 'data_source'"),
        ("prompt", "has no column 'prompt'"),
        ("reward_model", "has no column 'reward_model'"),
    ],
)
def test_a_parquet_missing_a_column_is_one_line(column, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = _hand_written(tmp_path / "bad.parquet", drop=column)
    args = ["verl", "train", "--config", str(EXAMPLE), "--data_path", str(data), "--dry-run"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err


def test_a_binary_file_that_is_no_parquet_keeps_its_message(small, tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01binary")
    manager = VERLTrainingManager(small, output_dir=tmp_path / "run")
    with pytest.raises(ConfigError, match="binary"):
        manager.dry_run(tmp_path / "blob.bin")
    (tmp_path / "torn.parquet").write_bytes(b"PAR1 torn")
    with pytest.raises(ConfigError, match="not a readable parquet file"):
        manager.dry_run(tmp_path / "torn.parquet")


SEED_ALGOS = '''
import torch

def compute_custom_advantage(token_level_rewards, eos_mask, index, epsilon=1e-6):
    """The seed's signature: score minus the batch mean, scaled by 1 / (1 + epsilon)."""
    scores = token_level_rewards.sum(-1)
    adv = ((scores - scores.mean()) / (1 + epsilon)).unsqueeze(-1) * eos_mask
    return adv, adv
'''


@pytest.mark.slow  # imports verl (torch, Ray): tens of seconds
def test_core_algos_as_a_file_with_the_seed_signature(small, tmp_path, caplog):
    import numpy as np
    import torch
    from leantrain.verl.core_algos import register
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.trainer.ppo.ray_trainer import compute_advantage

    file = tmp_path / "path/to/seed_algos_file.py"
    file.parent.mkdir(parents=True)
    file.write_text(SEED_ALGOS)
    with caplog.at_level(logging.INFO, logger="leantrain.verl"):
        manager = VERLTrainingManager(
            small, core_algos_module=str(file), core_algos_function="compute_custom_advantage"
        )
        name = register(manager.custom)
        register(manager.custom)
    assert sum("eos_mask" in r.getMessage() for r in caplog.records) == 1  # said once
    assert manager.custom.module == "seed_algos_file" and manager.custom.path == str(file.parent)
    cfg = manager.resolved_config()
    assert cfg.algorithm.adv_estimator == "compute_custom_advantage"
    assert str(file.parent) in cfg.ray_kwargs.ray_init.runtime_env.env_vars.PYTHONPATH
    rewards = torch.zeros(2, 3)
    rewards[:, -1] = torch.tensor([1.0, 0.0])
    data = DataProto.from_dict(
        tensors={"token_level_rewards": rewards, "response_mask": torch.ones(2, 3)},
        non_tensors={"uid": np.array(["a", "a"], dtype=object)},
    )
    out = compute_advantage(data, name, config=OmegaConf.create({"use_pf_ppo": False}))
    assert torch.allclose(out.batch["advantages"][:, 0], torch.tensor([0.5, -0.5]), atol=1e-5)
    with pytest.raises(ConfigError, match="no such Python file"):
        VERLTrainingManager(small, core_algos="path/to/missing.py")


class SeedRewardManager:
    """The seed's contract: built with the tokenizer…, called on VERL's DataProto."""

    def __init__(self, tokenizer, num_examine, config, compute_score=None):
        self.tokenizer, self.num_examine, self.compute_score = tokenizer, num_examine, compute_score

    def __call__(self, data):
        import torch

        out = torch.zeros_like(data.batch["responses"], dtype=torch.float32)
        for i in range(len(data)):
            item = data[i]
            text = self.tokenizer.decode(item.batch["responses"], skip_special_tokens=True)
            truth = item.non_tensor_batch["reward_model"]["ground_truth"]
            source = item.non_tensor_batch["data_source"]
            out[i, -1] = self.compute_score(source, text, truth, {"problem": "s"})["score"]
        return out


@pytest.mark.slow  # imports verl (torch, Ray): tens of seconds
def test_the_seed_reward_manager_scores_a_real_dataproto(tiny_dir):
    import numpy as np
    import torch
    from leantrain.llm.model_loading import load_tokenizer
    from leantrain.verl.verl_reward_manager import LeantrainRewardManager
    from omegaconf import OmegaConf
    from verl import DataProto

    register_reward_manager("test_seed_rm", overwrite=True)(SeedRewardManager)
    tok = load_tokenizer(tiny_dir)
    kwargs = {"leantrain_manager": "test_seed_rm", "rewards": ["no_sorry", "reference_match"]}
    config = OmegaConf.create({"reward": {"custom_reward_function": {"reward_kwargs": kwargs}}})
    manager = LeantrainRewardManager(config, tok)
    assert isinstance(manager.manager, SeedRewardManager) and manager.manager.num_examine == 0
    prompt = tok("state", return_tensors="pt")["input_ids"][0]
    scores = []
    for text in ("simp", "sorry"):
        resp = tok(text, return_tensors="pt")["input_ids"][0]
        data = DataProto.from_dict(
            tensors={
                "prompts": prompt[None],
                "responses": resp[None],
                "attention_mask": torch.ones(1, len(prompt) + len(resp), dtype=torch.long),
            },
            non_tensors={
                "data_source": np.array(["leantrain/lean4_tactic"], dtype=object),
                "reward_model": np.array([{"ground_truth": "simp"}], dtype=object),
                "extra_info": np.array([{}], dtype=object),
            },
        )
        scores.append(manager.loop.run_until_complete(manager.run_single(data))["reward_score"])
    assert scores == [2.0, 0.0]  # no_sorry + exact match; sorry: neither


def test_a_reward_manager_of_neither_contract_fails_at_construction(small, monkeypatch):
    class Wrong:
        def __init__(self, tokenizer, vocabulary):
            pass

        def __call__(self, data):
            return []

    monkeypatch.setitem(REWARD_MANAGERS._items, "test_wrong_rm", Wrong)
    with pytest.raises(ConfigError, match="fits neither contract") as info:
        VERLTrainingManager(small, reward_manager="test_wrong_rm", allow_code=True)
    assert "\n" not in str(info.value)
    monkeypatch.setitem(REWARD_MANAGERS._items, "test_seed_rm2", SeedRewardManager)
    with pytest.raises(ConfigError, match="fits neither contract"):
        VERLTrainingManager(
            small,
            reward_manager="test_seed_rm2",
            reward_manager_options={"bogus": 1},
            allow_code=True,
        )


def test_verifier_section_is_the_lean_reward(small, tmp_path):
    command = f"{sys.executable} {FAKE_REPL}"
    small["verifier"] = {"type": "repl", "command": command, "timeout": 30, "weight": 2.0}
    manager = VERLTrainingManager(small, output_dir=tmp_path / "run")
    lean = manager.section.rewards[-1]
    assert lean == {
        "name": "lean",
        "backend": "repl",
        "repl_command": command,
        "tactic_timeout": 30,
        "weight": 2.0,
    }
    assert manager.section.rewards[:-1] == ["format", "no_sorry", "reference_match"]
    cfg = manager.resolved_config()
    assert cfg.reward.custom_reward_function.reward_kwargs.rewards[-1].name == "lean"
    manager.dry_run()  # the backend is built (the REPL command exists)
    small["verifier"] = {"type": "repl", "command": "no-such-lean-repl"}
    with pytest.raises(LeanTrainError, match="no-such-lean-repl") as info:
        VERLTrainingManager(small, output_dir=tmp_path / "run").dry_run()
    assert "\n" not in str(info.value)
    small["verifier"] = {"type": "repl", "sql_dialect": "x"}
    with pytest.raises(ConfigError, match=r"unknown key 'verifier\.sql_dialect'"):
        VERLTrainingManager(small)


def test_dapo_turns_dynamic_sampling_on_in_the_composed_config(small, tmp_path, export_dir):
    plan = VERLTrainingManager(small, "dapo", output_dir=tmp_path / "run").dry_run(export_dir)
    config = plan["config"]
    assert "filter_groups:" in config
    cfg = VERLTrainingManager(small, "dapo").resolved_config()
    assert cfg.algorithm.filter_groups.enable is True
    assert cfg.algorithm.filter_groups.metric == "reward"  # canonical reward: always present
    assert cfg.trainer.use_v1 is True  # the trainer whose replay buffer filters groups
    with pytest.raises(ConfigError, match="dynamic sampling"):
        VERLTrainingManager(small, "dapo", overrides=["trainer.use_v1=false"])


def test_prime_says_what_runs_instead(small, caplog):
    with caplog.at_level(logging.WARNING, logger="leantrain.verl"):
        manager = VERLTrainingManager(small, "prime")
    lines = [r.getMessage() for r in caplog.records if "prime" in r.getMessage()]
    assert len(lines) == 1 and "implicit process reward model" in lines[0]
    assert manager.resolved_config().algorithm.adv_estimator == "rloo"


def test_register_an_algorithm_type(small, monkeypatch):
    from leantrain.verl import ALGORITHMS, register_algorithm

    monkeypatch.setattr(ALGORITHMS, "_items", dict(ALGORITHMS._items))
    register_algorithm(
        "grpo_lowclip",
        {"algorithm.adv_estimator": "grpo", "actor_rollout_ref.actor.clip_ratio_low": 0.1},
    )
    assert "grpo_lowclip" in ALGORITHMS
    cfg = VERLTrainingManager(small, "grpo_lowclip").resolved_config()
    assert cfg.actor_rollout_ref.actor.clip_ratio_low == 0.1
    with pytest.raises(ValueError, match="already registered"):
        register_algorithm("grpo", {})
    register_algorithm("bad_key", {"algorithm.adv_estimatr": "grpo"})
    with pytest.raises(ConfigError, match=r"did you mean 'algorithm\.adv_estimator'"):
        VERLTrainingManager(small, "bad_key")


def test_mode_whole_converts_whole_proof_rows_and_a_retriever_is_one_line(
    small, tmp_path, export_dir, capsys, monkeypatch
):
    """``mode: whole`` (refused before issue 35's VERL item) converts whole-proof rows; with
    ``--retriever`` it is one line, nothing written."""
    from leantrain.verl.data import WHOLE_DATA_SOURCE, read_parquet

    small["leantrain"]["mode"] = "whole"
    assert VERLTrainingManager(small).section.mode == "whole"
    monkeypatch.chdir(tmp_path)
    args = ["verl", "convert", "--data_path", str(export_dir), "--output_dir", "o", "--mode"]
    assert main([*args, "whole", "--retriever", "runs/retrieval"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--retriever is set" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "o").exists()
    assert main([*args, "whole"]) == 0
    files = json.loads(capsys.readouterr().out)
    assert read_parquet(files["train"])[0]["data_source"] == WHOLE_DATA_SOURCE
