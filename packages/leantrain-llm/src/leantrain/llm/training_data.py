"""Datasets for the trainers: from an in-memory ``datasets.Dataset``, an export dir or a split
file, built with :mod:`leantrain.tactics` so training, evaluation and suggestion share prompts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError


def dataset_config(cfg: Any, max_samples: int | None = None) -> Any:
    """The :class:`~leantrain.tactics.TacticDatasetConfig` a trainer config implies."""
    from leantrain.tactics import (
        DEFAULT_MAX_PREMISE_CHARS,
        DEFAULT_SYSTEM_PROMPT,
        TacticDatasetConfig,
    )

    retriever = getattr(cfg, "retriever", None)
    if retriever is None:
        _check_no_training_retriever(getattr(cfg, "model_name", None))
    elif retriever.strip():
        _check_same_retriever(getattr(cfg, "model_name", None), retriever)
        retriever = _pinned(cfg, retriever)
    return TacticDatasetConfig(
        system_prompt=DEFAULT_SYSTEM_PROMPT if cfg.system_prompt is None else cfg.system_prompt,
        split_strategy=cfg.split_strategy,
        first_line_only=getattr(cfg, "first_line_only", False),
        max_samples=max_samples,
        retriever=retriever,
        num_premises=getattr(cfg, "num_premises", 10),
        max_premise_chars=getattr(cfg, "max_premise_chars", DEFAULT_MAX_PREMISE_CHARS),
    )


def _pinned(cfg: Any, retriever: str) -> str:
    """In a training run (``cfg.output_dir`` is a leantrain run): the retriever checkpoint the
    run pinned (:func:`~leantrain.tactics.trained_prompt.pin_retriever`; pinned now at its
    first dataset with premises, a one-line error when ``retriever`` resolves to another one
    later: a lifelong retrieval run that trained on). Elsewhere ``retriever`` as given."""
    from leantrain.core.output_dir import output_kind

    run_dir = getattr(cfg, "output_dir", None)
    if not run_dir or output_kind(Path(run_dir)) != "run":
        return retriever
    from leantrain.tactics.trained_prompt import pin_retriever

    return str(pin_retriever(run_dir, retriever).path)


def _check_same_retriever(model_name: str | None, retriever: str) -> None:
    """A model whose run pinned a retriever checkpoint, evaluated or trained on with the same
    ``--retriever`` path that now names another checkpoint (a lifelong retrieval run that
    trained on): one line naming both. Another path (the newer checkpoint's own directory) is
    a choice and passes."""
    if not model_name:
        return
    import os

    from leantrain.core.errors import ConfigError
    from leantrain.tactics.premises import retriever_checkpoint
    from leantrain.tactics.trained_prompt import recorded_training_config

    recorded = recorded_training_config(model_name)
    pinned = recorded.get("retriever_sha256") if recorded else None
    if not pinned or os.path.realpath(retriever) != recorded.get("retriever_realpath"):
        return
    now = retriever_checkpoint(retriever)
    if now.sha256 != pinned:
        was = recorded.get("retriever_checkpoint")
        raise ConfigError(
            f"--model {model_name} was trained with retriever checkpoint {was} (sha256 "
            f"{pinned[:12]}), but --retriever {retriever} is now checkpoint {now.path} (sha256 "
            f"{now.sha256[:12]})",
            hint=f"pass --retriever {was} for the prompts it was trained with, or --retriever "
            f"{now.path} to use the newer retriever on purpose",
        )


def _check_no_training_retriever(model_name: str | None) -> None:
    """A model whose leantrain run trained it with a retriever is not evaluated or trained on
    further with premise-free prompts by default: one line saying to pass ``--retriever``
    (the same one, or ``""`` for none on purpose)."""
    if not model_name:
        return
    from leantrain.core.errors import ConfigError
    from leantrain.tactics.trained_prompt import recorded_training_config

    recorded = recorded_training_config(model_name)
    trained_with = recorded.get("retriever") if recorded else None
    if trained_with:
        raise ConfigError(
            f"--model {model_name} was trained with retriever={trained_with}, but no --retriever "
            "is given (its prompts would lose their premises)",
            hint=f"pass --retriever {trained_with} (and its --num-premises, --max-premise-chars), "
            "or --retriever '' to drop the premises on purpose",
        )


def _check_exists(path: str | Path) -> Path:
    path = Path(path)
    if not path.exists():
        raise DataError(
            path,
            "training data not found",
            hint="pass an export dir from 'leantrain export merge' or a split .json file",
        )
    return path


def load_sft_dataset(data: Any, split: str, cfg: Any, *, max_samples: int | None = None) -> Any:
    """SFT rows (``prompt``/``completion``) as a ``datasets.Dataset``; a Dataset passes through."""
    import datasets

    if isinstance(data, datasets.Dataset):
        return data
    from leantrain.tactics import create_sft_dataset

    path = _check_exists(data)
    return create_sft_dataset(path, split, max_samples, config=dataset_config(cfg)).to_hf()


def load_rl_dataset(data: Any, split: str, cfg: Any, *, max_samples: int | None = None) -> Any:
    """GRPO rows (``prompt``, ``problem``, ``reference`` …) as a ``datasets.Dataset``."""
    import datasets

    if isinstance(data, datasets.Dataset):
        return data
    from leantrain.tactics import create_rl_dataset

    path = _check_exists(data)
    return create_rl_dataset(path, split, max_samples, config=dataset_config(cfg)).to_hf()


def references(dataset: Any) -> list[tuple[list[dict[str, str]], str]]:
    """(prompt messages, reference tactic) pairs of an SFT or RL dataset."""
    cols = dataset.column_names
    out = []
    for row in dataset:
        if "reference" in cols:
            out.append((row["prompt"], row["reference"]))
        elif "completion" in cols:
            out.append((row["prompt"], row["completion"][-1]["content"]))
        else:
            raise DataError(
                None, f"dataset has neither 'reference' nor 'completion' column (columns: {cols})"
            )
    return out
