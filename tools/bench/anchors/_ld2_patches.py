"""What LeanDojo-v2 1.0.9 needs to run offline on a CPU, applied in its own process only.

Every patch is listed in BENCHMARKS.md. None changes the measured code path:

* ``GITHUB_ACCESS_TOKEN`` must be set (``lean_dojo_v2.utils.constants`` raises otherwise);
* with a token set, ``lean_dojo_v2.lean_dojo.data_extraction.lean`` calls the GitHub API at
  import (``Github(...).get_user().login``), which fails offline: ``github.Github`` is replaced
  by a stub whose ``get_user().login`` answers without the network (nothing else is called);
* ``sft_bf16_off`` (called by the tiny-LM SFT side): TRL's ``SFTConfig`` defaults ``bf16=True``,
  which transformers refuses on a machine without a GPU; LeanDojo-v2's weights stay bf16 as
  shipped;
* ``sft_use_cpu`` (called by the SmolLM2 SFT side instead): the same refusal lifted the other
  way, with ``use_cpu=True``, so TRL's ``bf16=True`` stays and accelerate autocasts to bf16 on
  the CPU as it would on a GPU.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any


class _OfflineGithub:
    """Stands in for ``github.Github``: LeanDojo-v2 only logs in at import."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def get_user(self, *args: Any, **kwargs: Any) -> Any:
        return SimpleNamespace(login="offline-benchmark")

    def get_repo(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("offline benchmark: no GitHub repositories")


def apply() -> None:
    """Set the token and stub the GitHub client before ``lean_dojo_v2`` is imported."""
    os.environ.setdefault("GITHUB_ACCESS_TOKEN", "offline-benchmark")
    import github

    github.Github = _OfflineGithub  # type: ignore[misc,assignment]


def _sft_config_default(key: str, value: Any) -> None:
    """Without a GPU, LeanDojo-v2's ``SFTTrainer`` builds its TRL ``SFTConfig`` with ``key``
    defaulting to ``value`` (every setting it passes itself stays as shipped)."""
    import torch

    if torch.cuda.is_available():
        return
    import lean_dojo_v2.trainer.sft_trainer as sft

    base = sft.SFTConfig

    def cpu_config(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault(key, value)
        return base(*args, **kwargs)

    sft.SFTConfig = cpu_config  # type: ignore[assignment]


def sft_bf16_off() -> None:
    """TRL's ``SFTConfig`` defaults ``bf16=True`` (mixed precision), which transformers refuses
    on a machine without a GPU: LeanDojo-v2's ``SFTTrainer`` builds its config with
    ``bf16=False`` there. The model's own bf16 weights stay as LeanDojo-v2 loads them."""
    _sft_config_default("bf16", False)


def sft_use_cpu() -> None:
    """Without a GPU, LeanDojo-v2's ``SFTTrainer`` builds its config with ``use_cpu=True``:
    transformers then accepts TRL's ``bf16=True`` default (bf16 autocast on the CPU) instead of
    refusing it. Every setting LeanDojo-v2 passes, and its bf16 weights, stay as shipped."""
    _sft_config_default("use_cpu", True)


class ExportedDatabase:
    """Stands in for LeanDojo-v2's ``DynamicDatabase`` in its SFT ``train()``: the export
    directory already holds the data, so ``export_merged_data`` does nothing."""

    def export_merged_data(self, repos: Any, path: Any) -> None:
        pass
