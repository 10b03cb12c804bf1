import importlib.util

import pytest
import torch
from leantrain.core.errors import CheckpointError, MissingDependencyError
from leantrain.core.schemas import CorpusFile
from leantrain.retrieval import Corpus, PremiseIndex, PremiseRetriever, evaluate_retriever


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return PremiseRetriever.from_name(
        "tiny", tiny_d_model=32, tiny_layers=1, context_max_len=64, premise_max_len=64
    )


@pytest.fixture(scope="module")
def corpus(synthetic_export):
    return Corpus.from_export(synthetic_export)


def test_index_save_load_gives_identical_rankings(tmp_path, model, corpus):
    index = model.index_corpus(corpus, cache_dir=tmp_path / "idx")
    assert {p.name for p in (tmp_path / "idx").iterdir()} == {"index.safetensors", "index.json"}
    queries = model.encode_texts(["x : Nat\n⊢ foo x = bar x", "⊢ a = b", "n : Nat ⊢ n + 0 = n"])
    paths = ["Syn/Main.lean", "Syn/File1.lean", "Syn/Main.lean"]
    loaded = PremiseIndex.load(tmp_path / "idx", corpus, model)
    assert torch.equal(loaded.embeddings, index.embeddings)
    assert index.search(queries, paths, 10) == loaded.search(queries, paths, 10)


def test_retrieve_returns_only_accessible_premises_ranked(model, corpus):
    model.index_corpus(corpus)
    hits = model.retrieve("x : Nat\n⊢ foo x = bar x", "Syn/File1.lean", k=50)
    allowed = {corpus.premises[i].full_name for i in corpus.accessible_ids("Syn/File1.lean")}
    assert hits and {p.full_name for p, _ in hits} <= allowed
    assert len(hits) == len(allowed)  # File1 sees File0 and its own premises only
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)


def test_index_is_reused_until_the_encoder_changes(tmp_path, corpus, monkeypatch):
    torch.manual_seed(1)
    m = PremiseRetriever.from_name("tiny", tiny_d_model=32, tiny_layers=1, premise_max_len=64)
    calls = []
    real = m.encode_texts
    monkeypatch.setattr(
        m, "encode_texts", lambda texts, **kw: calls.append(len(texts)) or real(texts, **kw)
    )
    m.index_corpus(corpus, cache_dir=tmp_path / "i")
    m.index_corpus(corpus, cache_dir=tmp_path / "i")
    assert calls == [len(corpus)]  # the second call loaded the saved index
    with torch.no_grad():
        next(m.encoder.parameters()).add_(0.01)
    m.index_corpus(corpus, cache_dir=tmp_path / "i")
    assert calls == [len(corpus), len(corpus)]  # weights changed: re-encoded


def test_mismatched_index_is_a_clear_error(tmp_path, model, corpus):
    model.index_corpus(corpus, cache_dir=tmp_path / "idx")
    other = Corpus(
        [
            CorpusFile.model_validate(
                {
                    "path": "X.lean",
                    "imports": [],
                    "premises": [{"full_name": "x", "code": "x", "start": [1, 1], "end": [1, 2]}],
                }
            )
        ]
    )
    with pytest.raises(CheckpointError, match="different corpus"):
        PremiseIndex.load(tmp_path / "idx", other, model)
    torch.manual_seed(5)
    stranger = PremiseRetriever.from_name(
        "tiny", tiny_d_model=32, tiny_layers=1, premise_max_len=64
    )
    with pytest.raises(CheckpointError, match="different encoder"):
        PremiseIndex.load(tmp_path / "idx", corpus, stranger)
    with pytest.raises(CheckpointError, match="no premise index"):
        PremiseIndex.load(tmp_path / "nothing", corpus, model)


@pytest.mark.skipif(importlib.util.find_spec("faiss") is not None, reason="faiss is installed")
def test_faiss_without_the_extra_says_how_to_install(model, corpus):
    index = model.index_corpus(corpus)
    with pytest.raises(MissingDependencyError, match=r"pip install 'leantrain-retrieval\[faiss\]'"):
        index.enable_faiss()


@pytest.mark.skipif(importlib.util.find_spec("faiss") is None, reason="faiss not installed")
def test_faiss_search_equals_exact_search(model, corpus):  # pragma: no cover - needs the extra
    index = model.index_corpus(corpus)
    q = model.encode_texts(["⊢ a = b", "x : Nat ⊢ x = x"])
    exact = index.search(q, ["Syn/File1.lean", "Syn/Main.lean"], 5)[0]
    index.enable_faiss()
    assert index.search(q, ["Syn/File1.lean", "Syn/Main.lean"], 5)[0] == exact


def test_evaluate_reports_retriever_and_bm25_on_both_splits(model, synthetic_export):
    res = evaluate_retriever(model, synthetic_export)
    assert set(res) == {"random", "novel_premises"}
    for split in res.values():
        assert set(split) == {"retriever", "bm25"}
        for m in split.values():
            assert 0 <= m["R@1"] <= m["R@10"] <= 1 and 0 <= m["MRR"] <= 1 and m["count"] > 0
    # the synthetic goals name their premise's symbols, so lexical BM25 is near perfect
    assert res["random"]["bm25"]["R@10"] == 1.0


def test_evaluate_on_real_lean4_example(model, shared_data):
    res = evaluate_retriever(model, shared_data / "lean4-example")
    assert res["random"]["retriever"]["count"] > 0
    # 8 premises in all: R@10 is trivially 1 on this tiny corpus, for both methods
    assert res["random"]["retriever"]["R@10"] == 1.0 and res["random"]["bm25"]["R@10"] == 1.0


@pytest.mark.slow
def test_evaluate_on_benchmark_head_scores_every_annotated_tactic(model, shared_data):
    res = evaluate_retriever(model, shared_data / "leandojo-benchmark-4-head")
    assert list(res) == ["test_head"]
    bm25 = res["test_head"]["bm25"]
    assert bm25["count"] == 1069  # tactics with at least one annotated premise (data README)
    assert res["test_head"]["retriever"]["count"] == 1069
    # names alone carry lexical signal: BM25 is well above chance (10 / 1576) on real states
    assert bm25["R@10"] > 0.1
