"""``leantrain retrieval train|evaluate|index|retrieve``, declared for core's registry: groups
(:mod:`.retrieval_config`) and run functions (:mod:`.runner`) are named, not imported."""

from __future__ import annotations

from typing import Any

from leantrain.core.command import Command

_CFG = "leantrain.retrieval.retrieval_config"
_RUN = "leantrain.retrieval.runner"
_LOADS = (f"{_CFG}:ModelArgs", f"{_CFG}:ExportArgs")  # --model, --data, --batch-size …


def _sub(name: str, help: str, *groups: str, **kw: Any) -> Command:
    return Command(name, help, f"{_RUN}:{name}", groups=groups, logger="leantrain.retrieval", **kw)


def register() -> list[Command]:
    """The ``retrieval`` command of the ``leantrain`` CLI (entry point ``leantrain.commands``)."""
    return [
        Command(
            "retrieval",
            "train / evaluate / index / retrieve with the dense premise retriever",
            subcommands=(
                _sub(
                    "train",
                    "train the premise retriever on an export dir, or lifelong on a database",
                    f"{_CFG}:RetrievalConfig",
                    trainer="leantrain.retrieval.retrieval_trainer:RetrievalTrainer",
                    light=(f"{_CFG}:TrainArgs", "leantrain.core.groups:LifelongData"),
                    check=f"{_RUN}:check_train",
                    metrics=("R@1", "R@10", "MRR", "bm25_R@10", "reachable_fraction"),
                ),
                _sub(
                    "evaluate",
                    "R@1, R@k and MRR on the random and novel_premises test splits, beside BM25",
                    *_LOADS,
                    f"{_CFG}:EvaluateArgs",
                    metrics=("R@1", "R@10", "MRR"),
                ),
                _sub(
                    "index",
                    "encode the corpus of an export into a premise index directory",
                    *_LOADS,
                    f"{_CFG}:IndexOutput",
                ),
                _sub(
                    "retrieve",
                    "rank the premises accessible from a file for a proof state",
                    *_LOADS,
                    f"{_CFG}:QueryArgs",
                ),
            ),
        )
    ]
