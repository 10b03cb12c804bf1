"""One function per trainer: train it on the repositories so far and report its metrics.

Each stage runs the trainer's own lifelong loop on ``repos[: index + 1]`` in a fixed output
directory (``<run_dir>/<trainer>``); the trainer's manifest skips the repositories it already
finished, so each call trains exactly the newly added repository and a killed stage resumes
from the trainer's own step checkpoint. GRPO starts from that repository's SFT model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leantrain.core.config import config_from_dict
from leantrain.core.errors import ConfigError


@dataclass
class StageContext:
    """What a stage needs to know: where, which repositories, which config."""

    run_dir: Path
    database: Path
    data_path: Path
    repos: list[str]
    repo: str
    repo_index: int
    trainer_config: dict[str, Any]
    seed: int
    previous: dict[str, Any] = field(default_factory=dict)


@dataclass
class StageResult:
    """A stage's metrics after the repository, its loss curve and its checkpoint."""

    metrics: dict[str, Any]
    history: list[dict[str, Any]] = field(default_factory=list)
    checkpoint: str | None = None


def _loss_recorder() -> Any:
    """A transformers callback that records ``{step, loss, reward}`` from the trainer's logs."""
    from transformers import TrainerCallback

    class LossRecorder(TrainerCallback):
        def __init__(self) -> None:
            self.points: list[dict[str, Any]] = []

        def on_log(
            self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any
        ) -> None:
            if logs and ("loss" in logs or "reward" in logs):
                point = {"step": state.global_step, "loss": logs.get("loss")}
                if "reward" in logs:
                    point["reward"] = logs["reward"]
                self.points.append(point)

    return LossRecorder()


def _with_defaults(ctx: StageContext, output: str, **defaults: Any) -> dict[str, Any]:
    cfg = {**defaults, **ctx.trainer_config}
    if "output_dir" in ctx.trainer_config:
        raise ConfigError(
            f"'output_dir' is set by the pipeline for {output} (it is <run_dir>/{output}); remove it"
        )
    cfg["output_dir"] = str(ctx.run_dir / output)
    return cfg


def _repo_metrics(result: dict[str, Any], repo: str) -> dict[str, Any]:
    per_repo = result.get("per_repo", {})
    if repo in per_repo:
        return per_repo[repo]
    # trainers key repos by id; the pipeline's id is the same, but be lenient on trailing data
    return next(iter(per_repo.values()), {}) if len(per_repo) == 1 else {}


def _llm_stage(kind: str, ctx: StageContext, cfg: dict[str, Any]) -> StageResult:
    if kind == "sft":
        from leantrain.llm import SFTTrainer as Trainer
    else:
        from leantrain.llm import GRPOTrainer as Trainer
    recorder = _loss_recorder()
    trainer = Trainer(config=cfg, callbacks=[recorder])
    result = trainer.train(ctx.repos, str(ctx.database), ctx.data_path)
    metrics = _repo_metrics(result, ctx.repo)
    ckpts = result.get("checkpoints") or []
    return StageResult(metrics, recorder.points, ckpts[-1] if ckpts else result.get("model_dir"))


def run_sft(ctx: StageContext) -> StageResult:
    """SFT of the tactic generator on the merged data so far."""
    cfg = _with_defaults(ctx, "sft", model_name="tiny", seed=ctx.seed)
    return _llm_stage("sft", ctx, cfg)


def run_grpo(ctx: StageContext) -> StageResult:
    """GRPO refinement, starting from this repository's SFT model (SFT → GRPO chaining)."""
    sft = ctx.previous.get("sft")
    defaults: dict[str, Any] = {"seed": ctx.seed}
    if sft and sft.get("checkpoint"):
        defaults["model_name"] = sft["checkpoint"]
    cfg = _with_defaults(ctx, f"grpo/{ctx.repo_index:03d}", **defaults)
    if sft and sft.get("checkpoint"):
        cfg["model_name"] = sft["checkpoint"]  # chaining wins over a configured base model
    # one GRPO run per repository, on the merged data so far, from that repository's SFT model
    from leantrain.llm import GRPOTrainer

    recorder = _loss_recorder()
    trainer = GRPOTrainer(config=cfg, callbacks=[recorder])
    from leantrain.export import lifelong_exports

    # the merged export of the repositories so far (only the newest step is (re)written)
    steps = list(lifelong_exports(str(ctx.database), ctx.repos, ctx.data_path, skip=ctx.repos[:-1]))
    result = trainer.train(steps[-1].data_dir)
    metrics = next(iter(result.get("per_repo", {}).values()), {})
    return StageResult(metrics, recorder.points, result.get("model_dir"))


def run_retrieval(ctx: StageContext) -> StageResult:
    """Premise retriever, continuing from the previous repository's checkpoint (with EWC if set)."""
    from leantrain.retrieval import RetrievalConfig, RetrievalTrainer

    cfg = _with_defaults(ctx, "retrieval", model_name="tiny", seed=ctx.seed)
    trainer = RetrievalTrainer(
        config_from_dict(RetrievalConfig, cfg, source="pipeline retrieval config")
    )
    result = trainer.train(ctx.repos, str(ctx.database), ctx.data_path)
    ckpts = result.get("checkpoints") or []
    return StageResult(
        _repo_metrics(result, ctx.repo), [], ckpts[-1] if ckpts else result.get("model_dir")
    )


def run_progress(ctx: StageContext) -> StageResult:
    """Proof-progress regressor on the rows made from the merged data so far."""
    from leantrain.progress import ProgressConfig, ProgressTrainer

    cfg = _with_defaults(ctx, "progress", model_name="tiny", seed=ctx.seed)
    trainer = ProgressTrainer(
        config=config_from_dict(ProgressConfig, cfg, source="pipeline progress config")
    )
    result = trainer.train(ctx.repos, str(ctx.database), ctx.data_path)
    ckpts = result.get("checkpoints") or []
    return StageResult(_repo_metrics(result, ctx.repo), [], ckpts[-1] if ckpts else None)


STAGES: dict[str, Callable[[StageContext], StageResult]] = {
    "sft": run_sft,
    "grpo": run_grpo,
    "retrieval": run_retrieval,
    "progress": run_progress,
}
