"""Lifelong training: the one loop that trains every model repository by repository.

:class:`LifelongEngine` (:mod:`.engine`) walks repositories in order. For each one it exports
the merged data of the repositories so far *once*, hands every trainer a :class:`Step`
(:mod:`.protocol`), saves the trained model as ``<run_dir>/<trainer>/NNN-<repo slug>/`` (a
directory that ``from_pretrained`` of its kind loads) and records it in the run's one
``manifest.json``; then it scores the model on every repository seen so far (the accuracy
matrix of :mod:`leantrain.core.forgetting`).

A trainer implements :class:`LifelongTrainer` and owns no loop: its ``train(repos, database,
export_dir, *, data_path)`` is :func:`fit`, and so is the pipeline's run with several trainers.
The other modules have one job each: :mod:`.data` (repository ids, the database — any object
with ``export_merged_data(repos, path)``, or a path opened through the ``leantrain.databases``
entry point —, the data keywords of ``train``, per-repository evaluation splits),
:mod:`.models` (the one run-dir → model resolver and model-directory guard) and :mod:`.ranks`
(rank 0 exports, saves and records; other ranks wait). Nothing here imports torch or SQLite.

Run directory::

    manifest.json            one per run: order, steps done, checkpoints (checksummed), evals
    metrics.jsonl            one JSON event per line (step metrics, per-repo evaluations)
    data/NNN_<slug>/         the merged export after repository NNN
    data/eval/NNN_<slug>/    repository NNN's own val/test splits (fixed when it was added)
    <trainer>/NNN-<slug>/    the model after repository NNN
    <trainer>/work/NNN/      resumable state inside step NNN (deleted once the step is saved)
    <trainer>/logs/NNN-<slug>.jsonl   per-step training logs of step NNN
"""

from leantrain.core.lifelong.data import (
    DATABASE_GROUP,
    check_database,
    content_fingerprint,
    data_label,
    open_database,
    repo_id,
    repo_slug,
    step_name,
    train_data,
    write_repo_eval_dir,
)
from leantrain.core.lifelong.engine import (
    DATA_SUBDIR,
    EVAL_SUBDIR,
    LOGS_SUBDIR,
    UNTRACKED_KEYS,
    WORK_SUBDIR,
    Event,
    LifelongEngine,
)
from leantrain.core.lifelong.models import (
    check_model_dir,
    check_model_name,
    final_checkpoint,
    find_model,
    last_complete_checkpoint,
    loading,
    looks_local,
)
from leantrain.core.lifelong.protocol import LifelongTrainer, Step, fit
from leantrain.core.lifelong.ranks import is_main_process

__all__ = [
    "DATABASE_GROUP",
    "DATA_SUBDIR",
    "EVAL_SUBDIR",
    "LOGS_SUBDIR",
    "UNTRACKED_KEYS",
    "WORK_SUBDIR",
    "Event",
    "LifelongEngine",
    "LifelongTrainer",
    "Step",
    "check_database",
    "check_model_dir",
    "check_model_name",
    "content_fingerprint",
    "data_label",
    "final_checkpoint",
    "find_model",
    "fit",
    "is_main_process",
    "last_complete_checkpoint",
    "loading",
    "looks_local",
    "open_database",
    "repo_id",
    "repo_slug",
    "step_name",
    "train_data",
    "write_repo_eval_dir",
]
