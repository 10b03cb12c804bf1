"""Retrieval-augmented prompts in the prover: which retriever, how many premises, and the
generator wrapper that puts them into each prompt.

A generator trained with retrieved premises (``leantrain sft --retriever RUN``) must be asked
with the same retriever, ``num_premises`` and ``max_premise_chars``; its run manifest records
them with the rest of its config. :func:`premise_settings` takes them from there unless the
prover's config says otherwise, and a difference between what is asked for and what the model
was trained with is a one-line :class:`~leantrain.core.errors.ConfigError` unless
``prompt_override`` says to ask differently on purpose. A generator that is not a leantrain run
(a model directory, a hub id) has no record: the config's settings are used as given.
When the run pinned its retriever checkpoint (:func:`leantrain.tactics.trained_prompt.pin_retriever`),
the retriever is compared by content: a lifelong retrieval run that trained on after the
generator is refused in one line naming both checkpoints, and the pinned checkpoint's own
directory is no mismatch. :meth:`PremiseSettings.record` is what ``prover_config.json`` keeps.

Per state, :class:`PremiseAugmentedGenerator` asks the premise source for the premises
accessible from the theorem (its file, before its start) with the state as the prompt shows it
— exactly the query the SFT / GRPO datasets make for the traced state
(:mod:`leantrain.tactics.premises`), so a state reached in search gets the prompt that state
had in training. All states of an expansion batch are retrieved in one call.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leantrain.core.errors import ConfigError
from leantrain.core.schemas import Theorem
from leantrain.prover.prover_config import ProverConfig

DEFAULT_NUM_PREMISES = 10  # leantrain.tactics.TacticDatasetConfig's default


@dataclass(frozen=True)
class PremiseSettings:
    """The premise part of the prompt: the retriever (``None``: no premises), how many
    premises are retrieved, and their character budget."""

    retriever: str | None
    num_premises: int
    max_premise_chars: int
    checkpoint: str | None = None
    """The retriever checkpoint directory ``retriever`` resolves to (set once checked)."""
    sha256: str | None = None
    """Its content fingerprint (:func:`leantrain.tactics.premises.retriever_checkpoint`)."""

    def record(self, config: ProverConfig) -> dict[str, Any]:
        """The settings as ``prover_config.json`` records them: with a retriever, the effective
        values (the retriever, its checkpoint and fingerprint, ``num_premises``,
        ``max_premise_chars``, also where they came from the generator's run); without one,
        the config's (premise settings then change nothing)."""
        if self.retriever is None:
            return {
                "retriever": config.retriever or None,
                "num_premises": config.num_premises,
                "max_premise_chars": config.max_premise_chars,
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


def _same_path(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return not a and not b
    return os.path.realpath(a) == os.path.realpath(b)


def _locate(recorded: str | None, generator: str) -> str | None:
    """The recorded retriever path, found from here: as recorded when it exists (or is
    absolute), else relative to a directory above the generator (a run records the path as
    given, relative to where it was trained: usually the directory its own path starts from)."""
    if not recorded or os.path.isabs(recorded) or os.path.exists(recorded):
        return recorded
    for parent in Path(generator).resolve().parents:
        if (parent / recorded).exists():
            return str(parent / recorded)
    return recorded


def premise_settings(config: ProverConfig) -> PremiseSettings:
    """The settings the generator is asked with: the config's where given, else the ones its
    training run recorded, else none / the defaults. A one-line :class:`ConfigError` when they
    differ from the recorded ones and ``config.prompt_override`` is off. Reads only the run
    manifest: no model loads."""
    from leantrain.tactics import DEFAULT_MAX_PREMISE_CHARS
    from leantrain.tactics.trained_prompt import recorded_training_config

    trained_cfg = recorded_training_config(config.generator) if config.generator else None
    given = (config.retriever, config.num_premises, config.max_premise_chars)
    if trained_cfg is None:
        return PremiseSettings(
            config.retriever or None,
            config.num_premises or DEFAULT_NUM_PREMISES,
            config.max_premise_chars or DEFAULT_MAX_PREMISE_CHARS,
        )
    trained = PremiseSettings(
        _locate(trained_cfg.get("retriever") or None, config.generator),
        int(trained_cfg.get("num_premises") or DEFAULT_NUM_PREMISES),
        int(trained_cfg.get("max_premise_chars") or DEFAULT_MAX_PREMISE_CHARS),
    )
    chosen = PremiseSettings(
        trained.retriever if given[0] is None else (given[0] or None),
        trained.num_premises if given[1] is None else given[1],
        trained.max_premise_chars if given[2] is None else given[2],
    )
    if config.prompt_override:
        return chosen
    pinned = trained_cfg.get("retriever_sha256")
    diffs = []
    if pinned and chosen.retriever is not None and trained.retriever is not None:
        # the run pinned the checkpoint it trained with: compare content, not paths (a
        # lifelong retrieval run names a newer checkpoint once it trained on)
        from leantrain.tactics.premises import retriever_checkpoint

        flag = "--retriever" if given[0] else "--retriever (from the generator's run)"
        try:
            now = retriever_checkpoint(chosen.retriever, flag=flag)
        except ConfigError:
            if _same_path(chosen.retriever, trained.retriever):
                raise  # the training retriever itself is gone or broken
            now = None  # another path that is no retriever: the mismatch below says so
        if now is None:
            diffs.append(f"retriever {chosen.retriever!r} (trained with {trained.retriever!r})")
        elif now.sha256 != pinned:
            was = trained_cfg.get("retriever_checkpoint")
            raise ConfigError(
                f"--generator {config.generator} was trained with retriever checkpoint {was} "
                f"(sha256 {pinned[:12]}), but retriever {chosen.retriever} is now checkpoint "
                f"{now.path} (sha256 {now.sha256[:12]})",
                hint=f"pass --retriever {was} to ask as in training, or --prompt-override to "
                "ask with the newer retriever on purpose",
            )
        else:
            chosen = dataclasses.replace(chosen, checkpoint=now.path, sha256=now.sha256)
    elif not _same_path(chosen.retriever, trained.retriever):
        diffs.append(f"retriever {chosen.retriever!r} (trained with {trained.retriever!r})")
    if chosen.retriever is not None and not diffs:
        for name in ("num_premises", "max_premise_chars"):
            if getattr(chosen, name) != getattr(trained, name):
                diffs.append(
                    f"{name} {getattr(chosen, name)} (trained with {getattr(trained, name)})"
                )
    if diffs:
        raise ConfigError(
            f"--generator {config.generator} would be asked with other prompts than it was "
            f"trained with: {'; '.join(diffs)}",
            hint="leave these settings out to ask as in training, or pass --prompt-override "
            "to ask differently on purpose",
        )
    return chosen


def check_premise_settings(settings: PremiseSettings, config: ProverConfig) -> PremiseSettings:
    """With a retriever: the retriever is a retriever and ``--data`` has a corpus (one-line
    errors naming the flag; cheap: no model loads). Returns ``settings`` with the checkpoint
    the retriever resolves to and its fingerprint (what is loaded and recorded)."""
    if settings.retriever is None:
        return settings
    from leantrain.tactics.premises import corpus_dir, retriever_checkpoint

    flag = "--retriever" if config.retriever else "--retriever (from the generator's run)"
    if settings.sha256 is None:
        now = retriever_checkpoint(settings.retriever, flag=flag)
        settings = dataclasses.replace(settings, checkpoint=now.path, sha256=now.sha256)
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
