"""GRPO rows: the prompt, and what a reward needs to judge a generated tactic.

Columns: ``prompt`` (system + state messages), ``problem`` (the state), ``reference`` (the
traced tactic), the theorem's identity ``url, commit, file_path, full_name, tactic_index``,
``proof_prefix`` (the theorem's earlier tactics, verbatim, to replay the proof in Lean) and
``premises`` (full names of the premises annotated in the reference tactic). TRL passes every
column to the reward functions as keyword arguments.
"""

from __future__ import annotations

from typing import Any, ClassVar

from leantrain.tactics.dataset_config import TacticDatasetConfig
from leantrain.tactics.examples import TacticExample
from leantrain.tactics.premises import PremiseSource
from leantrain.tactics.tactic_dataset import TacticDataset, message_feature
from leantrain.tactics.theorem_source import TheoremSource


class RLDataset(TacticDataset):
    """Rows for GRPO: prompt, problem, reference tactic, theorem identity, proof prefix, premises."""

    kind: ClassVar[str] = "rl"

    def make_row(self, example: TacticExample) -> dict[str, Any]:
        theorem = example.theorem
        return {
            "prompt": self.messages(example),
            "problem": example.state,
            "reference": example.tactic,
            "url": theorem.url,
            "commit": theorem.commit,
            "file_path": theorem.file_path,
            "full_name": theorem.full_name,
            "tactic_index": example.tactic_index,
            "proof_prefix": list(example.proof_prefix),
            "premises": list(example.premises),
        }

    @classmethod
    def features(cls) -> Any:
        import datasets

        string = datasets.Value("string")
        return datasets.Features(
            {
                "prompt": message_feature(),
                "problem": string,
                "reference": string,
                "url": string,
                "commit": string,
                "file_path": string,
                "full_name": string,
                "tactic_index": datasets.Value("int64"),
                "proof_prefix": datasets.List(string),
                "premises": datasets.List(string),
            }
        )


def create_rl_dataset(
    path: TheoremSource,
    split: str = "train",
    max_samples: int | None = None,
    *,
    config: TacticDatasetConfig | None = None,
    streaming: bool = False,
    premise_source: PremiseSource | None = None,
) -> RLDataset:
    """GRPO dataset from an export dir, a split file or a list of theorems (see
    :func:`~leantrain.tactics.sft_dataset.create_sft_dataset` for ``path``, premises and
    errors)."""
    return RLDataset(
        path, split, max_samples, config=config, streaming=streaming, premise_source=premise_source
    )
