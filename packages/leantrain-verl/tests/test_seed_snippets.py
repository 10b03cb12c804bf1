"""The seed toolkit's VERL snippets — PORTING.md's ``<!-- original -->`` blocks of its VERL
section, as the seed wrote them — run unchanged, one test each (issue 37). The one thing a
user changes is where the names come from: ``src.trainer.training_manager`` is made an alias
of ``leantrain.verl`` here. Each snippet is saved as a module of its own in a fresh directory
and imported (a reward a script defines must live in a module VERL's Ray workers can import);
the files it names exist there: the seed's YAML paths (``grpo_trainer.yaml``, with the seed's
``verifier:`` section pointing at leantrain-lean's stand-in REPL), ``path/to/data`` (a VERL
parquet), ``path/to/custom_core_algos.py`` and ``examples.RewardSQL.verl.core_algos`` (the
seed's advantage signature). VERL's own processes are stubbed as in ``test_porting_verl.py``."""

from __future__ import annotations

import importlib
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from leantrain.core.cli import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "grpo_trainer.yaml"
FAKE_REPL = ROOT / "packages/leantrain-lean/tests/fake_repl.py"
BLOCK = re.compile(r"<!-- original -->\n```(\w+)\n(.*?)```", re.S)
SEED_ADVANTAGE = """
def compute_weighted_grpo_advantage(token_level_rewards, eos_mask, index, epsilon=1e-6):
    scores = token_level_rewards.sum(-1)
    advantages = (scores - scores.mean()).unsqueeze(-1) * eos_mask
    return advantages, advantages
"""


def _originals() -> dict[str, tuple[str, str]]:
    text = (ROOT / "PORTING.md").read_text(encoding="utf-8")
    section = re.search(r"\n## VERL\n.*?(?=\n## |\Z)", text, re.S)
    assert section, "PORTING.md has no '## VERL' section"
    blocks = [(m.group(1), m.group(2)) for m in BLOCK.finditer(section.group(0))]
    named = {
        "manager": "manager.train(",
        "reward_function": "@register_reward_function",
        "reward_manager": "@register_reward_manager",
        "core_algos": "core_algos_module=",
        "command": "train_verl.py",
    }
    out = {name: next(b for b in blocks if key in b[1]) for name, key in named.items()}
    assert len(blocks) == len(out), "an original VERL snippet without a test"
    return out


@pytest.fixture
def seed_dir(tmp_path, monkeypatch, export_dir, verl_stub):
    """A fresh directory holding what the seed's snippets name; ``src.trainer.training_manager``
    aliased to ``leantrain.verl``; VERL's processes stubbed."""
    import leantrain.verl
    import leantrain.verl.manager as manager_module
    from leantrain.verl import convert_to_verl
    from leantrain.verl.rewards import REWARD_FUNCTIONS, REWARD_MANAGERS

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("src", "src.trainer", "src.trainer.training_manager"):
        monkeypatch.setitem(sys.modules, name, leantrain.verl)
    monkeypatch.setattr(manager_module, "default_launcher", verl_stub)
    config = EXAMPLE.read_text(encoding="utf-8") + (
        f"\nverifier:\n  type: repl\n  command: {sys.executable} {FAKE_REPL}\n  timeout: 60\n"
    )
    for path in ("examples/RewardSQL/verl/grpo_trainer.yaml", "path/to/config.yaml"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(config, encoding="utf-8")
    train = convert_to_verl(export_dir, tmp_path / "converted")["train"]
    shutil.copy(train, tmp_path / "path/to/data")  # a VERL parquet, named as the seed names it
    (tmp_path / "examples/RewardSQL/verl/core_algos.py").write_text(SEED_ADVANTAGE)
    yield tmp_path
    for registry, name in (
        (REWARD_FUNCTIONS, "my_reward_function"),
        (REWARD_MANAGERS, "my_reward_manager"),
    ):
        registry._items.pop(name, None)
    for name in [m for m in sys.modules if m.startswith(("seed_snippet_", "examples"))]:
        sys.modules.pop(name, None)
    sys.modules.pop("custom_core_algos", None)


def _run(name: str, code: str, directory: Path):
    """Save ``code`` as ``seed_snippet_<name>.py`` and import it: the snippet runs, unchanged."""
    (directory / f"seed_snippet_{name}.py").write_text(code, encoding="utf-8")
    return importlib.import_module(f"seed_snippet_{name}")


@pytest.mark.slow
def test_seed_manager_snippet(seed_dir):
    code = _originals()["manager"][1]
    snippet = _run("manager", code, seed_dir)
    assert snippet.stats["final"]["critic/score/mean"] == 0.5
    assert (seed_dir / "outputs/verl_model/config.json").is_file()
    rewards = snippet.manager.section.rewards
    assert rewards[-1]["name"] == "lean" and rewards[-1]["backend"] == "repl"  # verifier:


def test_seed_reward_function_snippet(seed_dir, monkeypatch):
    monkeypatch.setenv("LEANTRAIN_ALLOW_CODE", "1")  # VERL's workers import the snippet's module
    code = _originals()["reward_function"][1]
    snippet = _run("reward_function", code, seed_dir)
    assert snippet.manager.section.rewards[0] == "my_reward_function"
    plan = snippet.manager.dry_run("path/to/data")
    assert plan["reward_modules"] == ["seed_snippet_reward_function"]


@pytest.mark.slow  # imports verl (torch, Ray): tens of seconds
def test_seed_reward_manager_snippet(seed_dir, monkeypatch, tiny_dir):
    from leantrain.llm.model_loading import load_tokenizer
    from leantrain.verl import VERLTrainingManager
    from leantrain.verl.verl_reward_manager import LeantrainRewardManager

    monkeypatch.setenv("LEANTRAIN_ALLOW_CODE", "1")
    code = _originals()["reward_manager"][1]
    snippet = _run("reward_manager", code, seed_dir)
    manager = VERLTrainingManager(config="path/to/config.yaml", reward_manager="my_reward_manager")
    cfg = manager.resolved_config()
    assert manager.dry_run("path/to/data")["reward_modules"][-1] == "seed_snippet_reward_manager"
    built = LeantrainRewardManager(cfg, load_tokenizer(tiny_dir)).manager
    assert isinstance(built, snippet.MyRewardManager) and built.tokenizer is not None


def test_seed_core_algos_snippet(seed_dir):
    code = _originals()["core_algos"][1]
    functions = code.partition("\n\nmanager = ")[0]
    (seed_dir / "path/to/custom_core_algos.py").write_text(functions, encoding="utf-8")
    header = "from src.trainer.training_manager import VERLTrainingManager\n"  # snippet 1's
    snippet = _run("core_algos", header + code, seed_dir)
    cfg = snippet.manager.resolved_config()
    assert cfg.algorithm.adv_estimator == "compute_custom_advantage"
    assert snippet.manager.custom.path == str((seed_dir / "path/to").resolve())


def test_seed_command_line_snippet(seed_dir, capsys):
    language, code = _originals()["command"]
    assert language == "bash"
    args = shlex.split(code.replace("\\\n", " "))
    assert args[:2] == ["python", "examples/RewardSQL/train_verl.py"]
    assert main(["verl", "train", *args[2:], "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "# adv_estimator: compute_weighted_grpo_advantage" in out
    assert not (seed_dir / "outputs/verl_train").exists()  # a dry run writes nothing
