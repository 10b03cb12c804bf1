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

# ruff: noqa: F403 - the package's names are its modules' public names
from leantrain.core.lifelong.data import *
from leantrain.core.lifelong.engine import *
from leantrain.core.lifelong.models import *
from leantrain.core.lifelong.protocol import *
from leantrain.core.lifelong.ranks import *
