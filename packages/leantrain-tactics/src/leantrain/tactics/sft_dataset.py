"""SFT rows in TRL's conversational prompt/completion form.

Each row is ``{"prompt": [system, user(state)], "completion": [assistant(tactic)]}``. With this
form TRL's ``SFTTrainer`` (``completion_only_loss``, on by default) puts loss on the completion
only — the tactic and the end-of-turn token. A ``messages`` dataset would train on the prompt too.
"""

from __future__ import annotations

from typing import Any, ClassVar

from leantrain.tactics.dataset_config import TacticDatasetConfig
from leantrain.tactics.examples import TacticExample
from leantrain.tactics.prompts import build_messages
from leantrain.tactics.tactic_dataset import TacticDataset, message_feature
from leantrain.tactics.theorem_source import TheoremSource


class SFTDataset(TacticDataset):
    """Supervised rows ``prompt`` (system + state) → ``completion`` (the tactic)."""

    kind: ClassVar[str] = "sft"

    def make_row(self, example: TacticExample) -> dict[str, Any]:
        return {
            "prompt": build_messages(example.state, self.config.system_prompt),
            "completion": [{"role": "assistant", "content": example.tactic}],
        }

    @classmethod
    def features(cls) -> Any:
        import datasets

        return datasets.Features({"prompt": message_feature(), "completion": message_feature()})


def create_sft_dataset(
    path: TheoremSource,
    split: str = "train",
    max_samples: int | None = None,
    *,
    config: TacticDatasetConfig | None = None,
    streaming: bool = False,
) -> SFTDataset:
    """SFT dataset from an export dir (``<dir>/<split_strategy>/<split>.json``), a split file
    (``.json`` array or ``.jsonl``) or a list of theorems.

    ``max_samples`` overrides ``config.max_samples``. Bad records raise ``DataError`` naming the
    file; a dataset left empty by the filters raises ``DataError`` saying what removed what.
    """
    return SFTDataset(path, split, max_samples, config=config, streaming=streaming)
