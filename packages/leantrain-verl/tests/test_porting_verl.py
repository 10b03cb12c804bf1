"""PORTING.md's VERL section works as written: its ``<!-- run -->`` blocks run in order in one
namespace (Python) or through the ``leantrain`` CLI (bash), in a fresh directory holding a copy
of ``examples/grpo_trainer.yaml``; a ``<!-- file: NAME -->`` block is written to ``NAME``
there first; ``<!-- original -->`` blocks are the toolkit's code, shown, not run.

VERL's own processes (``verl.trainer.main_ppo``, ``verl.model_merger``) need GPUs: a stub
launcher stands in for them (it writes the actor checkpoint and merges a tiny model), so all
of leantrain's side runs for real."""

from __future__ import annotations

import re
import shlex
import shutil
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PORTING = ROOT / "PORTING.md"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "grpo_trainer.yaml"
BLOCK = re.compile(r"(?:<!-- (run|original|file: [\w.]+) -->\n)?```(\w+)\n(.*?)```", re.S)


def _section() -> str:
    match = re.search(r"\n## VERL\n.*?(?=\n## |\Z)", PORTING.read_text(encoding="utf-8"), re.S)
    assert match, "PORTING.md has no '## VERL' section"
    return match.group(0)


def _blocks() -> list[tuple[str | None, str, str]]:
    return [(m.group(1), m.group(2), m.group(3)) for m in BLOCK.finditer(_section())]


def test_every_verl_snippet_is_marked_and_each_original_has_a_port():
    blocks = _blocks()
    assert [b for b in blocks if b[0] is None] == []
    originals = [code for mark, _, code in blocks if mark == "original"]
    runs = [code for mark, _, code in blocks if mark == "run"]
    assert len(originals) >= 5 and len(runs) >= len(originals)
    text = "".join(runs + [code for mark, _, code in blocks if mark.startswith("file: ")])
    for name in ("VERLTrainingManager", "register_reward_function", "register_reward_manager"):
        assert name in text
    assert "--core_algos" in text and "core_function=" in text and "leantrain verl train" in text


def _commands(code: str) -> list[list[str]]:
    """The shell commands of a bash block (``\\`` continuations joined)."""
    return [shlex.split(line, comments=True) for line in code.replace("\\\n", " ").splitlines()]


@pytest.mark.slow
def test_verl_porting_snippets_run(tmp_path, monkeypatch, verl_stub):
    import leantrain.verl.manager as manager_module
    from leantrain.core.cli import main
    from leantrain.verl.rewards import REWARD_FUNCTIONS, REWARD_MANAGERS

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # the snippets' module, beside the user
    monkeypatch.delenv("LEANTRAIN_ALLOW_CODE", raising=False)
    monkeypatch.setattr(manager_module, "default_launcher", verl_stub)
    shutil.copy(EXAMPLE, tmp_path / "grpo_trainer.yaml")
    module = types.ModuleType("porting_verl_snippets")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    try:
        for number, (mark, language, code) in enumerate(_blocks()):
            if mark.startswith("file: "):
                (tmp_path / mark.removeprefix("file: ")).write_text(code, encoding="utf-8")
            elif mark == "run" and language == "python":
                exec(compile(code, f"PORTING.md VERL snippet {number}", "exec"), namespace)
            elif mark == "run":
                for args in _commands(code):
                    assert args[0] == "leantrain", args
                    assert main(args[1:]) == 0, args
    finally:
        for registry, name in (
            (REWARD_FUNCTIONS, "my_reward_function"),
            (REWARD_MANAGERS, "my_reward_manager"),
        ):
            registry._items.pop(name, None)
        for name in ("my_algos", "my_rewards", "my_reward_managers"):
            sys.modules.pop(name, None)
    assert (tmp_path / "outputs/verl_model/config.json").is_file()
    assert (tmp_path / "outputs/verl_data/train.parquet").is_file()
    assert not (tmp_path / "outputs/verl_cli").exists()  # the dry run wrote nothing
