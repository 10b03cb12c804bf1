"""Training on a CPU returns freed tensor memory to the OS (glibc), with the same losses.

glibc's allocator settings are process-wide and permanent, so every check that applies them runs
in a subprocess of its own.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from types import SimpleNamespace

import pytest

glibc = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
    reason="glibc's allocator (Linux with glibc) only",
)

# a 32 MB block raises glibc's dynamic mmap threshold to its size when freed; then 40 blocks of
# 10 MB come from the heap, and freeing all but the last (on top) leaves ~390 MB resident
_RETENTION = """
import json, os, sys
import torch
from leantrain.llm import memory

applied = memory.return_freed_memory() if sys.argv[1] == "on" else False
page = os.sysconf("SC_PAGE_SIZE")
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page
block = torch.ones(8_000_000)
del block
before = rss()
blocks = [torch.ones(2_500_000) for _ in range(40)]
last = blocks[-1]
del blocks
print(json.dumps({"applied": applied, "retained_mb": (rss() - before) / 1e6}))
"""


def _python(code: str, *args: str, env: dict[str, str] | None = None) -> dict:
    import os

    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    full_env.pop("LEANTRAIN_CPU_MALLOC", None)
    full_env.update(env or {})
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@glibc
def test_freed_tensor_memory_leaves_the_process():
    default = _python(_RETENTION, "off")
    on = _python(_RETENTION, "on")
    assert on["applied"] and not default["applied"]
    assert default["retained_mb"] > 300  # glibc's defaults keep the freed heap blocks
    assert on["retained_mb"] < 50  # only the block still held (10 MB)


@glibc
@pytest.mark.parametrize(
    "env", [{"LEANTRAIN_CPU_MALLOC": "default"}, {"MALLOC_MMAP_THRESHOLD_": "131072"}]
)
def test_the_users_choice_stands(env):
    code = "import json; from leantrain.llm import memory; print(json.dumps(memory.return_freed_memory()))"
    assert _python(code, env=env) is False


def test_it_applies_to_cpu_training_of_models_at_least_256_wide():
    from leantrain.llm import memory

    def model(width):
        return SimpleNamespace(config=SimpleNamespace(hidden_size=width))

    assert memory.applies_to("cpu", model(256))
    assert not memory.applies_to("cpu", model(64))  # the tiny test models
    assert not memory.applies_to("cuda", model(4096))


_SFT = """
import json, sys
from pathlib import Path
import datasets
from leantrain.llm import SFTTrainer, memory

rows = datasets.Dataset.from_list(json.loads(Path(sys.argv[1]).read_text()))
out = Path(sys.argv[2])
SFTTrainer(
    model_name=sys.argv[3], output_dir=out, max_steps=2, per_device_train_batch_size=2,
    learning_rate=1e-3, train_sampling_strategy="sequential", logging_steps=1,
    save_strategy="no", report_to="none", seed=0, evaluate_each_repo=False,
).train(rows)
log = next(out.glob("sft/logs/*.jsonl"))
losses = [json.loads(x)["loss"] for x in log.read_text().splitlines() if '"loss"' in x]
print(json.dumps({"applied": bool(memory._applied), "losses": losses}))
"""


@glibc
@pytest.mark.slow
def test_sft_losses_are_the_same_with_freed_memory_returned(sft_rows, tmp_path):
    """A 256-wide model trains on a CPU with glibc tuned by leantrain (the default) and with
    glibc's defaults (LEANTRAIN_CPU_MALLOC=default): the step losses are identical."""
    from leantrain.llm.tiny_model import save_tiny_model

    model = save_tiny_model(tmp_path / "model", hidden_size=256, num_layers=1, num_heads=4)
    data = tmp_path / "rows.json"
    data.write_text(json.dumps(sft_rows.select([0, 1, 2, 0]).to_list()))
    tuned = _python(_SFT, str(data), str(tmp_path / "a"), str(model))
    plain = _python(
        _SFT, str(data), str(tmp_path / "b"), str(model), env={"LEANTRAIN_CPU_MALLOC": "default"}
    )
    assert tuned["applied"] and not plain["applied"]
    assert len(tuned["losses"]) == 2
    assert tuned["losses"] == plain["losses"]  # bit-identical: allocation is not arithmetic
