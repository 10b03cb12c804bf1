"""Merge a LoRA adapter into its base model: a plain model directory that any tool loads with
``AutoModelForCausalLM.from_pretrained`` (no peft needed), e.g. for vLLM or a prover."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_directory, atomic_write_json
from leantrain.core.errors import ConfigError
from leantrain.core.output_dir import check_output_dir, write_marker

MERGED_KIND = "merged-model"


def merge_lora(adapter_dir: str | Path, out_dir: str | Path, *, dtype: Any = None) -> Path:
    """Write ``adapter_dir``'s base model with the adapter merged in to ``out_dir``.

    ``adapter_dir`` is a LoRA adapter directory (``adapter_config.json``) or a leantrain run
    directory whose newest model is one. ``out_dir`` must be new, empty or an earlier merge; it
    is written atomically (a killed merge leaves nothing half-written). Weights are saved as
    safetensors with the tokenizer and the adapter's ``prompt.json``; ``dtype`` defaults to the adapter's training dtype
    (bf16 on a GPU that supports it, else fp32). Returns ``out_dir``.
    """
    from leantrain.llm.model_loading import load_model_and_tokenizer, resolve_model_path

    found = resolve_model_path(adapter_dir)
    if found is None or not (found / "adapter_config.json").is_file():
        raise ConfigError(
            f"{adapter_dir}: not a LoRA adapter directory (no adapter_config.json)",
            hint="give the output of a run with use_lora (or the adapter dir itself)",
        )
    from leantrain.tactics.model_prompt import read_prompt, write_prompt

    prompt = read_prompt(found)  # a malformed one fails before the merge
    out = check_output_dir(out_dir, kind=MERGED_KIND, flag="out_dir")
    model, tokenizer = load_model_and_tokenizer(found, dtype=dtype, trainable_adapter=False)
    base = model.peft_config["default"].base_model_name_or_path
    merged = model.merge_and_unload()
    with atomic_directory(out) as tmp:
        merged.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        if prompt is not None:  # the merged model is asked as the adapter was trained
            write_prompt(tmp, prompt)
        atomic_write_json(
            tmp / "leantrain_model.json",
            {"trainer": "merge_lora", "base_model": base, "adapter": str(found)},
        )
        write_marker(tmp, MERGED_KIND)
    return out
