"""``PremiseRetriever``: a dense ReProver-style retriever as a Lightning module.

Contexts (proof states) and premises share one encoder; an embedding is the masked mean of
the last hidden states, L2-normalised, so a dot product is a cosine similarity — or, for a
sentence-transformers model directory, the pooling (mean / cls / max …) and normalisation that
its ``modules.json`` defines. Both losses see in-batch negatives: every context is scored
against every premise of the batch (the other contexts' positives and all sampled negatives).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lightning as L
import torch
import torch.nn.functional as F
from leantrain.core.config import config_fields
from leantrain.retrieval.attention import use_t5_sdpa
from leantrain.retrieval.context import LEGACY_CONTEXT_FORMAT, format_context
from leantrain.retrieval.encoder import (
    build_encoder,
    fuse_activations,
    is_retriever_dir,
    load_encoder,
    parse_pooling,
    pool,
    save_encoder,
    sentence_transformers_pooling,
)
from leantrain.retrieval.ewc import EWC
from leantrain.retrieval.losses import info_nce_loss, mse_similarity_loss
from leantrain.retrieval.retrieval_config import RetrieverArgs


class PremiseRetriever(L.LightningModule):
    """Encoder + pooling (mean by default) + L2 norm; MSE (ReProver) or InfoNCE loss over the
    batch's similarity matrix (in-batch negatives); EWC penalty."""

    def __init__(
        self,
        encoder: Any,
        tokenizer: Any,
        args: RetrieverArgs | None = None,
        *,
        ewc: EWC | None = None,
        pooling: str = "mean",
        normalize: bool = True,
        **overrides: Any,
    ) -> None:
        """``args`` (or keyword ``overrides`` of its fields: ``learning_rate=1e-3``) are the
        hyper-parameters, recorded in ``hparams``; ``pooling`` and ``normalize`` belong to the
        encoder (a sentence-transformers directory says which) and are saved with it."""
        super().__init__()
        self.args = dataclasses.replace(args or RetrieverArgs(), **overrides)
        self.save_hyperparameters(dataclasses.asdict(self.args))
        self.encoder = (
            encoder.train()
        )  # from_pretrained returns eval mode; Lightning keeps modes as given
        fuse_activations(self.encoder)
        use_t5_sdpa(self.encoder)
        self.tokenizer = tokenizer
        self.pooling = "+".join(parse_pooling(pooling))
        self._pool_modes = parse_pooling(pooling)
        self.normalize = bool(normalize)
        self.ewc = ewc if ewc is not None else EWC()
        self._corpus_emb: torch.Tensor | None = None
        self._val_sums: torch.Tensor | None = None
        self.index: Any = None

    # -- construction / persistence -----------------------------------------------------------
    @classmethod
    def from_name(
        cls,
        name: str,
        *,
        tiny_d_model: int = 64,
        tiny_layers: int = 2,
        allow_code: bool = False,
        **kwargs: Any,
    ) -> PremiseRetriever:
        """A retriever from a registered encoder name, a HF directory (a sentence-transformers
        one with its own pooling and normalisation) or a saved retriever (or, with
        ``allow_code`` / ``LEANTRAIN_ALLOW_CODE=1``, a ``module:attr`` encoder builder)."""
        if is_retriever_dir(name):
            return cls.from_pretrained(name, **kwargs)
        encoder, tokenizer = build_encoder(
            name, allow_code=allow_code, d_model=tiny_d_model, num_layers=tiny_layers
        )
        return cls(encoder, tokenizer, **{**_st_kwargs(name), **kwargs})

    @classmethod
    def from_pretrained(
        cls, path: str | Path, args: RetrieverArgs | None = None, **overrides: Any
    ) -> PremiseRetriever:
        """Reload a directory written by :meth:`save_pretrained` (no pickle, no Lightning),
        with its EWC state (``ewc/``) when it has one — or start from a plain Hugging Face
        encoder directory (``config.json`` + weights; a sentence-transformers directory keeps
        the pooling and normalisation of its ``modules.json``). ``args`` replaces the saved
        hyper-parameters; keyword ``overrides`` change some."""
        if not is_retriever_dir(path):
            from leantrain.retrieval.encoder import load_hf_encoder

            if not Path(path).is_dir():
                from leantrain.core.errors import CheckpointError

                raise CheckpointError(
                    f"{path}: not a directory",
                    hint="give a saved retriever or a local Hugging Face model directory",
                )
            encoder, tokenizer = load_hf_encoder(path)
            return cls(encoder, tokenizer, args, **{**_st_kwargs(path), **overrides})
        encoder, tokenizer, meta = load_encoder(path)
        saved = {k: meta[k] for k in config_fields(RetrieverArgs) if k in meta}
        saved.setdefault("context_format", LEGACY_CONTEXT_FORMAT)  # saved before the option
        encoding: dict[str, Any] = {k: meta[k] for k in ("pooling", "normalize") if k in meta}
        return cls(
            encoder,
            tokenizer,
            args or RetrieverArgs(**saved),
            ewc=EWC.load(Path(path) / "ewc"),
            **(encoding | overrides),
        )

    def save_pretrained(self, path: str | Path) -> Path:
        """Write the encoder (HF, safetensors), tokenizer, ``retriever.json`` and, when EWC is
        active, ``ewc/`` (safetensors), atomically."""
        from leantrain.core.atomic import atomic_directory

        path = Path(path)
        with atomic_directory(path) as tmp:
            save_encoder(
                self.encoder,
                self.tokenizer,
                tmp,
                {
                    "pooling": self.pooling,
                    "normalize": self.normalize,
                    **dataclasses.asdict(self.args),
                },
            )
            if self.ewc.active:
                self.ewc.save(tmp / "ewc")
        return path

    @property
    def _ddp_params_and_buffers_to_ignore(self) -> list[str]:
        """DDP must not broadcast the EWC buffers at every step (each rank loaded them)."""
        return [f"ewc.{name}" for name, _ in self.ewc.named_buffers()]

    # -- encoding -----------------------------------------------------------------------------
    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Pooled (by default: masked mean) and, unless the model says otherwise, L2-normalised
        embeddings, one row per sequence."""
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        pooled = pool(hidden, attention_mask, self._pool_modes).float()
        return F.normalize(pooled, dim=-1) if self.normalize else pooled

    def encode_texts(
        self,
        texts: Sequence[str],
        *,
        max_len: int | None = None,
        batch_size: int | None = None,
        precision: str | None = None,
    ) -> torch.Tensor:
        """Embeddings of ``texts`` (float32, on CPU, in input order): tokenized once, encoded
        in length-sorted batches under a token budget, in inference mode, with bf16 autocast
        where the hardware has native bf16 (``precision``: ``auto``, ``bf16``, ``fp32``);
        see :mod:`leantrain.retrieval.encoding`."""
        from leantrain.retrieval.encoding import encode

        return encode(
            self,
            texts,
            max_len=max_len or self.args.premise_max_len,
            batch_size=batch_size or self.args.eval_batch_size,
            precision=precision,
        )

    def encode_contexts(
        self, states: Sequence[str], *, batch_size: int | None = None
    ) -> torch.Tensor:
        """Query embeddings of proof states: formatted by ``context_format`` (as in training)
        and cut at ``context_max_len`` tokens."""
        return self.encode_texts(
            [format_context(s, self.args.context_format) for s in states],
            max_len=self.args.context_max_len,
            batch_size=batch_size,
        )

    @property
    def embedding_dim(self) -> int:
        hidden = int(
            self.encoder.config.hidden_size
            if hasattr(self.encoder.config, "hidden_size")
            else self.encoder.config.d_model
        )
        return hidden * len(self._pool_modes)

    # -- training -----------------------------------------------------------------------------
    def retrieval_loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """The contrastive loss of one batch (without the EWC penalty)."""
        ctx = self(batch["context_ids"], batch["context_mask"])
        prem = self(batch["premise_ids"], batch["premise_mask"])
        sim = ctx @ prem.t()
        if self.args.loss == "infonce":
            return info_nce_loss(sim, batch["label"], self.args.temperature)
        return mse_similarity_loss(sim, batch["label"])

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss = self.retrieval_loss(batch)
        self.log("train_loss", loss, prog_bar=True, batch_size=batch["label"].shape[0])
        if self.args.ewc_lambda > 0 and self.ewc.active:
            penalty = self.ewc.penalty(self.encoder)
            self.log("ewc_penalty", penalty, batch_size=batch["label"].shape[0])
            loss = loss + self.args.ewc_lambda * penalty
        return loss

    def configure_optimizers(self) -> Any:
        opt = torch.optim.AdamW(
            self.parameters(), lr=self.args.learning_rate, weight_decay=self.args.weight_decay
        )
        total = (
            getattr(self.trainer, "estimated_stepping_batches", None)
            if self._trainer is not None
            else None
        )
        total = int(total) if total and math.isfinite(total) else None
        warmup = max(0, self.args.warmup_steps)

        def schedule(step: int) -> float:
            if warmup and step < warmup:
                return (step + 1) / (warmup + 1)
            if total and total > warmup:  # linear decay to 0 after warm-up, as ReProver's scheduler
                return max(0.0, (total - step) / (total - warmup))
            return 1.0

        sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    # -- validation (R@1, R@10, MRR on the val split, premises re-encoded each time) ---------
    def on_validation_epoch_start(self) -> None:
        corpus = self.trainer.datamodule.corpus
        self._corpus_emb = self.encode_texts(corpus.texts(), max_len=self.args.premise_max_len).to(
            self.device
        )
        self._val_sums = torch.zeros(4, device=self.device)  # R@1, R@10, MRR, count

    def validation_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> None:
        from leantrain.retrieval.metrics import recall_at_k, reciprocal_rank

        assert self._corpus_emb is not None and self._val_sums is not None
        examples = self.trainer.datamodule.val_examples
        ctx = self(batch["context_ids"], batch["context_mask"])
        scores = (ctx @ self._corpus_emb.t()).masked_fill(
            ~batch["accessible"].to(self.device), float("-inf")
        )
        k = min(10, scores.shape[1])
        top = scores.topk(k, dim=1).indices.cpu().tolist()
        for row, ex_i in zip(top, batch["example_index"].tolist()):
            pos = examples[ex_i].positives
            self._val_sums += torch.tensor(
                [
                    recall_at_k(row, pos, 1),
                    recall_at_k(row, pos, 10),
                    reciprocal_rank(row, pos),
                    1.0,
                ],
                device=self.device,
            )

    def on_validation_epoch_end(self) -> None:
        assert self._val_sums is not None
        sums = self.trainer.strategy.reduce(self._val_sums, reduce_op="sum")
        n = max(float(sums[3]), 1.0)
        self.log_dict(
            {"val_R@1": sums[0] / n, "val_R@10": sums[1] / n, "val_MRR": sums[2] / n},
            prog_bar=True,
            sync_dist=False,
            rank_zero_only=False,
        )
        self._corpus_emb = None

    # -- retrieval ----------------------------------------------------------------------------
    def index_corpus(
        self, corpus: Any, *, cache_dir: str | Path | None = None, batch_size: int | None = None
    ) -> Any:
        """Encode ``corpus`` into a :class:`~leantrain.retrieval.index.PremiseIndex` (reused
        from ``cache_dir`` when the encoder and corpus are unchanged) and keep it for
        :meth:`retrieve`."""
        from leantrain.retrieval.index import PremiseIndex

        self.index = PremiseIndex.build(self, corpus, cache_dir=cache_dir, batch_size=batch_size)
        return self.index

    def retrieve(
        self, state: str, file_path: str, k: int = 10, position: Sequence[int] | None = None
    ) -> list[tuple[Any, float]]:
        """The ``k`` premises accessible from ``file_path`` ranked for ``state`` (needs
        :meth:`index_corpus` first): ``[(PremiseEntry, score), …]``."""
        if self.index is None:
            from leantrain.core.errors import LeanTrainError

            raise LeanTrainError(
                "no premise index", hint="call index_corpus(corpus) before retrieve()"
            )
        return self.index.retrieve(state, file_path, k, position=position)


def _st_kwargs(path: str | Path) -> dict[str, Any]:
    """``pooling`` / ``normalize`` of a sentence-transformers directory (empty otherwise)."""
    local = Path(path)
    st = sentence_transformers_pooling(local) if local.is_dir() else None
    if st is None:
        return {}
    import logging

    logging.getLogger("leantrain.retrieval").info(
        "%s: sentence-transformers model: pooling %s, normalize %s",
        path,
        st["pooling"],
        st["normalize"],
    )
    return {"pooling": st["pooling"], "normalize": st["normalize"]}
