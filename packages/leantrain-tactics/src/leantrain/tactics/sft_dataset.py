"""SFT rows in TRL's conversational prompt/completion form.

Each row is ``{"prompt": [system, user(state)], "completion": [assistant(tactic)]}``. With this
form TRL's ``SFTTrainer`` (``completion_only_loss``, on by default) puts loss on the completion
only — the tactic and the end-of-turn token. A ``messages`` dataset would train on the prompt too.
"""

from __future__ import annotations

from typing import Any, ClassVar

from leantrain.tactics.dataset_config import TacticDatasetConfig
from leantrain.tactics.examples import TacticExample
from leantrain.tactics.premises import PremiseSource
from leantrain.tactics.tactic_dataset import TacticDataset, message_feature
from leantrain.tactics.theorem_source import TheoremSource


class SFTDataset(TacticDataset):
    """Supervised rows ``prompt`` (system + state) → ``completion`` (the tactic)."""

    kind: ClassVar[str] = "sft"

    def make_row(self, example: TacticExample) -> dict[str, Any]:
        return {
            "prompt": self.messages(example),
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
    premise_source: PremiseSource | None = None,
) -> SFTDataset:
    """SFT dataset from an export dir (``<dir>/<split_strategy>/<split>.json``), a split file
    (``.json`` array or ``.jsonl``) or a list of theorems.

    ``max_samples`` overrides ``config.max_samples``. With ``config.retriever`` each prompt is led
    by the retrieved premises of its state (``premise_source`` replaces the retriever: any object
    with ``premises(queries)``, see :mod:`leantrain.tactics.premises`). Bad records raise ``DataError`` naming the
    file; a dataset left empty by the filters raises ``DataError`` saying what removed what.
    """
    return SFTDataset(
        path, split, max_samples, config=config, streaming=streaming, premise_source=premise_source
    )
