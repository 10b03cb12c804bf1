"""Encoders of the retriever: built by name (``tiny``) or loaded from a local HF directory.

A retriever directory holds ``retriever.json`` (encoder and tokenizer classes, max lengths),
``encoder/`` (``save_pretrained``: config + safetensors) and ``tokenizer/``. The tokenizer is
reloaded by the class named in ``retriever.json``, never guessed from the model type, because
transformers 5 would pick a T5 tokenizer for a T5 config and lose ByT5's byte vocabulary.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from leantrain.core.errors import CheckpointError, ConfigError
from leantrain.core.registry import ENCODERS
from leantrain.core.schemas import read_json

RETRIEVER_JSON = "retriever.json"


@ENCODERS.register("tiny")
def build_tiny_encoder(d_model: int = 64, num_layers: int = 2) -> tuple[Any, Any]:
    """A freshly initialised ByT5-style ``T5EncoderModel`` (no download) and ``ByT5Tokenizer``."""
    from transformers import ByT5Tokenizer, T5Config, T5EncoderModel

    tokenizer = ByT5Tokenizer()
    heads = 4 if d_model % 4 == 0 else 1
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=d_model,
        d_kv=d_model // heads,
        num_heads=heads,
        d_ff=2 * d_model,
        num_layers=num_layers,
        feed_forward_proj="gated-gelu",
        dropout_rate=0.0,
        is_encoder_decoder=False,
    )
    return T5EncoderModel(config), tokenizer


def _transformers_class(name: str) -> Any:
    import transformers

    cls = getattr(transformers, name, None)
    if cls is None or not isinstance(cls, type):
        raise CheckpointError(
            f"'{name}' is not a transformers class", hint="retriever.json is corrupted"
        )
    return cls


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def load_hf_encoder(path: str | Path) -> tuple[Any, Any]:
    """An encoder and tokenizer from a local HF model directory or a Hub id (``google/byt5-small``).

    Never runs remote code. A Hub id is fetched through the usual Hugging Face cache, so it
    works offline once cached; a T5-family checkpoint loads as its encoder half.
    """
    from transformers import AutoConfig, AutoModel, AutoTokenizer, T5EncoderModel

    local = Path(path)
    if not (local / "config.json").is_file() and not (
        not local.exists() and _HUB_ID.match(str(path))
    ):
        raise ConfigError(
            f"'{path}' is neither a registered encoder ({', '.join(ENCODERS.names())}) nor a model directory",
            hint="give 'tiny', a saved retriever directory, a local Hugging Face model directory or a Hub id",
        )
    try:
        config = AutoConfig.from_pretrained(str(path), trust_remote_code=False)
        if config.model_type in ("t5", "mt5", "umt5"):
            model = T5EncoderModel.from_pretrained(
                str(path), trust_remote_code=False
            )  # the encoder half
        else:
            model = AutoModel.from_pretrained(str(path), trust_remote_code=False)
        tokenizer = AutoTokenizer.from_pretrained(str(path), trust_remote_code=False)
    except (OSError, ValueError) as e:
        raise ConfigError(
            f"cannot load the encoder '{path}': {str(e).splitlines()[0][:200]}",
            hint="check the name or path; a Hub model must be downloaded (or cached) first",
        ) from None
    return model, tokenizer


def save_encoder(model: Any, tokenizer: Any, path: Path, info: dict[str, Any]) -> None:
    """Write ``encoder/``, ``tokenizer/`` and ``retriever.json`` into ``path`` (safetensors)."""
    from leantrain.core.atomic import atomic_write_json

    model.save_pretrained(path / "encoder", safe_serialization=True)
    tokenizer.save_pretrained(path / "tokenizer")
    meta = {
        "format": "leantrain-retriever",
        "version": 1,
        "encoder_class": type(model).__name__,
        "tokenizer_class": type(tokenizer).__name__,
        **info,
    }
    atomic_write_json(path / RETRIEVER_JSON, meta)


def load_encoder(path: str | Path) -> tuple[Any, Any, dict[str, Any]]:
    """Reload what :func:`save_encoder` wrote: ``(model, tokenizer, retriever.json dict)``."""
    path = Path(path)
    meta_path = path / RETRIEVER_JSON
    if not meta_path.is_file():
        raise CheckpointError(
            f"{path}: no {RETRIEVER_JSON}", hint="is this a saved retriever directory?"
        )
    meta = read_json(meta_path)
    model_cls = _transformers_class(meta["encoder_class"])
    tok_cls = _transformers_class(meta["tokenizer_class"])
    model = model_cls.from_pretrained(path / "encoder", trust_remote_code=False)
    tokenizer = tok_cls.from_pretrained(path / "tokenizer")
    return model, tokenizer, meta


def is_retriever_dir(path: str | Path) -> bool:
    """Whether ``path`` holds a saved retriever."""
    return (Path(path) / RETRIEVER_JSON).is_file()


def build_encoder(name: str, *, allow_code: bool = False, **tiny_kwargs: Any) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for a registered name, a local HF model directory or — only with
    ``allow_code`` or ``LEANTRAIN_ALLOW_CODE=1`` — a ``module:attr`` builder."""
    if name in ENCODERS:
        builder = ENCODERS.get(name)
        return builder(**tiny_kwargs) if name == "tiny" else builder()
    if ":" in name and not Path(name).exists():
        return ENCODERS.get(name, allow_code=allow_code)()
    return load_hf_encoder(name)
