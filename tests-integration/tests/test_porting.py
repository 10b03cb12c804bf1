"""PORTING.md works as written: every snippet marked ``<!-- run -->`` runs, in order, in one
namespace (Python) or through the ``leantrain`` CLI (bash), in a fresh directory; every other
snippet is marked ``<!-- original -->`` (another package's code, shown beside its port)."""

from __future__ import annotations

import re
import shlex
import sys
import types
from pathlib import Path

import pytest

PORTING = Path(__file__).resolve().parents[2] / "PORTING.md"
BLOCK = re.compile(r"(?:<!-- (run|original) -->\n)?```(\w+)\n(.*?)```", re.S)


def _blocks() -> list[tuple[str | None, str, str]]:
    # the VERL section needs verl (its own environment): leantrain-verl's test_porting_verl runs it
    text = re.sub(r"\n## VERL\n.*?(?=\n## |\Z)", "\n", PORTING.read_text(), flags=re.S)
    return [(m.group(1), m.group(2), m.group(3)) for m in BLOCK.finditer(text)]


def test_every_snippet_is_marked_and_originals_have_a_port():
    blocks = _blocks()
    assert [b for b in blocks if b[0] is None] == []
    runs = [code for mark, _, code in blocks if mark == "run"]
    originals = [code for mark, _, code in blocks if mark == "original"]
    assert len(runs) >= 9 and len(originals) >= 7
    for code in originals:  # each original import has its leantrain counterpart in the guide
        for module in re.findall(r"^from (lean_dojo_v2|hello_agents)\S*", code, re.M):
            assert module in PORTING.read_text()


@pytest.mark.slow
def test_porting_snippets_run(tmp_path, monkeypatch):
    import torch
    from leantrain.core.cli import main

    torch.set_num_threads(1)  # 2 CPU cores shared by several test runs
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LEANTRAIN_DATA", raising=False)
    module = types.ModuleType("porting_snippets")  # dataclasses look their module up
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    for number, (mark, language, code) in enumerate(_blocks()):
        if mark != "run":
            continue
        if language == "python":
            exec(compile(code, f"PORTING.md snippet {number}", "exec"), namespace)
        else:
            for line in code.splitlines():
                args = shlex.split(line, comments=True)
                assert args[0] == "leantrain", line
                assert main(args[1:]) == 0, line
    assert (tmp_path / "output" / "sft-merged" / "config.json").is_file()
    assert (tmp_path / "output" / "merged-from-run" / "config.json").is_file()
    assert list((tmp_path / "runs" / "g" / "grpo").glob("000-*/leantrain_model.json"))
    # HFAgent(…).prove() ports: the Prover's results, and the pipeline's prove stage
    assert (tmp_path / "proofs" / "summary.json").is_file()
    assert list((tmp_path / "runs" / "agent" / "prove" / "proofs").glob("000-*/summary.json"))
    assert "replay proof rate" in (tmp_path / "runs" / "agent" / "report.md").read_text()
