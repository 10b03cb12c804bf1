"""Encoders of the retriever: built by name (``tiny``) or loaded from a local HF directory.

A sentence-transformers model directory (``modules.json``: Transformer → Pooling → Normalize,
e.g. all-MiniLM-L6-v2) is read without the sentence-transformers package: its transformer is
loaded with ``AutoModel`` and :func:`sentence_transformers_pooling` turns ``1_Pooling/config.json``
and the ``Normalize`` module into the retriever's ``pooling`` / ``normalize`` settings.

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


def fuse_activations(model: Any) -> int:
    """Replace ``gelu_new`` (``NewGELUActivation``: five elementwise ops in Python, the T5/ByT5
    ``gated-gelu`` feed-forward) by the same tanh approximation in one fused kernel
    (``GELUTanh``, ``F.gelu(approximate="tanh")``), in place; returns how many were replaced.

    Same function up to float rounding (~1e-7), about 10 % less encoder time at d_model 64 on
    a CPU. The config is untouched, so a saved model reloads anywhere as before."""
    from transformers.activations import GELUTanh, NewGELUActivation

    replaced = 0
    for module in model.modules():
        for name, child in list(module.named_children()):
            if type(child) is NewGELUActivation:
                setattr(module, name, GELUTanh())
                replaced += 1
    return replaced


def _transformers_class(name: str) -> Any:
    import transformers

    cls = getattr(transformers, name, None)
    if cls is None or not isinstance(cls, type):
        raise CheckpointError(
            f"'{name}' is not a transformers class", hint="retriever.json is corrupted"
        )
    return cls


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


# sentence-transformers' pooling flags, in the order its Pooling module concatenates them
POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len", "lasttoken")
_ST_FLAGS = {
    "cls": "pooling_mode_cls_token",
    "max": "pooling_mode_max_tokens",
    "mean": "pooling_mode_mean_tokens",
    "mean_sqrt_len": "pooling_mode_mean_sqrt_len_tokens",
    "lasttoken": "pooling_mode_lasttoken",
}
_ST = "sentence_transformers.models."
_ST_KNOWN = {_ST + "Transformer", _ST + "Pooling", _ST + "Normalize"}


def parse_pooling(pooling: str) -> tuple[str, ...]:
    """``"mean"`` or ``"cls+mean"`` → the modes, checked against :data:`POOLING_MODES`."""
    modes = tuple(m.strip() for m in str(pooling).split("+") if m.strip())
    bad = [m for m in modes if m not in POOLING_MODES]
    if not modes or bad:
        raise ConfigError(
            f"unknown pooling '{pooling}'",
            hint=f"one or more of {', '.join(POOLING_MODES)} joined by '+'",
        )
    return modes


def sentence_transformers_modules(path: str | Path) -> list[dict[str, Any]] | None:
    """The entries of a sentence-transformers ``modules.json`` in ``path``, or ``None``."""
    f = Path(path) / "modules.json"
    if not f.is_file():
        return None
    try:
        modules = read_json(f)
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{f}: unreadable modules.json ({e})") from None
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        raise CheckpointError(f"{f}: modules.json is not a list of modules")
    return sorted(modules, key=lambda m: int(m.get("idx", 0)))


def sentence_transformers_pooling(path: str | Path) -> dict[str, Any] | None:
    """``{"pooling", "normalize", "transformer_path", "max_seq_length"}`` of a
    sentence-transformers directory (``None`` when ``path`` has no ``modules.json``).

    Pooling comes from the Pooling module's ``config.json`` (several modes are concatenated, as
    sentence-transformers does; weighted-mean pooling is refused); ``normalize`` is whether a
    ``Normalize`` module follows. A module this code cannot reproduce (``Dense``, …) is an
    error, not a silently different embedding.
    """
    path = Path(path)
    modules = sentence_transformers_modules(path)
    if modules is None:
        return None
    unknown = [str(m.get("type")) for m in modules if m.get("type") not in _ST_KNOWN]
    if unknown:
        raise ConfigError(
            f"{path}: sentence-transformers module(s) {', '.join(unknown)} are not supported",
            hint="supported: Transformer, Pooling, Normalize (give the transformer's own directory to use plain mean pooling)",
        )
    by_type = {m["type"]: m for m in modules}
    transformer = by_type.get(_ST + "Transformer")
    if transformer is None:
        raise ConfigError(f"{path}: modules.json has no Transformer module")
    modes: tuple[str, ...] = ("mean",)
    pooling_module = by_type.get(_ST + "Pooling")
    if pooling_module is not None:
        cfg_file = path / str(pooling_module.get("path", "")) / "config.json"
        if not cfg_file.is_file():
            raise CheckpointError(f"{cfg_file}: the Pooling module's config is missing")
        cfg = read_json(cfg_file)
        if cfg.get("pooling_mode_weightedmean_tokens"):
            raise ConfigError(f"{cfg_file}: weighted-mean pooling is not supported")
        modes = tuple(m for m in POOLING_MODES if cfg.get(_ST_FLAGS[m]))
        if not modes:
            raise ConfigError(f"{cfg_file}: no pooling mode is enabled")
    st_cfg = path / str(transformer.get("path", "")) / "sentence_bert_config.json"
    if not st_cfg.is_file():
        st_cfg = path / "sentence_bert_config.json"
    max_seq = read_json(st_cfg).get("max_seq_length") if st_cfg.is_file() else None
    return {
        "pooling": "+".join(modes),
        "normalize": _ST + "Normalize" in by_type,
        "transformer_path": str(transformer.get("path", "")),
        "max_seq_length": int(max_seq) if max_seq else None,
    }


def pool(hidden: Any, attention_mask: Any, modes: tuple[str, ...]) -> Any:
    """Pool token states ``[B, T, H]`` into ``[B, H·len(modes)]`` as sentence-transformers does."""
    import torch

    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    count = mask.sum(1).clamp(min=1.0)
    out = []
    for mode in modes:
        if mode == "cls":
            out.append(hidden[:, 0])
        elif mode == "max":
            out.append(hidden.masked_fill(mask == 0, torch.finfo(hidden.dtype).min).max(1).values)
        elif mode == "mean":
            out.append((hidden * mask).sum(1) / count)
        elif mode == "mean_sqrt_len":
            out.append((hidden * mask).sum(1) / count.sqrt())
        else:  # lasttoken: the last non-padding position (left or right padding)
            last = attention_mask.shape[1] - 1 - attention_mask.flip(1).long().argmax(1)
            out.append(hidden[torch.arange(hidden.shape[0], device=hidden.device), last])
    return out[0] if len(out) == 1 else torch.cat(out, dim=-1)


def load_hf_encoder(path: str | Path) -> tuple[Any, Any]:
    """An encoder and tokenizer from a local HF model directory or a Hub id (``google/byt5-small``).

    Never runs remote code. A Hub id is fetched through the usual Hugging Face cache, so it
    works offline once cached; a T5-family checkpoint loads as its encoder half.
    """
    from transformers import AutoConfig, AutoModel, AutoTokenizer, T5EncoderModel

    local = Path(path)
    st = sentence_transformers_pooling(local) if local.is_dir() else None
    if st is not None and st["transformer_path"]:  # e.g. 0_Transformer/
        path = local = local / st["transformer_path"]
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
