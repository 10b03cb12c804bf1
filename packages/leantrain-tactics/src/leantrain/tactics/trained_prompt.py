"""The prompt settings a leantrain run trained a tactic generator with, read from its run
manifest: the system prompt and the retrieval settings (``retriever``, ``num_premises``,
``max_premise_chars``), so a model is asked — in evaluation, in further training, in the prover
— with the prompt it was taught. No torch is imported.

A retriever setting names a path, and a lifelong retrieval *run* names its newest checkpoint,
which changes when that run trains on another repository. So a training run also pins the
retriever it actually used: :func:`pin_retriever` writes ``retriever_pin.json`` into the run
directory (the resolved checkpoint directory and its content fingerprint) at its first dataset
with premises, and every later step, resume or chained trainer of that run must resolve to the
same checkpoint (else a one-line error naming both). One run, one retriever checkpoint: the
prompts its model was last trained with are those of the pinned checkpoint, and the prover
compares with it. To train on with a newer retriever, start a new run (``--model`` the old
run's model, ``--retriever`` the newer one): that run pins the newer checkpoint."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from leantrain.core.errors import ConfigError

PIN_NAME = "retriever_pin.json"
"""The file of a training run that pins its retriever checkpoint (:func:`pin_retriever`)."""


def read_pin(run_dir: str | Path) -> dict[str, Any] | None:
    """``{retriever, realpath, checkpoint, sha256}`` a run pinned, or ``None``."""
    from leantrain.core.schemas import read_json

    path = Path(run_dir) / PIN_NAME
    if not path.is_file():
        return None
    try:
        pin = read_json(path)
    except Exception as e:
        raise ConfigError(f"{path}: unreadable ({e})", hint="restore the file") from None
    if not isinstance(pin, dict) or not pin.get("sha256"):
        raise ConfigError(f"{path}: not a retriever pin", hint="restore the file")
    return pin


def pin_retriever(run_dir: str | Path, retriever: str, *, flag: str = "--retriever") -> Any:
    """The :class:`~leantrain.tactics.premises.RetrieverCheckpoint` ``retriever`` resolves to,
    pinned in the training run ``run_dir``: recorded there the first time (main process), and a
    one-line :class:`ConfigError` naming both checkpoints when the run pinned another one (its
    retrieval run trained on since, or another retriever is given)."""
    from leantrain.core.atomic import atomic_write_json
    from leantrain.core.lifelong import is_main_process
    from leantrain.tactics.premises import retriever_checkpoint

    now = retriever_checkpoint(retriever, flag=flag)
    pin = read_pin(run_dir)
    if pin is None:
        if is_main_process():
            record = {
                "retriever": retriever,
                "realpath": os.path.realpath(retriever),
                "checkpoint": now.path,
                "sha256": now.sha256,
            }
            atomic_write_json(Path(run_dir) / PIN_NAME, record)
        return now
    if pin["sha256"] != now.sha256:
        raise ConfigError(
            f"{flag} {retriever} is now checkpoint {now.path} (sha256 {now.sha256[:12]}), but "
            f"{run_dir} trained with checkpoint {pin.get('checkpoint')} (sha256 "
            f"{pin['sha256'][:12]}): its prompts would change mid-run",
            hint=f"pass {flag} {pin.get('checkpoint')} to go on with the pinned retriever, or "
            "start a new run (another --output-dir, or --overwrite) for the newer one",
        )
    return now


def recorded_training_config(model_path: str | Path) -> dict[str, Any] | None:
    """The trainer config a leantrain run trained the model at ``model_path`` with, read from
    the nearest run's manifest (the path itself or up to three levels above; a run is known by
    its ``.leantrain`` marker, as in :func:`~leantrain.core.lifelong.final_checkpoint`: a model
    directory may hold a ``manifest.json`` of its own). The section read is the trainer's whose
    checkpoint ``model_path`` is (``runs/p/sft/003-x``: ``sft``, even when the run also has
    ``grpo``), or the run's only trainer's. ``None`` when there is none (a plain model directory
    or hub id). A run whose manifest cannot be read (corrupted, of a newer leantrain) is the
    one-line :class:`~leantrain.core.errors.CheckpointError` of ``RunManifest.load``: asking the
    model with another prompt than its training one would lower its proof rate silently.
    The retriever the run pinned (:func:`pin_retriever`) is added as ``retriever_checkpoint``,
    ``retriever_sha256`` and ``retriever_realpath`` (the setting's real path)."""
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
                pin = read_pin(directory) if config.get("retriever") else None
                if pin is not None:
                    pinned = {
                        "retriever_checkpoint": pin.get("checkpoint"),
                        "retriever_realpath": pin.get("realpath"),
                        "retriever_sha256": pin["sha256"],
                    }
                    config = {**config, **pinned}
                return config
        return None
    return None
