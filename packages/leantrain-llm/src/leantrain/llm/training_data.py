"""Datasets for the trainers: from an in-memory ``datasets.Dataset``, an export dir or a split
file, built with :mod:`leantrain.tactics` so training, evaluation and suggestion share prompts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError


def model_prompt(cfg: Any, model: Any = None, *, in_run: bool = False) -> Any:
    """The :class:`~leantrain.tactics.model_prompt.ModelPrompt` a trainer or ``llm eval``
    config asks its model with: the settings ``cfg`` gives explicitly over the ``prompt.json``
    of the model it starts from (``model``, default ``cfg.model_name``: a model directory or a
    run's newest), over the defaults; a given retriever is resolved to its checkpoint and
    fingerprint. A given setting that differs from the model's is used after one warning
    line; ``in_run`` (the run's own previous checkpoint: its retriever setting now names
    another checkpoint) makes it a one-line error instead."""
    from leantrain.tactics.model_prompt import given_settings, resolve_prompt

    source = model if model is not None else getattr(cfg, "model_name", None)
    if in_run:
        from leantrain.tactics.model_prompt import read_prompt

        previous = read_prompt(source)
        was = previous.retriever if previous is not None else None
        return resolve_prompt(
            source,
            given_settings(cfg),
            on_conflict="error",
            model_flag="the run's previous checkpoint",
            override_hint=f"pass --retriever {was} to go on with the checkpoint this run trained "
            "with, or start a new run (another --output-dir, or --overwrite) for the newer one",
        )
    return resolve_prompt(_model_dir(source), given_settings(cfg), model_flag="--model")


def _model_dir(name: Any) -> Path | None:
    """The directory holding model ``name`` (a run's newest model), ``None`` for a hub id."""
    if not name:
        return None
    from leantrain.llm.model_loading import model_files_dir

    return model_files_dir(name)


def dataset_config(cfg: Any, max_samples: int | None = None, prompt: Any = None) -> Any:
    """The :class:`~leantrain.tactics.TacticDatasetConfig` a trainer config implies, prompted
    with ``prompt`` (default: :func:`model_prompt` of ``cfg``)."""
    from leantrain.tactics import TacticDatasetConfig

    if prompt is None:
        prompt = model_prompt(cfg)
    return TacticDatasetConfig(
        system_prompt=prompt.system_prompt,
        split_strategy=cfg.split_strategy,
        first_line_only=prompt.first_line_only,
        max_samples=max_samples,
        retriever=prompt.retriever,
        num_premises=prompt.num_premises,
        max_premise_chars=prompt.max_premise_chars,
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


def load_sft_dataset(
    data: Any, split: str, cfg: Any, *, max_samples: int | None = None, prompt: Any = None
) -> Any:
    """SFT rows (``prompt``/``completion``) as a ``datasets.Dataset``; a Dataset passes through."""
    import datasets

    if isinstance(data, datasets.Dataset):
        return data
    from leantrain.tactics import create_sft_dataset

    if prompt is None:
        prompt = model_prompt(cfg)
    if prompt.mode == "whole":
        return whole_proof_dataset(data, split, cfg, prompt, max_samples)
    path = _check_exists(data)
    config = dataset_config(cfg, prompt=prompt)
    return create_sft_dataset(path, split, max_samples, config=config).to_hf()


def whole_proof_dataset(
    path: str | Path, split: str, cfg: Any, prompt: Any, max_samples: int | None = None
) -> Any:
    """Whole-proof SFT rows (``prompt``: system + header and statement, ``completion``: the
    proof; :func:`leantrain.tactics.whole_proof.create_whole_proof_sft_dataset`). A retriever
    is refused: whole-proof prompts carry no premises."""
    from leantrain.core.errors import ConfigError
    from leantrain.tactics.whole_proof import create_whole_proof_sft_dataset

    if prompt.retriever is not None:
        raise ConfigError(
            f"--mode whole takes no retriever (got {prompt.retriever}): whole-proof prompts are "
            "the header and the statement",
            hint="pass --retriever '' (none), or train in --mode tactic",
        )
    return create_whole_proof_sft_dataset(
        _check_exists(path),
        split,
        max_samples,
        system_prompt=prompt.system_prompt,
        split_strategy=cfg.split_strategy,
    )


def guard(data: Any, cfg: Any) -> None:
    """The contamination guard before training on ``data`` (an export dir or split file; an
    in-memory ``Dataset`` has no statements to check): ``cfg``'s ``eval_set`` files and the
    data's test split against its training split
    (:func:`leantrain.tactics.contamination.guard_training_data`)."""
    if not isinstance(data, (str, Path)):
        return
    from leantrain.tactics.contamination import guard_training_data

    guard_training_data(
        data,
        eval_sets=cfg.eval_set,
        allow=cfg.allow_contamination,
        train_split=cfg.train_split,
        split_strategy=cfg.split_strategy,
    )


def load_rl_dataset(
    data: Any, split: str, cfg: Any, *, max_samples: int | None = None, prompt: Any = None
) -> Any:
    """GRPO rows (``prompt``, ``problem``, ``reference`` …) as a ``datasets.Dataset``."""
    import datasets

    if isinstance(data, datasets.Dataset):
        return data
    from leantrain.tactics import create_rl_dataset

    path = _check_exists(data)
    config = dataset_config(cfg, prompt=prompt)
    return create_rl_dataset(path, split, max_samples, config=config).to_hf()


def whole_rows(
    data: Any, split: str, cfg: Any, *, max_samples: int | None = None, prompt: Any = None
) -> list[dict[str, Any]]:
    """``--mode whole`` rows of ``split`` (:func:`leantrain.tactics.whole_proof.
    whole_proof_rl_rows`: whole-proof prompt, ``reference`` proof, what the ``lean`` reward
    asks Lean), at most ``max_samples``; :class:`DataError` naming the file when none."""
    from leantrain.tactics import iter_theorems, resolve_split_file
    from leantrain.tactics.whole_proof import default_system_prompt, whole_proof_rl_rows

    file = resolve_split_file(_check_exists(data), split, cfg.split_strategy)
    theorems = iter_theorems(file, split, split_strategy=cfg.split_strategy)
    system = prompt.system_prompt if prompt is not None else default_system_prompt("whole")
    rows = whole_proof_rl_rows(theorems, system)[:max_samples]
    if not rows:
        raise DataError(
            file,
            f"split '{split}' has no theorem with a statement (theorem_statement, or a traced "
            "initial state) and a proof (--mode whole)",
            hint="export traced theorems or statements with proofs, or import a whole-proof "
            "dataset",
        )
    return rows


def load_whole_dataset(
    data: Any, split: str, cfg: Any, *, max_samples: int | None = None, prompt: Any = None
) -> Any:
    """:func:`whole_rows` as a ``datasets.Dataset``; a Dataset passes through."""
    import datasets

    if isinstance(data, datasets.Dataset):
        return data
    return datasets.Dataset.from_list(
        whole_rows(data, split, cfg, max_samples=max_samples, prompt=prompt)
    )


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
