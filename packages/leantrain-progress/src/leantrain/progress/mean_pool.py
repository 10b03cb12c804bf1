"""The mean-pooled regressor of the ``tiny`` model (see :mod:`leantrain.progress.tiny_model`).

Importing this module registers the model type ``leantrain-progress-mean-pool`` with
``AutoConfig`` and ``AutoModelForSequenceClassification``, so a saved model loads with
``from_pretrained`` and no remote code; the trainer and the predictor import it before loading.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from transformers import AutoConfig, AutoModelForSequenceClassification, BertConfig
from transformers.modeling_outputs import SequenceClassifierOutput
from transformers.models.bert.modeling_bert import BertModel, BertPreTrainedModel


class MeanPoolConfig(BertConfig):
    """A ``BertConfig`` whose model averages the encoder outputs over the tokens."""

    model_type = "leantrain-progress-mean-pool"


class MeanPoolRegressor(BertPreTrainedModel):
    """BERT encoder, mean over the unpadded tokens, a two-layer head with one output."""

    config_class = MeanPoolConfig

    def __init__(self, config: MeanPoolConfig) -> None:
        super().__init__(config)
        self.num_labels = config.num_labels
        self.bert = BertModel(config, add_pooling_layer=False)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.head = nn.Sequential(
            nn.Linear(config.hidden_size, config.hidden_size),
            nn.GELU(),
            nn.Linear(config.hidden_size, config.num_labels),
        )
        self.post_init()

    def forward(
        self,
        input_ids: Any = None,
        attention_mask: Any = None,
        token_type_ids: Any = None,
        labels: Any = None,
        **kwargs: Any,
    ) -> SequenceClassifierOutput:
        kwargs.pop("num_items_in_batch", None)
        out = self.bert(
            input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            return_dict=True,
            **kwargs,
        )
        hidden = out.last_hidden_state
        if attention_mask is None:
            attention_mask = torch.ones(hidden.shape[:2], device=hidden.device)
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        logits = self.head(self.dropout(pooled))
        loss = None
        if labels is not None:  # the seed's regression loss; the trainer passes its own
            loss = nn.functional.mse_loss(logits.reshape(-1), labels.reshape(-1).float())
        return SequenceClassifierOutput(loss=loss, logits=logits)


AutoConfig.register(MeanPoolConfig.model_type, MeanPoolConfig, exist_ok=True)
AutoModelForSequenceClassification.register(MeanPoolConfig, MeanPoolRegressor, exist_ok=True)
