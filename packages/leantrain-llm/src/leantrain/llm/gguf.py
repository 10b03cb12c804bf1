"""Real small models from GGUF files (llama.cpp's format), offline.

``--model path/to/model.gguf`` (or a directory holding exactly one ``.gguf`` file and no
``config.json``) loads the file as an ordinary transformers model: the weights are dequantised
into plain tensors, so the model trains, saves and reloads like any other.
``leantrain llm convert FILE OUT_DIR`` (:func:`convert_gguf`) writes it once as a plain model
directory (safetensors, tokenizer, chat template), which loads much faster afterwards.

Reading GGUF files needs the optional package ``gguf`` (``leantrain-llm[gguf]``).
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

from leantrain.core.errors import CheckpointError, ConfigError, MissingDependencyError

GGUF_SUFFIX = ".gguf"
CONVERTED_KIND = "converted-model"
_GGUF_MIN_VERSION = "0.10.0"  # what transformers' GGUF loader asks for


def find_gguf_file(name: str | Path) -> Path | None:
    """The GGUF file ``name`` names, or ``None`` when it names something else.

    ``name`` names a GGUF file when it is an existing ``*.gguf`` file, or a directory with no
    ``config.json`` / ``adapter_config.json`` that holds exactly one ``*.gguf`` file. A
    directory holding several is a :class:`ConfigError` naming them.
    """
    path = Path(str(name)).expanduser()
    if path.is_file():
        return path if path.suffix.lower() == GGUF_SUFFIX else None
    if not path.is_dir() or any(
        (path / f).is_file() for f in ("config.json", "adapter_config.json")
    ):
        return None
    found = sorted(p for p in path.iterdir() if p.suffix.lower() == GGUF_SUFFIX and p.is_file())
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise ConfigError(
            f"{path}: several GGUF files ({names})",
            hint=f"pass the file itself, e.g. {path / found[0].name}",
        )
    return found[0] if found else None


def require_gguf() -> None:
    """Raise :class:`MissingDependencyError` (with the install command) unless the ``gguf``
    package, which transformers reads GGUF files with, is installed and new enough."""
    import importlib.metadata
    import importlib.util

    hint = "install it with: uv add 'leantrain-llm[gguf]'  (or: pip install gguf)"
    if importlib.util.find_spec("gguf") is None:
        raise MissingDependencyError(
            "loading a GGUF model needs the Python package 'gguf', which is not installed",
            hint=hint,
        )
    from packaging.version import Version

    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        found = importlib.metadata.version("gguf")
        if Version(found) < Version(_GGUF_MIN_VERSION):
            raise MissingDependencyError(
                f"loading a GGUF model needs gguf>={_GGUF_MIN_VERSION}, found {found}", hint=hint
            )


def _loading_options() -> dict[str, Any]:
    """``from_pretrained`` options that unpack every weight at load time (transformers with
    ``GgufConfig(dequantize=...)``; older ones always unpack)."""
    import inspect

    try:
        from transformers import GgufConfig
    except ImportError:
        return {}
    if "dequantize" not in inspect.signature(GgufConfig.__init__).parameters:
        return {}
    return {"quantization_config": GgufConfig(dequantize=True)}


def _plain_model(model: Any, path: Path) -> Any:
    """``model`` without the GGUF quantizer transformers may leave on it after unpacking the
    weights (it makes ``save_pretrained`` and the HF Trainer refuse the model)."""
    packed = sorted(
        {type(m).__name__ for m in model.modules() if "gguf" in type(m).__name__.lower()}
    )
    if packed:
        raise CheckpointError(
            f"{path}: transformers kept the weights packed ({', '.join(packed)}); they cannot be trained",
            hint="report this with your transformers version",
        )
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer = None
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    if hasattr(model, "quantization_method"):
        with contextlib.suppress(AttributeError):
            del model.quantization_method
    model.is_quantized = False
    return model


def load_gguf(path: str | Path, *, dtype: Any = None) -> tuple[Any, Any]:
    """Load the GGUF file ``path`` -> (model, tokenizer), as :func:`load_model_and_tokenizer`
    does for a model directory.

    Quantised weights are unpacked into ``dtype`` (default: float32 on a CPU, bf16 on a GPU that
    supports it), so the model trains and saves like any other. The tokenizer must have a chat
    template (a GGUF file stores it under ``tokenizer.chat_template``); a missing pad token is set
    to the end-of-sequence token. Raises :class:`MissingDependencyError` without the ``gguf``
    package (before anything is read), :class:`CheckpointError` for a file transformers cannot
    load (an unsupported architecture, a truncated file).
    """
    from leantrain.llm.model_loading import check_tokenizer, default_dtype

    path = Path(path).expanduser()
    require_gguf()
    if not path.is_file():
        raise ConfigError(f"GGUF file not found: {path}", hint="pass an existing .gguf file")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dtype = dtype or default_dtype()
    where, name = str(path.parent), path.name
    try:
        tokenizer = AutoTokenizer.from_pretrained(where, gguf_file=name, trust_remote_code=False)
        model = AutoModelForCausalLM.from_pretrained(
            where, gguf_file=name, dtype=dtype, trust_remote_code=False, **_loading_options()
        )
    except (OSError, ValueError, KeyError, RuntimeError, ImportError) as e:
        raise CheckpointError(
            f"{path}: cannot load the GGUF model ({e})".split("\n")[0],
            hint="transformers' GGUF support covers llama, mistral, qwen2/3, phi3, gemma and a few more",
        ) from None
    tokenizer = check_tokenizer(tokenizer, path)
    model = _plain_model(model, path)
    model.config.name_or_path = str(path)  # a LoRA adapter then names the file as its base
    first = next(model.parameters())
    if torch.is_floating_point(first) and first.dtype != dtype:
        model = model.to(dtype)
    return model, tokenizer


def convert_gguf(source: str | Path, out_dir: str | Path, *, dtype: Any = None) -> dict[str, Any]:
    """Write the GGUF model ``source`` (a ``.gguf`` file, or a directory holding one) to the new
    directory ``out_dir`` as a plain transformers model: safetensors weights, config, tokenizer
    and chat template, loadable with ``--model OUT_DIR`` or ``from_pretrained``.

    ``out_dir`` must not exist or be empty: an existing non-empty directory is refused. It is
    built under a temporary name beside it and renamed into place, so a failed or killed
    conversion leaves nothing half-written; files and directories get the modes the umask
    gives. Weights are saved in ``dtype`` (default float32, what quantised weights unpack to).
    Returns ``{"converted_model", "source", "model_type", "parameters", "dtype", "seconds"}``.
    """
    from leantrain.core.atomic import apply_umask_modes, atomic_directory, atomic_write_json
    from leantrain.core.output_dir import check_output_dir, write_marker

    start = time.perf_counter()
    if not Path(source).expanduser().exists():
        raise ConfigError(f"GGUF file not found: {source}", hint="pass an existing .gguf file")
    gguf_file = find_gguf_file(source)
    if gguf_file is None:
        raise ConfigError(
            f"{source}: not a GGUF file or a directory holding one",
            hint="pass a .gguf file, e.g. SmolLM2-135M-Instruct.Q4_1.gguf",
        )
    out = check_output_dir(out_dir, kind=CONVERTED_KIND, flag="OUT_DIR")
    if out.exists() and any(out.iterdir()):
        raise ConfigError(
            f"OUT_DIR {str(out_dir)!r} already exists and is not empty",
            hint="give a new directory (convert never writes over files)",
        )
    require_gguf()
    import torch

    dtype = dtype or torch.float32
    model, tokenizer = load_gguf(gguf_file, dtype=dtype)
    with atomic_directory(out) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        atomic_write_json(
            tmp / "leantrain_model.json",
            {"trainer": "convert_gguf", "base_model": str(gguf_file)},
        )
        write_marker(tmp, CONVERTED_KIND)
        apply_umask_modes(tmp)
    return {
        "converted_model": str(out),
        "source": str(gguf_file),
        "model_type": model.config.model_type,
        "parameters": sum(p.numel() for p in model.parameters()),
        "dtype": str(dtype).removeprefix("torch."),
        "seconds": round(time.perf_counter() - start, 1),
    }
