"""Configuration of ``leantrain llm eval`` / ``run({"algorithm": "eval", …})`` (no heavy imports)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EvalConfig:
    """Which model to evaluate on which split, and how."""

    model_name: str = field(
        default="tiny", metadata={"help": "Model dir, adapter dir, run dir, 'tiny' or hub id."}
    )
    data_path: str | None = field(
        default=None, metadata={"help": "Export dir or split .json file to evaluate on."}
    )
    split: str = field(default="test", metadata={"help": "Split to evaluate: train, val or test."})
    split_strategy: str = field(
        default="random", metadata={"help": "'random' or 'novel_premises'."}
    )
    eval_k: int = field(default=4, metadata={"help": "k of top-k accuracy (beam candidates)."})
    eval_max_new_tokens: int = field(default=48, metadata={"help": "Longest tactic generated."})
    max_eval_samples: int | None = field(
        default=64, metadata={"help": "Evaluate at most this many examples."}
    )
    system_prompt: str | None = field(
        default=None, metadata={"help": "System message (default: the training one)."}
    )
    retriever: str | None = field(
        default=None,
        metadata={
            "help": "Premise retriever whose top premises lead each prompt: give the one the "
            "model was trained with (--retriever of 'leantrain sft')."
        },
    )
    num_premises: int = field(default=10, metadata={"help": "Retrieved premises per prompt."})
    max_premise_chars: int = field(
        default=2000, metadata={"help": "Character budget of the premises in one prompt."}
    )
