"""Configuration of the SFT / GRPO tactic datasets: :class:`PromptArgs` (how a prompt is
written, taken whole by every command that builds prompts: SFT, GRPO, ``llm eval``, the prover),
:class:`SplitArgs` (which split directory of an export dir), :class:`GuardArgs` (the
contamination guard of training) and :class:`TacticDatasetConfig`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from annotated_types import Ge
from leantrain.core.config import AtLeast1, setting
from leantrain.core.groups import Group
from leantrain.tactics.prompts import DEFAULT_MAX_PREMISE_CHARS, DEFAULT_SYSTEM_PROMPT


@dataclass
class PromptArgs(Group):
    """How each prompt is written: mode, system message, tactic rule and retrieved premises."""

    mode: Literal["tactic", "whole"] = setting(
        "tactic",
        "What the generator writes: the next tactic of a proof state ('tactic'), or the whole "
        "proof of a theorem statement ('whole', leantrain.tactics.whole_proof).",
    )
    system_prompt: str | None = setting(
        None,
        "System message of every prompt (default: the model's prompt.json — for 'leantrain prove' "
        "the generator's — else leantrain.tactics' prompt; '': none).",
    )
    first_line_only: bool = setting(
        False, "Keep only the first line of multi-line tactics (LeanDojo-v2's behaviour)."
    )
    retriever: str | None = setting(
        None,
        "Premise retriever (a leantrain retrieval run or saved retriever dir): its num_premises "
        "best accessible premises of each state lead the prompt (needs "
        "leantrain-tactics[retrieval]). Default: the model's prompt.json's, else none; '': none.",
    )
    num_premises: AtLeast1 = setting(10, "Retrieved premises per prompt (with --retriever).")
    max_premise_chars: AtLeast1 = setting(
        DEFAULT_MAX_PREMISE_CHARS,
        "Character budget of the premises in one prompt (a premise that does not fit is skipped).",
    )


@dataclass
class SplitArgs(Group):
    """Which split directory of an export dir is read."""

    split_strategy: Literal["random", "novel_premises"] = setting(
        "random", "Split directory of an export dir."
    )


@dataclass
class GuardArgs(Group):
    """The contamination guard of training (:mod:`leantrain.tactics.contamination`)."""

    eval_set: list[str] = setting(
        [],
        "Evaluation set (.jsonl/.json of statements: miniF2F, DeepSeek-Prover, NuminaMath-LEAN, "
        "Lean Workbook rows or theorem records; repeatable): training refuses when one of its "
        "statements, or one of the data's test split, occurs in the training data.",
    )
    allow_contamination: bool = setting(
        False, "Train even when an evaluation statement occurs in the training data (warned)."
    )


@dataclass
class EvalSplitArgs(Group):
    """Which split of the data is evaluated (``leantrain llm eval``) or proved (``prove``)."""

    split: Literal["train", "val", "test"] = setting("test", "Split evaluated or proved.")


@dataclass
class TacticDatasetConfig(PromptArgs, SplitArgs):
    """How traced theorems become tactic examples (:class:`PromptArgs`, :class:`SplitArgs` and
    the filters below); fill it from Python, a dict, YAML or flags with leantrain.core.config."""

    dedup: bool = setting(False, "Drop repeated (proof state, tactic) pairs, keeping the first.")
    max_samples: AtLeast1 | None = setting(None, "Stop after this many examples (None: all).")
    skip_sorry: bool = setting(True, "Skip tactics that use `sorry` or `admit`.")
    max_state_chars: AtLeast1 | None = setting(None, "Skip states over this many characters.")
    chunk_chars: Annotated[int, Ge(16)] = setting(1 << 20, "Characters per read of a JSON array.")

    def check_group(self) -> None:
        """An empty retriever is none (dropped on purpose); no system prompt is the default."""
        if self.retriever is not None and not self.retriever.strip():
            self.retriever = None
        if self.system_prompt is None:
            self.system_prompt = DEFAULT_SYSTEM_PROMPT
