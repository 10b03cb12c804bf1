"""The Lightning data module: training pairs with sampled negatives, validation examples.

Training follows ReProver: one item per (tactic, positive premise); each item adds
``num_negatives`` negatives sampled from the premises accessible to the theorem, of which
``num_in_file_negatives`` come from the positive premise's own file. A negative is never one of
the tactic's positives. The label matrix of a batch marks, for each context, every premise of
the batch (in-batch positives of other contexts and all negatives included) that is one of its
positives.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from leantrain.core.errors import DataError
from leantrain.retrieval.context import format_context
from leantrain.retrieval.corpus import Corpus
from leantrain.retrieval.examples import RetrievalExample, load_examples
from leantrain.retrieval.retrieval_config import DataModuleArgs
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("leantrain.retrieval")


def sample_negatives(
    corpus: Corpus,
    ex: RetrievalExample,
    pos: int,
    num_negatives: int,
    num_in_file: int,
    rng: random.Random,
) -> list[int]:
    """Negatives for ``ex`` with positive ``pos``: in-file ones first, then accessible ones.

    Never returns a positive of ``ex``. When too few accessible premises remain, the rest of
    the corpus fills in (a tiny corpus must still give full batches).
    """
    positives = set(ex.positives)
    accessible = corpus.accessible_ids(ex.file_path, ex.theorem_pos)
    acc_set = set(accessible.tolist())
    pos_file = corpus.premises[pos].path
    in_file = [
        i for i in corpus.file_premises.get(pos_file, ()) if i not in positives and i in acc_set
    ]
    chosen = rng.sample(in_file, min(num_in_file, len(in_file)))
    taken = positives | set(chosen)
    need = num_negatives - len(chosen)
    if need > 0:
        pool = [i for i in accessible.tolist() if i not in taken]
        if len(pool) < need:
            pool += [i for i in range(len(corpus)) if i not in taken and i not in acc_set]
        chosen += rng.sample(pool, min(need, len(pool)))
    return chosen


class TrainPairs(Dataset):
    """Training items; negatives are drawn afresh each time an item is read.

    ``sample_by="pair"`` (ReProver): one item per (tactic, positive premise), so an epoch is
    one pass over all pairs and a tactic with five premises is seen five times.
    ``sample_by="tactic"``: one item per tactic, its positive drawn at random each time, so an
    epoch is one pass over the tactics — shorter (671 items instead of 1,546 on the LB4 head's
    random train split) and every tactic weighs the same.
    """

    def __init__(
        self,
        corpus: Corpus,
        examples: list[RetrievalExample],
        num_negatives: int,
        num_in_file: int,
        seed: int,
        sample_by: str = "pair",
    ) -> None:
        self.corpus = corpus
        self.sample_by = sample_by
        self.pairs: list[tuple[RetrievalExample, int | None]] = (
            [(ex, p) for ex in examples for p in ex.positives]
            if sample_by == "pair"
            else [(ex, None) for ex in examples]
        )
        self.num_negatives = num_negatives
        self.num_in_file = num_in_file
        self.rng = random.Random(seed)

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, i: int) -> dict[str, Any]:
        ex, pos = self.pairs[i]
        if pos is None:
            pos = self.rng.choice(ex.positives)
        negs = sample_negatives(
            self.corpus, ex, pos, self.num_negatives, self.num_in_file, self.rng
        )
        return {"context": ex.context, "pos": pos, "negs": negs, "positives": ex.positives}


class EvalExamples(Dataset):
    """Examples for R@k: the context, its positives and where it sits (for accessibility)."""

    def __init__(self, examples: list[RetrievalExample]) -> None:
        self.examples = examples

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"example_index": i}


class RetrievalDataModule(L.LightningDataModule):
    """Reads ``corpus.jsonl`` and ``<split>/{train,val,test}.json`` of an export directory."""

    def __init__(
        self,
        data_dir: str | Path,
        tokenizer: Any,
        args: DataModuleArgs | None = None,
        *,
        corpus: Corpus | None = None,
        **overrides: Any,
    ) -> None:
        """``args`` (or keyword ``overrides`` of its fields: ``batch_size=2``) are recorded in
        ``hparams``; ``corpus`` is read from ``data_dir`` unless given."""
        super().__init__()
        self.args = dataclasses.replace(args or DataModuleArgs(), **overrides)
        self.save_hyperparameters(dataclasses.asdict(self.args))
        self.data_dir = Path(data_dir)
        self.tokenizer = tokenizer
        self.corpus = corpus
        self.train_examples: list[RetrievalExample] = []
        self.val_examples: list[RetrievalExample] = []

    def setup(self, stage: str | None = None) -> None:
        if self.train_examples:  # fit, then validate: read the data once
            return
        if self.corpus is None:
            self.corpus = Corpus.from_export(self.data_dir)
        split_dir = self.data_dir / self.args.split
        if not split_dir.is_dir():
            raise DataError(
                split_dir,
                "split directory not found",
                hint="point --data at an export directory (random/, novel_premises/)",
            )
        self.train_examples = load_examples(split_dir / "train.json", self.corpus)
        if not self.train_examples:
            raise DataError(
                split_dir / "train.json",
                "no tactic has an annotated premise that is in the corpus",
                hint="the retriever trains on annotated_tactic premises",
            )
        val = split_dir / "val.json"
        self.val_examples = load_examples(val, self.corpus) if val.is_file() else []
        if not self.val_examples:
            log.info("no validation examples in %s: validating on the training examples", split_dir)
            self.val_examples = self.train_examples[: max(1, min(len(self.train_examples), 256))]
        log.info(
            "retrieval data: %d premises, %d train / %d val examples",
            len(self.corpus),
            len(self.train_examples),
            len(self.val_examples),
        )

    # -- batches ------------------------------------------------------------------------------
    def tokenize(self, texts: list[str], max_len: int) -> dict[str, torch.Tensor]:
        enc = self.tokenizer(
            texts, padding="longest", truncation=True, max_length=max_len, return_tensors="pt"
        )
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}

    def tokenize_contexts(self, states: list[str]) -> dict[str, torch.Tensor]:
        """Proof states as the retriever reads them (``context_format``, ``context_max_len``):
        the same text :meth:`PremiseRetriever.encode_contexts` encodes at evaluation."""
        return self.tokenize(
            [format_context(s, self.args.context_format) for s in states], self.args.context_max_len
        )

    def collate_train(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        assert self.corpus is not None
        premise_ids = [it["pos"] for it in items] + [n for it in items for n in it["negs"]]
        label = torch.zeros(len(items), len(premise_ids))
        for i, it in enumerate(items):
            pos = set(it["positives"])
            for j, pid in enumerate(premise_ids):
                if pid in pos:
                    label[i, j] = 1.0
        ctx = self.tokenize_contexts([it["context"] for it in items])
        prem = self.tokenize(self.corpus.texts(premise_ids), self.args.premise_max_len)
        return {
            "context_ids": ctx["input_ids"],
            "context_mask": ctx["attention_mask"],
            "premise_ids": prem["input_ids"],
            "premise_mask": prem["attention_mask"],
            "label": label,
            "premise_index": torch.tensor(premise_ids),
        }

    def collate_eval(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        idx = [it["example_index"] for it in items]
        exs = [self.val_examples[i] for i in idx]
        ctx = self.tokenize_contexts([e.context for e in exs])
        assert self.corpus is not None
        mask = np.stack([self.corpus.accessible_mask(e.file_path, e.theorem_pos) for e in exs])
        return {
            "context_ids": ctx["input_ids"],
            "context_mask": ctx["attention_mask"],
            "accessible": torch.from_numpy(mask),
            "example_index": torch.tensor(idx),
        }

    def train_dataset(self) -> TrainPairs:
        assert self.corpus is not None
        return TrainPairs(
            self.corpus,
            self.train_examples,
            self.args.num_negatives,
            self.args.num_in_file_negatives,
            self.args.seed,
            self.args.sample_by,
        )

    def train_dataloader(self) -> DataLoader:
        return DataLoader(
            self.train_dataset(),
            batch_size=self.args.batch_size,
            shuffle=True,
            collate_fn=self.collate_train,
            num_workers=self.args.num_workers,
            drop_last=False,
        )

    def val_dataloader(self) -> DataLoader:
        return DataLoader(
            EvalExamples(self.val_examples),
            batch_size=self.args.eval_batch_size,
            shuffle=False,
            collate_fn=self.collate_eval,
            num_workers=self.args.num_workers,
        )
