"""Load a policy model and tokenizer: ``tiny``, a local dir (full weights, LoRA adapter, or a
leantrain run dir), a GGUF file, or a hub id; choose dtype and device."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from leantrain.core.errors import CheckpointError, ConfigError
from leantrain.core.lifelong import check_model_name, find_model, loading
from leantrain.llm.tiny_model import TINY_MODEL_NAME, build_tiny_model


def bf16_supported() -> bool:
    """True when a CUDA GPU with native bfloat16 (Ampere or newer) is visible."""
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


CPU_BF16_MIN_HIDDEN = 256
"""``cpu_bf16: auto`` autocasts only models at least this wide: below it the casts cost more
than the bf16 matmuls save (one CPU thread, SFT CPU time at hidden 64 / 128 / 256: +10 %,
-5 %, -18 %)."""


def cpu_bf16_supported() -> bool:
    """True when the CPU computes bf16 matmuls natively (``avx512_bf16`` or ``amx_bf16`` in
    ``/proc/cpuinfo``); elsewhere bf16 is emulated and slower than fp32."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return bool(set(line.split(":", 1)[1].split()) & {"avx512_bf16", "amx_bf16"})
    except OSError:
        pass
    return False


def use_cpu_bf16(mode: str, model: Any) -> bool:
    """Whether SFT on a CPU autocasts to bf16: ``mode`` ``on`` / ``off``, or ``auto`` (a CPU
    with native bf16 and a model at least :data:`CPU_BF16_MIN_HIDDEN` wide)."""
    if mode in ("on", "off"):
        return mode == "on"
    return model_width(model) >= CPU_BF16_MIN_HIDDEN and cpu_bf16_supported()


def model_width(model: Any) -> int:
    """The hidden size of ``model`` (a transformers or peft model), 0 where it has none."""
    return int(getattr(getattr(model, "config", None), "hidden_size", 0) or 0)


CHECKPOINTING_MIN_HIDDEN = 256
"""Unset ``activation_checkpointing`` turns it on for models at least this wide (TRL's default:
on SmolLM2-135M at batch 8 x 1,024 tokens it cuts SFT's peak memory 2.5x for +17 % step time
on a CPU), and leaves it off for narrower ones (the tiny test models), where it only costs time."""


def default_dtype() -> Any:
    """bfloat16 on a GPU that supports it, float32 otherwise (CPU training stays fp32)."""
    import torch

    return torch.bfloat16 if bf16_supported() else torch.float32


def resolve_model_path(name: str | Path) -> Path | None:
    """The directory holding the model for ``name``: itself, or the newest model of a run dir
    (``runs/sft``; with several trainers, GRPO's before SFT's) or of a trainer dir in one
    (``runs/sft/sft``). ``None`` if ``name`` is not a local directory (a hub id)."""
    markers = ("config.json", "adapter_config.json")
    path = find_model(name, (None, "grpo", "sft"), markers)
    if path is None or any((path / m).is_file() for m in markers):
        return path
    raise CheckpointError(
        f"{path}: no model here (no config.json, adapter_config.json or finished run step)",
        hint="pass a model directory, a leantrain run directory with a finished step, 'tiny' or a hub id",
    )


def check_model(name: str | Path) -> Path | None:
    """The model directory ``name`` stands for (:func:`resolve_model_path`), its files read
    by core's model guard before torch loads; ``None`` for ``tiny``, a GGUF file, a hub id."""
    from leantrain.llm.gguf import find_gguf_file

    if str(name) == TINY_MODEL_NAME or find_gguf_file(name) is not None:
        return None
    return check_model_name(str(resolve_model_path(name) or name), trainers=(), config=())


def model_files_dir(name: str | Path) -> Path | None:
    """The directory whose files (``prompt.json``) go with model ``name``: the model directory
    :func:`resolve_model_path` finds, a directory holding a GGUF file itself, ``None`` for
    ``tiny``, a hub id or a GGUF file."""
    path = Path(name)
    if str(name) == TINY_MODEL_NAME or not path.is_dir():
        return None
    if not (path / "config.json").is_file() and any(path.glob("*.gguf")):
        return path
    return resolve_model_path(path)


def check_tokenizer(tokenizer: Any, path: str | Path) -> Any:
    """``tokenizer`` with a pad token (the end-of-sequence token if it had none); a
    :class:`ConfigError` naming ``path`` if it has no chat template."""
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(
            f"{path}: the tokenizer has no chat template",
            hint="use an instruct/chat model or set tokenizer.chat_template before training",
        )
    return tokenizer


def load_tokenizer(path: str | Path) -> Any:
    """The tokenizer saved beside a model; it must have a chat template and a pad token."""
    from transformers import AutoTokenizer

    local = Path(path).is_dir()  # a hub id's errors are the caller's to word
    with loading(path, "the tokenizer of") if local else contextlib.nullcontext():
        tokenizer = AutoTokenizer.from_pretrained(str(path), trust_remote_code=False)
    return check_tokenizer(tokenizer, path)


def load_model_and_tokenizer(
    name: str | Path, *, dtype: Any | None = None, trainable_adapter: bool = True
) -> tuple[Any, Any]:
    """Load ``name`` (``tiny``, model dir, adapter dir, run dir, GGUF file or hub id) ->
    (model, tokenizer).

    An adapter directory loads its base model and the adapter (trainable unless
    ``trainable_adapter=False``). A ``.gguf`` file, or a directory holding exactly one and no
    ``config.json``, loads as a plain trainable model (:func:`leantrain.llm.gguf.load_gguf`).
    Weights are checked before use, so a corrupted checkpoint is a :class:`CheckpointError`, not
    a cryptic traceback.
    """
    from leantrain.llm.gguf import find_gguf_file, load_gguf

    gguf_file = None if str(name) == TINY_MODEL_NAME else find_gguf_file(name)
    if gguf_file is not None:
        return load_gguf(gguf_file, dtype=dtype)
    import torch
    from transformers import AutoModelForCausalLM

    dtype = dtype or default_dtype()
    if str(name) == TINY_MODEL_NAME:
        model, tokenizer = build_tiny_model()
        return model.to(dtype), tokenizer
    path = check_model(name)
    if path is None:
        target = str(name)
        try:
            tokenizer = load_tokenizer(target)
            model = AutoModelForCausalLM.from_pretrained(
                target, dtype=dtype, trust_remote_code=False
            )
        except OSError as e:
            raise ConfigError(
                f"cannot load model '{name}': {e}".split("\n")[0],
                hint="check the name or pass a local directory",
            ) from None
        return model, tokenizer
    if (path / "adapter_config.json").is_file():
        from peft import PeftModel

        adapter_cfg = json.loads((path / "adapter_config.json").read_text(encoding="utf-8"))
        base_name = adapter_cfg.get("base_model_name_or_path") or TINY_MODEL_NAME
        base, _ = load_model_and_tokenizer(base_name, dtype=dtype)
        tokenizer = load_tokenizer(path)
        try:
            model = PeftModel.from_pretrained(base, str(path), is_trainable=trainable_adapter)
        except Exception as e:
            raise CheckpointError(
                f"{path}: cannot load LoRA adapter ({e})".split("\n")[0]
            ) from None
        return model, tokenizer
    tokenizer = load_tokenizer(path)
    try:
        model = AutoModelForCausalLM.from_pretrained(
            str(path), dtype=dtype, trust_remote_code=False
        )
    except Exception as e:
        raise CheckpointError(f"{path}: cannot load model ({e})".split("\n")[0]) from None
    if (
        torch.is_floating_point(next(model.parameters()))
        and next(model.parameters()).dtype != dtype
    ):
        model = model.to(dtype)
    return model, tokenizer
