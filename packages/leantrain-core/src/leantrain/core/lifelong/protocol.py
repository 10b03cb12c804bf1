"""What a trainer is to the engine (:class:`LifelongTrainer`, handed a :class:`Step`), and
:func:`fit`, the body of every trainer's ``train()``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from leantrain.core.lifelong.data import train_data


@dataclass
class Step:
    """One step of lifelong training, as a trainer sees it.

    ``data`` is the merged export of ``repos`` (``repo`` included) — or, for a one-off run, the
    data the user gave (a directory, a file, a ``datasets.Dataset``). ``init_from`` is the
    checkpoint to start from (``None``: the trainer's configured base model). ``work_dir`` is
    where the trainer keeps resumable state inside the step (engine checkpoints, optimizer
    state); a killed step resumes from it. ``log_file`` is where it appends its per-step logs
    (one JSON object per line: ``{"step", "loss", ...}``), which the report plots; the console
    is for people. ``callbacks`` are the caller's engine callbacks (e.g. HF ``TrainerCallback``).
    """

    index: int
    repo: str
    repos: list[str]
    data: Any
    init_from: Path | None
    work_dir: Path
    log_file: Path | None = None
    callbacks: list[Any] = field(default_factory=list)


@runtime_checkable
class LifelongTrainer(Protocol):
    """What the engine needs of a trainer. ``name`` is its directory under the run directory;
    ``score_key`` / ``higher_is_better`` name the metric of its forgetting matrix."""

    name: str
    score_key: str
    higher_is_better: bool

    def train_step(self, step: Step) -> dict[str, Any]:
        """Train on ``step.data`` starting from ``step.init_from``; return training metrics."""
        ...

    def evaluate(self, data: Any, split: str = "test") -> dict[str, float]:
        """Metrics of the current model on ``split`` of ``data`` (an export directory)."""
        ...

    def save(self, path: Path) -> None:
        """Write the current model to ``path`` in its engine's ``from_pretrained`` form."""
        ...

    def load(self, path: Path) -> None:
        """Make the model saved at ``path`` the current one."""
        ...


def fit(
    trainer: LifelongTrainer,
    repos: Any = None,
    database: Any = None,
    export_dir: str | Path | None = None,
    *,
    data_path: Any = None,
    config: Any = None,
    **engine: Any,
) -> dict[str, Any]:
    """Every trainer's ``train(repos=None, database=None, export_dir=None, *, data_path=None)``:
    one engine run of ``trainer`` alone in ``trainer.output_dir``; returns its result
    ``{output_dir, per_repo, final, checkpoints, model_dir, evals}``.

    The data comes from the arguments or ``config`` (:func:`train_data`); ``config`` (a
    :class:`~leantrain.core.groups.LifelongData` config) also gives ``export_dir``,
    ``evaluate_each_repo``, ``overwrite`` and the config
    the run directory is kept for. ``engine`` keywords override these. One-off data that is
    a file is evaluated only when ``trainer.evaluates_files`` (default ``True``). Afterwards
    ``trainer.last_data`` is the data of the last step, also when a rerun had nothing left to
    train: what the trainer's ``evaluate()`` defaults to."""
    from leantrain.core.config import config_to_dict
    from leantrain.core.lifelong.engine import LifelongEngine

    source = train_data(repos, database, data_path, config)
    each = getattr(config, "evaluate_each_repo", True)
    if each and not getattr(trainer, "evaluates_files", True) and "data" in source:
        each = Path(str(source["data"])).is_dir()  # rows, not an export: no per-repo scores
    options: dict[str, Any] = {
        "export_dir": export_dir or getattr(config, "export_dir", None),
        "evaluate_each_repo": each,
        "overwrite": bool(getattr(config, "overwrite", False)),
    }
    if config is not None:
        options["configs"] = {trainer.name: config_to_dict(config)}
    out = trainer.output_dir  # type: ignore[attr-defined]
    run = LifelongEngine(out, [trainer], **source, **(options | engine))
    result = run.run()[trainer.name]
    trainer.last_data = run.last_data  # type: ignore[attr-defined]
    return result


class Fits:
    """A trainer whose ``train()`` is :func:`fit` with its ``config`` (base of the trainers)."""

    config: Any

    def train(
        self,
        repos: Any = None,
        database: Any = None,
        export_dir: str | Path | None = None,
        *,
        data_path: Any = None,
    ) -> dict[str, Any]:
        """Train; returns ``{output_dir, per_repo, final, checkpoints, model_dir, evals}``.

        * ``train(dataset_or_path)`` / ``train(data_path=…)``: one step on a
          ``datasets.Dataset``, an export dir or a file (default: ``config.data_path``);
        * ``train(repos, database, export_dir)``: lifelong — for each repository (default: the
          config's ``repos``, else the database's curriculum) the merged data of the
          repositories so far is exported under ``export_dir`` and training continues on it;
          ``<output_dir>/<name>/NNN-<repo>/`` is the model after repository NNN. ``database``:
          a ``leantrain.export.Database``, its path, or LeanDojo-v2's ``DynamicDatabase``.

        A rerun in the same output dir skips finished steps and resumes a killed one from its
        last step checkpoint. See :func:`fit`."""
        trainer: Any = self  # a LifelongTrainer: the subclass has the protocol's members
        options = {"data_path": data_path, "config": self.config, **self.fit_options()}
        return fit(trainer, repos, database, export_dir, **options)

    def fit_options(self) -> dict[str, Any]:
        """The engine keywords of :func:`fit` beyond the config's (none here)."""
        return {}
