"""Shared fixtures: the shipped sample export, a tiny model dir, a user advantage module, a stub
of VERL's two processes."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "grpo_trainer.yaml"

# a config that validates for 1 "GPU": 4 prompts × 2 responses, mini 2 × 2 / 1 rank, micro 2
SMALL = {
    "leantrain": {"model_name": "tiny-model-dir"},
    "data": {"train_batch_size": 4, "max_prompt_length": 256, "max_response_length": 128},
    "actor_rollout_ref": {
        "actor": {"ppo_mini_batch_size": 2, "ppo_micro_batch_size_per_gpu": 2},
        "rollout": {"name": "vllm", "n": 2, "log_prob_micro_batch_size_per_gpu": 2},
        "ref": {"log_prob_micro_batch_size_per_gpu": 2},
    },
    "critic": {"ppo_micro_batch_size_per_gpu": 2},
    "trainer": {"n_gpus_per_node": 1, "nnodes": 1, "total_training_steps": 1},
}


@pytest.fixture(autouse=True)
def _one_thread():
    import torch

    torch.set_num_threads(1)  # 2 CPU cores are shared by several test runs


@pytest.fixture
def small() -> dict:
    import copy

    return copy.deepcopy(SMALL)


@pytest.fixture
def export_dir() -> Path:
    from leantrain.core.sample import sample_repo_dirs

    return sample_repo_dirs()[0]


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> Path:
    from leantrain.llm.tiny_model import save_tiny_model

    return save_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture
def algos_module(tmp_path, monkeypatch) -> str:
    """A user module with a custom advantage function (and a helper that is not one)."""
    (tmp_path / "user_algos_mod.py").write_text(
        textwrap.dedent(
            '''
            import torch

            def compute_weighted_grpo_advantage(token_level_rewards, response_mask, index=None,
                                                config=None, **kwargs):
                """Score minus the batch mean, times 3, on every response token."""
                scores = token_level_rewards.sum(-1)
                adv = (scores - scores.mean()).unsqueeze(-1) * 3.0 * response_mask
                return adv, adv

            def compute_plain_rloo_advantage(token_level_rewards, response_mask, index=None,
                                             config=None, **kwargs):
                adv = token_level_rewards * 0.0
                return adv, adv

            def helper(x):
                return x
            '''
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return "user_algos_mod"


@pytest.fixture
def verl_stub(tiny_dir: Path):
    """Stands in for `python -m verl.trainer.main_ppo` (writes an actor checkpoint and a
    console line) and VERL's model merger (copies the tiny model)."""

    def launcher(command, env, log_file):
        log_file.parent.mkdir(parents=True, exist_ok=True)
        if "verl.trainer.main_ppo" in command:
            work = Path(command[-2].split("=", 1)[1])
            cfg = (work / "verl_config.yaml").read_text(encoding="utf-8")
            train = re.search(r"train_files: (.+)", cfg).group(1).strip("'\"")
            assert Path(train).is_file(), train  # converted, or the user's own parquet
            (work / "checkpoints/global_step_1/actor").mkdir(parents=True)
            log_file.write_text("step:1 - critic/score/mean:0.5 - timing_s/gen:1.0\n")
        else:  # verl.model_merger merge --backend fsdp --local_dir … --target_dir …
            shutil.copytree(tiny_dir, command[command.index("--target_dir") + 1])
        return 0

    return launcher
