"""The ``trainer:`` flags are named without importing Lightning (a refusal of a bad flag must
not wait for torch), and are exactly ``lightning.Trainer``'s arguments."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest
from leantrain.retrieval.trainer_args import _signature_class, _source_parameters


def test_the_names_read_from_the_source_are_the_signature_s():
    names = _source_parameters()
    assert names == tuple(f.name for f in dataclasses.fields(_signature_class()))
    assert {"max_steps", "devices", "precision"} <= set(names)


@pytest.mark.slow  # a fresh interpreter
def test_a_bad_retrieval_train_flag_is_refused_before_torch_loads(tmp_path):
    probe = (
        "import sys\n"
        "from leantrain.core.cli import main\n"
        "code = main(['retrieval', 'train', '--model', 'tiny', '--data', 'x', "
        "'--batch_size', '0', '--output-dir', 'r'])\n"
        "print(code, 'torch' in sys.modules)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert "--batch_size must be at least 1, got 0" in run.stderr
    assert run.stdout.split() == ["2", "False"]
