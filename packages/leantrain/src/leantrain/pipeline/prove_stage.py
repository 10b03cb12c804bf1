"""The pipeline's ``prove`` stage: after each repository, prove the test theorems of every
repository so far with the models trained up to it — the forgetting matrix of proof rates.

:class:`ProveStage` is a :class:`~leantrain.core.lifelong.LifelongTrainer` that trains nothing:
its "model" after repository ``i`` is the pair of checkpoints the pipeline trained at step ``i``
(the generator: GRPO's if the run has GRPO, else SFT's; the progress model if the run trains
one), written as ``prove_models.json``. The engine then scores it like any trainer: on the merged
test split and on each repository's own test split, cell by cell, so a finished cell is reused
after a kill and a changed ``prove:`` section is refused by the run manifest.

Proving is :class:`leantrain.prover.Prover` with one output directory per step
(``<run_dir>/prove/proofs/NNN-<slug>/``): the merged split and the per-repository splits share
its results, a theorem is searched once per step, and a kill inside a cell resumes per theorem.
Under the ``replay`` backend the score is the **replay proof rate**: a lower bound on the real
proof rate, since a proof other than the traced one counts as a failure.

With ``mode: whole`` in the ``prove:`` section the stage proves by whole-proof generation
(:class:`leantrain.prover.whole.WholeProver`, ``attempts`` proofs sampled per theorem): each
cell holds the (replay) whole proof rate — pass@``attempts`` — and pass@1…k, so the forgetting
matrix is one of pass@k per repository. ``load_generator`` then returns a
:class:`~leantrain.prover.whole.ProofSampler`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_json
from leantrain.core.errors import CheckpointError
from leantrain.core.lifelong import Step, step_name
from leantrain.core.manifest import RunManifest

MODELS_FILE = "prove_models.json"
PROOFS_SUBDIR = "proofs"
SUMMARY_KEYS = ("proved", "attempted", "mean_expansions", "mean_tactics_tried", "mean_time_s")


def build_prover(config: Any, generator: Any = None) -> Any:
    """The prover of ``config``'s ``mode``: a :class:`~leantrain.prover.Prover` (tactic search)
    or a :class:`~leantrain.prover.whole.WholeProver` (``generator``: a loaded one, or None)."""
    if config.mode == "whole":
        from leantrain.prover.whole import WholeProver

        return WholeProver(config, sampler=generator)
    from leantrain.prover import Prover

    return Prover(config, tactic_generator=generator)


def cell_metrics(summary: Mapping[str, Any], mode: str, score_key: str) -> dict[str, Any]:
    """What a cell of the matrix keeps of a prover's summary: the counts, the rate and the
    search costs; in ``mode`` whole, pass@1…k and the seconds instead of the search costs."""
    if mode == "whole":
        keys = [k for k in summary if "pass@" in k]
        return {k: summary[k] for k in ("proved", "attempted", score_key, *keys, "time_s")}
    return {k: summary[k] for k in (*SUMMARY_KEYS, score_key)}


GeneratorLoader = Callable[[Path], Any]
"""Builds a :class:`~leantrain.prover.search.TacticGenerator` from a checkpoint directory
(``None``: the config's generator settings through :class:`~leantrain.prover.Prover`)."""


def metric_of(backend: str, mode: str = "tactic") -> str:
    """The name of the proof rate a backend measures (``replay proof rate`` for replay; ``…
    whole proof rate`` in ``mode`` whole)."""
    if mode == "whole":
        from leantrain.prover.whole import REPLAY_WHOLE_METRIC, WHOLE_METRIC

        return REPLAY_WHOLE_METRIC if backend == "replay" else WHOLE_METRIC
    if backend == "replay":
        from leantrain.prover.replay import REPLAY_METRIC

        return REPLAY_METRIC
    return "proof rate"


class ProveStage:
    """Prove with the models of each step (see the module docstring).

    ``config`` is the run's :class:`~leantrain.prover.ProverConfig` (its ``output_dir`` is
    ``<run_dir>/prove``); ``generator_from`` names the trainer whose checkpoint of the same
    step generates tactics (``"grpo"`` or ``"sft"``), ``progress_from`` the one whose
    checkpoint guides the search (``"progress"`` or ``None``). ``load_generator`` replaces how
    a generator checkpoint is loaded (tests, callers with their own generator).
    """

    name = "prove"
    higher_is_better = True

    def __init__(
        self,
        config: Any,
        run_dir: str | Path,
        *,
        generator_from: str,
        progress_from: str | None = None,
        load_generator: GeneratorLoader | None = None,
    ) -> None:
        from leantrain.prover.summary import metric_key

        self.config = config
        self.run_dir = Path(run_dir)
        self.generator_from = generator_from
        self.progress_from = progress_from
        self.load_generator = load_generator
        self.metric = metric_of(config.backend, config.mode)
        self.score_key = metric_key(self.metric)
        self.models: dict[str, Any] | None = None
        self._prover: Any = None

    # -- the "model": which checkpoints prove at this step -------------------------------------
    def train_step(self, step: Step) -> dict[str, Any]:
        """Take the checkpoints of step ``step.index`` from the run manifest."""
        manifest = RunManifest.load(self.run_dir)
        models: dict[str, Any] = {"index": step.index, "repo": step.repo}
        for role, trainer in (("generator", self.generator_from), ("progress", self.progress_from)):
            if trainer is None:
                models[role] = None
                continue
            record = manifest.step(trainer, step.index)
            if record is None:
                raise CheckpointError(
                    f"'prove' uses the {role} of '{trainer}', which has no step {step.index}",
                    hint=f"list '{trainer}' before 'prove' in trainers",
                )
            models[role] = record.checkpoint.path
        self._set(models)
        # load the models now: a model that cannot load stops the run here, with its one-line
        # error, instead of turning every cell into a skipped evaluation
        self.prover()
        return {k: models[k] for k in ("generator", "progress")}

    def save(self, path: Path) -> None:
        """Write which checkpoints this step proves with (``prove_models.json``)."""
        atomic_write_json(Path(path) / MODELS_FILE, self._models())

    def load(self, path: Path) -> None:
        """Make a saved step's checkpoints the current ones (a resumed run)."""
        file = Path(path) / MODELS_FILE
        try:
            models = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise CheckpointError(f"{file}: unreadable ({e})", hint="start the run over") from None
        self._set(models)

    def _set(self, models: dict[str, Any]) -> None:
        self.models = models
        self._prover = None  # another step: another generator, another results directory

    def _models(self) -> dict[str, Any]:
        if self.models is None:
            raise CheckpointError("'prove' has no models yet", hint="train a step first")
        return self.models

    # -- proving ----------------------------------------------------------------------------------
    @property
    def proofs_dir(self) -> Path:
        """The current step's prover output directory (results shared by its cells)."""
        models = self._models()
        return self.run_dir / self.name / PROOFS_SUBDIR / step_name(models["index"], models["repo"])

    def _checkpoint(self, rel: str | None) -> str | None:
        if rel is None:
            return None
        path = Path(rel)
        return str(path if path.is_absolute() else (self.run_dir / path).resolve())

    def prover(self) -> Any:
        """The :class:`~leantrain.prover.Prover` of the current step (built once per step)."""
        if self._prover is None:
            models = self._models()
            config = dataclasses.replace(
                self.config,
                generator=self._checkpoint(models["generator"]),
                progress=self._checkpoint(models["progress"]),
                output_dir=str(self.proofs_dir),
            )
            generator = None
            if self.load_generator is not None:
                generator = self.load_generator(Path(config.generator))
            self._prover = build_prover(config, generator)
        return self._prover

    def evaluate(self, data: Any, split: str = "test") -> dict[str, float]:
        """Prove ``split`` of ``data`` (an export or a repository's evaluation directory):
        ``{proved, attempted, <metric>, mean_expansions, …}``. Theorems this step already
        proved or failed (in another cell, or before a kill) are not searched again."""
        from leantrain.prover.theorems import load_split

        cfg = self.config
        theorems = load_split(
            data, split, split_strategy=cfg.split_strategy, limit=cfg.max_theorems
        )
        summary = self.prover().evaluate(theorems, split=split, show_progress=False)
        return cell_metrics(summary, cfg.mode, self.score_key)
