"""The prompt in the prover: the generator's own ``prompt.json`` (system prompt, retriever
checkpoint, ``num_premises``, ``max_premise_chars``: :mod:`leantrain.tactics.model_prompt`),
and the generator wrapper that puts the retrieved premises into each prompt.

:func:`model_prompt` takes the prompt from the generator's model directory (or the newest
model of a run directory) unless the config gives a setting; a given setting that differs from
the model's is a one-line :class:`~leantrain.core.errors.ConfigError` unless
``prompt_override`` says to ask differently on purpose (then one warning line). A generator
without a ``prompt.json`` (``tiny``, a hub id, a model saved elsewhere) is asked with the
config's settings, else the defaults. The retriever is its checkpoint directory, compared by
content: a copy of the training checkpoint is no difference. :meth:`PremiseSettings.record`
is what ``prover_config.json`` keeps.

Per state, :class:`PremiseAugmentedGenerator` asks the premise source for the premises
accessible from the theorem (its file, before its start) with the state as the prompt shows it
— exactly the query the SFT / GRPO datasets make for the traced state
(:mod:`leantrain.tactics.premises`), so a state reached in search gets the prompt that state
had in training. All states of an expansion batch are retrieved in one call.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from leantrain.core.errors import ConfigError
from leantrain.core.schemas import Theorem
from leantrain.prover.prover_config import ProverConfig


@dataclass(frozen=True)
class PremiseSettings:
    """The premise part of the prompt: the retriever checkpoint (``None``: no premises), how
    many premises are retrieved, and their character budget."""

    retriever: str | None
    num_premises: int
    max_premise_chars: int
    checkpoint: str | None = None
    """The retriever checkpoint directory (absolute; ``retriever`` itself)."""
    sha256: str | None = None
    """Its content fingerprint (:func:`leantrain.tactics.premises.retriever_checkpoint`)."""

    @classmethod
    def of(cls, prompt: Any) -> PremiseSettings:
        """The premise settings of a :class:`~leantrain.tactics.model_prompt.ModelPrompt`."""
        return cls(
            prompt.retriever,
            prompt.num_premises,
            prompt.max_premise_chars,
            prompt.retriever,
            prompt.retriever_sha256,
        )

    def record(self, config: ProverConfig) -> dict[str, Any]:
        """The settings as ``prover_config.json`` records them: with a retriever, the effective
        values (the retriever checkpoint and its fingerprint, ``num_premises``,
        ``max_premise_chars``, also where they came from the generator's ``prompt.json``);
        without one, those the config gives, else null (premise settings then change
        nothing)."""
        if self.retriever is None:
            given = given_prompt(config)
            return {
                "retriever": config.retriever or None,
                "num_premises": given.get("num_premises"),
                "max_premise_chars": given.get("max_premise_chars"),
                "retriever_checkpoint": None,
                "retriever_sha256": None,
            }
        return {
            "retriever": os.path.realpath(self.retriever),
            "num_premises": self.num_premises,
            "max_premise_chars": self.max_premise_chars,
            "retriever_checkpoint": self.checkpoint,
            "retriever_sha256": self.sha256,
        }


def given_prompt(config: ProverConfig) -> dict[str, Any]:
    """The prompt settings ``config`` gives: from the command line, those its flags or
    ``--config`` file set (:func:`leantrain.core.parser.given`; ``null`` is not given); from
    Python, those that differ from their defaults. The others come from the generator's
    ``prompt.json``."""
    from leantrain.core.parser import given
    from leantrain.tactics.model_prompt import PROMPT_FIELDS, given_settings

    named = given(config)
    if not named:
        return given_settings(config)
    values = {k: getattr(config, k) for k in PROMPT_FIELDS if k in named and hasattr(config, k)}
    return {k: v for k, v in values.items() if v is not None}


def model_prompt(config: ProverConfig, *, model_required: bool = True) -> Any:
    """The :class:`~leantrain.tactics.model_prompt.ModelPrompt` the generator is asked with:
    the config's settings where given, else its ``prompt.json``'s, else the defaults. A given
    setting that differs from the model's is a one-line :class:`ConfigError` unless
    ``config.prompt_override`` (then one warning line). Loads no model. Without
    ``model_required`` (a generator object was passed in), a ``--generator`` directory that
    holds no model only means that no ``prompt.json`` is read."""
    from leantrain.core.errors import CheckpointError
    from leantrain.tactics.model_prompt import resolve_prompt

    model_dir = None
    if config.generator:
        from leantrain.llm.model_loading import model_files_dir

        try:
            model_dir = model_files_dir(config.generator)
        except CheckpointError:
            if model_required:
                raise
    return resolve_prompt(
        model_dir,
        given_prompt(config),
        on_conflict="warn" if config.prompt_override else "error",
        model_flag="--generator",
        override_hint="leave these settings out to ask as in training, or pass "
        "--prompt-override to ask differently on purpose",
    )


def premise_settings(config: ProverConfig) -> PremiseSettings:
    """The premise part of :func:`model_prompt` (one-line errors; loads no model)."""
    return PremiseSettings.of(model_prompt(config))


def check_premise_settings(settings: PremiseSettings, config: ProverConfig) -> PremiseSettings:
    """With a retriever: ``--data`` has a corpus (one-line errors naming the flag; cheap: no
    model loads). Returns ``settings``."""
    if settings.retriever is None:
        return settings
    from leantrain.tactics.premises import corpus_dir

    if not config.data:
        raise ConfigError(
            "a retriever needs --data: the export whose corpus.jsonl it ranks",
            hint="--data EXPORT_DIR (leantrain export merge)",
        )
    corpus_dir(config.data)
    return settings


def accepts_premises(generator: Any) -> bool:
    """Whether ``generator.propose`` takes ``premises=`` (a retrieval-augmented generator)."""
    try:
        return "premises" in inspect.signature(generator.propose).parameters
    except (TypeError, ValueError):
        return False


class PremiseAugmentedGenerator:
    """The generator of one theorem with the retrieved premises of each state in its prompt."""

    def __init__(self, generator: Any, source: Any, theorem: Theorem) -> None:
        self.generator, self.source, self.theorem = generator, source, theorem

    def propose(self, states: Sequence[str], k: int) -> list[list[tuple[str, float]]]:
        """The wrapped generator's proposals, asked with each state's premises."""
        from leantrain.tactics import PremiseQuery, format_user_prompt

        queries = [
            PremiseQuery(format_user_prompt(s), self.theorem.file_path, self.theorem.start)
            for s in states
        ]
        premises = self.source.premises(queries)
        result: list[list[tuple[str, float]]] = self.generator.propose(states, k, premises=premises)
        return result
