"""Rewards registered by decorator in the user's code reach VERL's Ray workers: the manager
records their modules in the config's Ray ``runtime_env``, and a fresh process that runs the
``worker_process_setup_hook`` resolves them by name and scores with them, through VERL's own
loaders. A reward a worker cannot import fails at composition time, in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest
from leantrain.core.errors import ConfigError
from leantrain.verl import VERLTrainingManager
from leantrain.verl.rewards import REWARD_FUNCTIONS, REWARD_MANAGERS
from leantrain.verl.worker_setup import HOOK, REWARD_MODULES_ENV

USER_MODULE = textwrap.dedent(
    '''
    """A user's rewards, registered by the manager's decorators."""
    from leantrain.verl import register_reward_function, register_reward_manager


    @register_reward_function("lt_user_short")
    def short(input_text, response_text, **kwargs):
        return 1.0 if len(response_text) < 8 else 0.0


    @register_reward_manager("lt_user_rank")
    class Rank:
        def __init__(self, bonus=0.0):
            self.bonus = bonus

        def __call__(self, items):
            return [10.0 * len(item["response_text"]) + self.bonus for item in items]
    '''
)

# what a fresh worker does: Ray's runtime_env (env_vars, then worker_process_setup_hook), then
# VERL loads compute_score and the reward manager from the config, and scores hand-made input
WORKER = textwrap.dedent(
    """
    import importlib, json, sys

    import numpy as np
    import torch
    from omegaconf import OmegaConf

    cfg = OmegaConf.load(sys.argv[1])
    if sys.argv[2] == "hook":
        module, _, name = cfg.ray_kwargs.ray_init.runtime_env.worker_process_setup_hook.rpartition(".")
        getattr(importlib.import_module(module), name)()

    from verl import DataProto
    from verl.trainer.ppo.reward import get_custom_reward_fn, resolve_reward_manager_cls

    assert "lt_user_rewards" not in sys.modules or sys.argv[2] == "hook"
    score = get_custom_reward_fn(cfg)
    extra = {"problem": "n : Nat ⊢ n + 0 = n"}
    scores = [
        score(data_source="leantrain/lean4_tactic", solution_str=text, ground_truth="simp",
              extra_info=extra)
        for text in ("simp", "sorry", "simp [Nat.add_zero]")
    ]

    class CharTokenizer:  # hand-made: one id per character
        def decode(self, ids, skip_special_tokens=True):
            return "".join(chr(int(i)) for i in ids)

    manager = resolve_reward_manager_cls(cfg)(cfg, CharTokenizer(), score)
    prompt, response = torch.tensor([[80, 81]]), torch.tensor([[111, 109, 101, 103, 97, 0]])
    data = DataProto.from_dict(
        tensors={"prompts": prompt, "responses": response,
                 "attention_mask": torch.tensor([[1, 1, 1, 1, 1, 1, 1, 0]])},
        non_tensors={
            "data_source": np.array(["leantrain/lean4_tactic"], dtype=object),
            "reward_model": np.array([{"ground_truth": "simp"}], dtype=object),
            "extra_info": np.array([extra], dtype=object),
        },
    )
    batch = manager.loop.run_until_complete(manager.run_single(data))
    print(json.dumps({"scores": scores, "batch": batch["reward_score"]}))
    """
)


@pytest.fixture
def user_rewards(tmp_path, monkeypatch):
    """The user's reward module beside their script (on sys.path, not in the cwd), imported."""
    src = tmp_path / "user_src"
    src.mkdir()
    (src / "lt_user_rewards.py").write_text(USER_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(src))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LEANTRAIN_ALLOW_CODE", raising=False)
    import lt_user_rewards  # noqa: F401  (registers both, here only)

    yield src
    REWARD_FUNCTIONS._items.pop("lt_user_short", None)
    REWARD_MANAGERS._items.pop("lt_user_rank", None)
    sys.modules.pop("lt_user_rewards", None)


def _run_worker(cfg_file: Path, cwd: Path, env_vars: dict[str, str], mode: str):
    script = cwd / "worker.py"
    script.write_text(WORKER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEANTRAIN_", "PYTHONPATH"))}
    env.update(env_vars)  # what Ray's runtime_env gives every worker process at start
    return subprocess.run(
        [sys.executable, str(script), str(cfg_file), mode],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_fresh_worker_process_knows_the_users_rewards(small, tmp_path, user_rewards):
    from leantrain.verl.verl_config import to_yaml

    manager = VERLTrainingManager(
        small,
        "grpo",
        rewards=["no_sorry", {"name": "lt_user_short", "weight": 2.0}],
        reward_manager="lt_user_rank",
        reward_manager_options={"bonus": 1.0},
        allow_code=True,
        output_dir=tmp_path / "run",
    )
    plan = manager.dry_run()
    assert plan["reward_modules"] == ["lt_user_rewards"]
    cfg = manager.resolved_config()
    env = cfg.ray_kwargs.ray_init.runtime_env
    assert env.worker_process_setup_hook == HOOK
    payload = json.loads(env.env_vars[REWARD_MODULES_ENV])
    assert payload["modules"] == ["lt_user_rewards"]
    assert payload["paths"] == [str(user_rewards.resolve())]
    assert str(user_rewards.resolve()) in env.env_vars.PYTHONPATH.split(os.pathsep)

    cfg_file = tmp_path / "verl_config.yaml"
    cfg_file.write_text(to_yaml(cfg), encoding="utf-8")
    worker_dir = tmp_path / "worker"
    worker_dir.mkdir()
    env_vars = {k: str(v) for k, v in env.env_vars.items()}
    done = _run_worker(cfg_file, worker_dir, env_vars, "hook")
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert [s["lt_user_short"] for s in out["scores"]] == [1.0, 1.0, 0.0]
    assert [s["score"] for s in out["scores"]] == [3.0, 2.0, 1.0]  # no_sorry + 2 × short
    assert out["batch"] == 10.0 * len("omega") + 1.0  # the user's manager, its option

    # the same process without the hook: the reward is unknown there (what the hook fixes)
    bare = {k: v for k, v in env_vars.items() if k != REWARD_MODULES_ENV}
    done = _run_worker(cfg_file, worker_dir, bare, "no-hook")
    assert done.returncode != 0
    assert "unknown VERL reward manager 'lt_user_rank'" in done.stderr or (
        "unknown reward 'lt_user_short'" in done.stderr
    ), done.stderr[-3000:]


def test_builtin_rewards_need_no_worker_imports(small, tmp_path):
    manager = VERLTrainingManager(small, "grpo", output_dir=tmp_path / "run")
    assert manager.dry_run()["reward_modules"] == []
    env = manager.resolved_config().ray_kwargs.ray_init.runtime_env
    assert REWARD_MODULES_ENV not in (env.get("env_vars") or {})
    assert env.get("worker_process_setup_hook") in (None, "")


def test_user_reward_modules_need_the_code_opt_in(small, user_rewards):
    with pytest.raises(ConfigError, match=r"lt_user_rewards.*needs allow_code: true"):
        VERLTrainingManager(small, "grpo", rewards=["lt_user_short"])
    with pytest.raises(ConfigError, match=r"reward manager 'lt_user_rank'.*--allow-code"):
        VERLTrainingManager(small, "grpo", reward_manager="lt_user_rank")


@pytest.mark.parametrize(
    ("module", "why"),
    [("__main__", "is defined in __main__"), ("lt_fileless", "has no file a worker could import")],
)
def test_a_reward_workers_cannot_import_fails_at_composition(small, monkeypatch, module, why):
    monkeypatch.setitem(sys.modules, "lt_fileless", types.ModuleType("lt_fileless"))

    def reward(input_text, response_text, **kwargs):
        return 0.0

    reward.__module__ = module
    monkeypatch.setitem(REWARD_FUNCTIONS._items, "lt_unreachable", reward)
    with pytest.raises(ConfigError) as info:
        VERLTrainingManager(small, "grpo", rewards=["lt_unreachable"], allow_code=True)
    line = str(info.value)
    assert "\n" not in line
    assert line.startswith("reward function 'lt_unreachable'") and why in line
    assert "VERL's Ray workers cannot import it" in line
    assert "'leantrain.verl.reward_functions' entry point" in line


def test_cli_dry_run_fails_for_a_script_reward(small, tmp_path, monkeypatch, capsys, export_dir):
    """The CLI's own process is __main__ too: one line, exit 2."""
    import yaml
    from leantrain.core.cli import main

    def reward(input_text, response_text, **kwargs):
        return 0.0

    reward.__module__ = "__main__"
    monkeypatch.setitem(REWARD_FUNCTIONS._items, "lt_script_reward", reward)
    monkeypatch.chdir(tmp_path)
    small["leantrain"]["rewards"] = ["format", "lt_script_reward"]
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(small), encoding="utf-8")
    args = ["verl", "train", "--config", "c.yaml", "--data_path", str(export_dir), "--dry-run"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "reward function 'lt_script_reward'" in err
