import random

import torch
from leantrain.core.schemas import CorpusFile
from leantrain.retrieval import (
    Corpus,
    RetrievalDataModule,
    RetrievalExample,
    build_tiny_encoder,
    sample_negatives,
)


def _corpus():
    def f(path, imports, names):
        return CorpusFile.model_validate(
            {
                "path": path,
                "imports": imports,
                "premises": [
                    {"full_name": n, "code": n, "start": [i + 1, 1], "end": [i + 1, 9]}
                    for i, n in enumerate(names)
                ],
            }
        )

    return Corpus(
        [
            f("A.lean", [], ["a0", "a1", "a2", "a3"]),
            f("B.lean", ["A.lean"], ["b0", "b1", "b2"]),
            f("C.lean", ["B.lean"], ["c0", "c1"]),
            f("Z.lean", [], ["z0", "z1"]),
        ]
    )


def test_negatives_never_include_a_positive_and_come_partly_from_the_positive_file():
    corpus = _corpus()
    pos = [corpus.find("a0"), corpus.find("a1"), corpus.find("b0")]
    ex = RetrievalExample("⊢ goal", "C.lean", (100, 1), tuple(pos))
    rng = random.Random(0)
    a_file = set(corpus.file_premises["A.lean"])
    accessible = set(corpus.accessible_ids("C.lean", (100, 1)).tolist())
    for _ in range(300):
        negs = sample_negatives(corpus, ex, pos[0], 3, 1, rng)
        assert len(negs) == 3 and len(set(negs)) == 3
        assert not set(negs) & set(pos)
        assert negs[0] in a_file  # the in-file negative, from the positive's own file
        assert set(negs) <= accessible  # Z.lean is not imported by C.lean


def test_negatives_fill_from_the_rest_when_too_few_are_accessible():
    corpus = _corpus()
    ex = RetrievalExample("⊢ g", "A.lean", (3, 1), (corpus.find("a0"),))  # only a0, a1 accessible
    negs = sample_negatives(corpus, ex, corpus.find("a0"), 3, 1, random.Random(1))
    assert len(negs) == 3 and corpus.find("a0") not in negs


def test_batches_label_every_positive_in_the_batch(synthetic_export):
    _, tok = build_tiny_encoder(32, 1)
    dm = RetrievalDataModule(
        synthetic_export, tok, batch_size=4, num_negatives=3, context_max_len=32, premise_max_len=48
    )
    dm.setup("fit")
    ds = dm.train_dataset()
    # two items sharing a positive premise: each context must be labelled positive on both columns
    by_pos = {}
    for i, (_ex, p) in enumerate(ds.pairs):
        by_pos.setdefault(p, []).append(i)
    i, j = next(v for v in by_pos.values() if len(v) >= 2)[:2]
    k = next(x for x in range(len(ds)) if ds.pairs[x][1] != ds.pairs[i][1])
    batch = dm.collate_train([ds[i], ds[j], ds[k]])
    assert batch["premise_ids"].shape[0] == 3 * 4 and batch["label"].shape == (3, 12)
    lab = batch["label"]
    assert (
        lab[0, 0] == 1 and lab[0, 1] == 1 and lab[1, 0] == 1 and lab[0, 2] == 0 and lab[2, 2] == 1
    )
    assert lab[:, 3:].sum() == 0  # negatives are never positives
    assert batch["context_ids"].shape[1] <= 32
    eval_batch = dm.collate_eval([{"example_index": 0}, {"example_index": 1}])
    assert (
        eval_batch["accessible"].shape == (2, len(dm.corpus))
        and eval_batch["accessible"].dtype == torch.bool
    )


def test_datamodule_on_the_sample_export(sample_export):
    _, tok = build_tiny_encoder(32, 1)
    dm = RetrievalDataModule(sample_export, tok, batch_size=2)
    dm.setup("fit")
    assert dm.train_examples and dm.val_examples and len(dm.corpus) > 10
    batch = next(iter(dm.train_dataloader()))
    assert batch["label"].shape[0] <= 2
