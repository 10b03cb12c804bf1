"""The prompt settings a leantrain run trained a tactic generator with, read from its run
manifest: the system prompt and the retrieval settings (``retriever``, ``num_premises``,
``max_premise_chars``), so a model is asked — in evaluation, in further training, in the prover
— with the prompt it was taught. No torch is imported."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def recorded_training_config(model_path: str | Path) -> dict[str, Any] | None:
    """The trainer config a leantrain run trained the model at ``model_path`` with, read from
    the nearest run's manifest (the path itself or up to three levels above; a run is known by
    its ``.leantrain`` marker, as in :func:`~leantrain.core.lifelong.final_checkpoint`: a model
    directory may hold a ``manifest.json`` of its own). The section read is the trainer's whose
    checkpoint ``model_path`` is (``runs/p/sft/003-x``: ``sft``, even when the run also has
    ``grpo``), or the run's only trainer's. ``None`` when there is none (a plain model directory
    or hub id). A run whose manifest cannot be read (corrupted, of a newer leantrain) is the
    one-line :class:`~leantrain.core.errors.CheckpointError` of ``RunManifest.load``: asking the
    model with another prompt than its training one would lower its proof rate silently."""
    from leantrain.core.manifest import MANIFEST_NAME, RunManifest
    from leantrain.core.output_dir import output_kind

    path = Path(model_path)
    if not path.exists():
        return None
    path = path.resolve()
    for directory in [path, *list(path.parents)[:3]]:
        if output_kind(directory) != "run" or not (directory / MANIFEST_NAME).is_file():
            continue
        manifest = RunManifest.load(directory)
        inside = path.relative_to(directory).parts
        if inside:
            sections = [inside[0]]  # the trainer directory the checkpoint is in
        elif len(manifest.trainers) == 1:
            sections = list(manifest.trainers)
        else:
            sections = ["grpo", "sft"]
        for section in sections:
            config = manifest.config.get(section)
            if isinstance(config, dict) and "system_prompt" in config:
                return config
        return None
    return None
