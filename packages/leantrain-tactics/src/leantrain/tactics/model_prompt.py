"""The prompt a saved tactic generator was trained with, kept beside its weights as
``prompt.json`` (as transformers keeps ``generation_config.json``): the system prompt, the
first-line rule, the retriever checkpoint and its content fingerprint, ``num_premises``,
``max_premise_chars`` and the ``mode`` (tactic or whole proof). Every place leantrain saves a generator writes it
(:func:`write_prompt`); the prover, ``leantrain llm eval`` and a trainer starting from a saved
model read it (:func:`read_prompt`, :func:`resolve_prompt`), so a model directory copied on
its own is asked as it was taught. No torch is imported.

A setting given explicitly (a flag, a config key) that differs from the model's prompt is never
taken or dropped silently: :func:`resolve_prompt` either warns in one line and uses the given
one (``on_conflict="warn"``: ``llm eval`` and training on from a model) or refuses in one line
(``on_conflict="error"``: the prover, unless ``--prompt-override``; a lifelong run whose
retriever setting resolves to another checkpoint than its previous step was trained with)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from leantrain.core.errors import CheckpointError, ConfigError
from leantrain.tactics.prompts import DEFAULT_MAX_PREMISE_CHARS, DEFAULT_SYSTEM_PROMPT

PROMPT_NAME = "prompt.json"
"""The file beside a saved generator's weights that holds its :class:`ModelPrompt`."""

FORMAT_VERSION = 1

DEFAULT_NUM_PREMISES = 10

log = logging.getLogger("leantrain.tactics")
_WARNED: set[str] = set()


@dataclass(frozen=True)
class ModelPrompt:
    """How a tactic generator is prompted."""

    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    """The system message (``""``: none)."""
    first_line_only: bool = False
    """Trained on the first line of multi-line tactics only."""
    retriever: str | None = None
    """The retriever checkpoint directory (absolute) whose premises lead each prompt, or
    ``None`` (no premises)."""
    retriever_sha256: str | None = None
    """Its content fingerprint (:func:`leantrain.tactics.premises.retriever_checkpoint`)."""
    num_premises: int = DEFAULT_NUM_PREMISES
    max_premise_chars: int = DEFAULT_MAX_PREMISE_CHARS
    mode: Literal["tactic", "whole"] = "tactic"
    """What the model writes: the next tactic of a state, or the whole proof of a statement
    (``PromptArgs.mode``); a ``prompt.json`` saved before the field existed is ``"tactic"``."""


_TYPES: dict[str, tuple[type, ...]] = {
    "system_prompt": (str,),
    "first_line_only": (bool,),
    "retriever": (str, type(None)),
    "retriever_sha256": (str, type(None)),
    "num_premises": (int,),
    "max_premise_chars": (int,),
    "mode": (str,),
}

PROMPT_FIELDS = tuple(_TYPES)
"""The settings a :class:`ModelPrompt` holds (the config fields of the same names)."""


def write_prompt(directory: str | Path, prompt: ModelPrompt) -> Path:
    """Write ``prompt`` as ``directory/prompt.json`` (atomically); returns the file."""
    from leantrain.core.atomic import atomic_write_json

    record = {"format_version": FORMAT_VERSION, **dataclasses.asdict(prompt)}
    return atomic_write_json(Path(directory) / PROMPT_NAME, record)


def read_prompt(directory: str | Path | None) -> ModelPrompt | None:
    """The :class:`ModelPrompt` of the model directory ``directory``, ``None`` when it has no
    ``prompt.json`` (or is no directory: a hub id, ``tiny``). A malformed file is one
    :class:`CheckpointError` line naming it and the field."""
    import json

    if directory is None:
        return None
    path = Path(directory) / PROMPT_NAME
    if not path.is_file():
        return None
    hint = "restore the file from the model's copy, or delete it to ask with the given settings"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path}: not valid JSON ({e})".split("\n")[0], hint=hint) from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: not a JSON object", hint=hint)
    version = data.pop("format_version", None)
    if version != FORMAT_VERSION:
        raise CheckpointError(
            f"{path}: format_version {version!r}, this leantrain reads {FORMAT_VERSION}",
            hint="use the leantrain that saved the model, or " + hint,
        )
    data.setdefault("mode", "tactic")  # saved before whole-proof models existed
    unknown = sorted(set(data) - set(_TYPES))
    missing = sorted(set(_TYPES) - set(data))
    if unknown or missing:
        which = f"unknown field {unknown[0]!r}" if unknown else f"missing field {missing[0]!r}"
        raise CheckpointError(f"{path}: {which}", hint=hint)
    for name, types in _TYPES.items():
        value = data[name]
        bad = not isinstance(value, types) or (bool not in types and isinstance(value, bool))
        if bad or (name in ("num_premises", "max_premise_chars") and value < 1):
            raise CheckpointError(f"{path}: field {name!r} is {value!r}", hint=hint)
        if name == "mode" and value not in ("tactic", "whole"):
            raise CheckpointError(f"{path}: field {name!r} is {value!r}", hint=hint)
    if (data["retriever"] is None) != (data["retriever_sha256"] is None):
        raise CheckpointError(f"{path}: retriever and retriever_sha256 go together", hint=hint)
    return ModelPrompt(**data)


def given_settings(config: Any) -> dict[str, Any]:
    """The prompt settings ``config`` (a dataclass: a trainer's, ``llm eval``'s, the
    prover's) gives explicitly: those that differ from their field's default. ``retriever``
    ``""`` is given (no premises, on purpose); ``system_prompt`` ``None`` is not."""
    defaults = {
        f.name: f.default
        for f in dataclasses.fields(config)
        if f.default is not dataclasses.MISSING
    }
    out = {}
    for name in PROMPT_FIELDS:
        if not hasattr(config, name):
            continue
        value = getattr(config, name)
        if value is not None and (name not in defaults or value != defaults[name]):
            out[name] = value
    return out


def check_model_retriever(prompt: ModelPrompt, where: Path | str) -> ModelPrompt:
    """``prompt`` (read from ``where``), its retriever checkpoint checked: there, and of the
    recorded content. One line naming the path and ``--retriever`` otherwise."""
    if prompt.retriever is None:
        return prompt
    from leantrain.tactics.premises import RETRIEVER_JSON, retriever_checkpoint

    source = Path(where) / PROMPT_NAME
    was = str(prompt.retriever_sha256)[:12]
    if not (Path(prompt.retriever) / RETRIEVER_JSON).is_file():
        raise ConfigError(
            f"{source}: the model's retriever checkpoint {prompt.retriever} is missing",
            hint="pass --retriever PATH (a copy of that checkpoint: its content is checked "
            f"against sha256 {was})",
        )
    now = retriever_checkpoint(prompt.retriever, flag=f"retriever of {source}")
    if now.sha256 != prompt.retriever_sha256:
        raise ConfigError(
            f"{source}: retriever checkpoint {prompt.retriever} changed since the model was "
            f"trained (sha256 {now.sha256[:12]}, trained with {was})",
            hint="restore that checkpoint, or pass --retriever PATH to ask with another one",
        )
    return prompt


def _show(name: str, value: Any) -> str:
    if name == "retriever_sha256":
        return str(value)[:12]
    if isinstance(value, str) and len(value) > 60:
        return repr(value[:57] + "...")
    return repr(value)


def resolve_prompt(
    model_dir: str | Path | None,
    given: Mapping[str, Any],
    *,
    on_conflict: Literal["warn", "error"] = "warn",
    model_flag: str = "--model",
    override_hint: str = "leave them out to ask as in training",
) -> ModelPrompt:
    """The prompt a model is asked with: ``given`` (explicit settings, see
    :func:`given_settings`) over the ``prompt.json`` of ``model_dir`` (its retriever checked by
    :func:`check_model_retriever` when it is used), over the defaults. A given ``retriever``
    (``""``: none) is resolved to its checkpoint and fingerprint; the same content as the
    model's is no difference (a copy). In ``mode`` ``"whole"`` the default system prompt is
    the whole-proof one (:data:`~leantrain.tactics.whole_proof.WHOLE_PROOF_SYSTEM_PROMPT`).
    A given setting that differs from the model's: one
    warning line and the given one is used (``on_conflict="warn"``), or one
    :class:`ConfigError` line naming each difference (``"error"``)."""
    model = read_prompt(model_dir)
    base = model or ModelPrompt()
    values = {**dataclasses.asdict(base), **{k: v for k, v in given.items() if k in _TYPES}}
    if "retriever" in given:
        values["retriever"] = values["retriever_sha256"] = None
        if str(given["retriever"]).strip():
            from leantrain.tactics.premises import retriever_checkpoint

            now = retriever_checkpoint(given["retriever"])
            values["retriever"], values["retriever_sha256"] = now.path, now.sha256
    if values["mode"] == "whole" and values["system_prompt"] == DEFAULT_SYSTEM_PROMPT:
        from leantrain.tactics.whole_proof import WHOLE_PROOF_SYSTEM_PROMPT

        values["system_prompt"] = WHOLE_PROOF_SYSTEM_PROMPT  # the tactic default: not given
    chosen = ModelPrompt(**values)
    if model is None:
        return chosen
    diffs = []
    if chosen.retriever_sha256 != model.retriever_sha256:
        diffs.append(
            f"retriever {chosen.retriever} (sha256 {_show('retriever_sha256', chosen.retriever_sha256)})"
            f" (trained with {model.retriever}, sha256 "
            f"{_show('retriever_sha256', model.retriever_sha256)})"
        )
    for name in ("mode", "system_prompt", "first_line_only", "num_premises", "max_premise_chars"):
        if name in ("num_premises", "max_premise_chars") and chosen.retriever is None:
            continue  # without premises their settings change nothing
        if getattr(chosen, name) != getattr(model, name):
            diffs.append(
                f"{name} {_show(name, getattr(chosen, name))} (trained with "
                f"{_show(name, getattr(model, name))})"
            )
    if diffs:
        message = (
            f"{model_flag} {model_dir} is asked with other prompt settings than its "
            f"{PROMPT_NAME}: {'; '.join(diffs)}"
        )
        if on_conflict == "error":
            raise ConfigError(message, hint=override_hint)
        if message not in _WARNED:  # once per process, not per dataset built
            _WARNED.add(message)
            log.warning("warning: %s — the given ones are used", message)
    if "retriever" not in given and model_dir is not None:
        check_model_retriever(chosen, model_dir)
    return chosen
