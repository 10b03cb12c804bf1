import importlib.util

import pytest
import torch
from leantrain.core.errors import CheckpointError, MissingDependencyError
from leantrain.core.output_dir import output_kind
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
    names = {p.name for p in (tmp_path / "idx").iterdir()}
    assert names == {"index.safetensors", "index.json", ".leantrain"}
    assert output_kind(tmp_path / "idx") == "index"  # 'retrieval index --output' may replace it
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


def test_evaluate_reports_the_reachable_fraction_of_positives(model, tmp_path):
    """A hand-made export: of 4 positives, 3 are accessible (one lies in a file the theorem's file
    does not import), so reachable_fraction is 0.75 on every split and method."""
    import json

    from leantrain.retrieval.evaluation import format_table

    def prem(name, line):
        return {
            "full_name": name,
            "code": f"theorem {name} : True",
            "start": [line, 1],
            "end": [line, 9],
        }

    corpus = [
        {"path": "Base.lean", "imports": [], "premises": [prem("base_a", 1), prem("base_b", 3)]},
        {"path": "Other.lean", "imports": [], "premises": [prem("other_a", 1)]},
        {"path": "Main.lean", "imports": ["Base.lean"], "premises": [prem("main_a", 1)]},
    ]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(f) + "\n" for f in corpus))

    def prov(name, path, line):
        return {"full_name": name, "def_path": path, "def_pos": [line, 1], "def_end_pos": [line, 9]}

    def tactic(*provs):
        return {
            "tactic": "simp",
            "annotated_tactic": ["simp", list(provs)],
            "state_before": "⊢ True",
            "state_after": "no goals",
        }

    thm = {
        "url": "u",
        "commit": "c",
        "file_path": "Main.lean",
        "full_name": "main_thm",
        "start": [10, 1],
        "end": [12, 1],
        "traced_tactics": [
            tactic(prov("base_a", "Base.lean", 1), prov("other_a", "Other.lean", 1)),
            tactic(prov("base_b", "Base.lean", 3), prov("main_a", "Main.lean", 1)),
        ],
    }
    for split in ("random", "novel_premises"):
        (tmp_path / split).mkdir()
        (tmp_path / split / "test.json").write_text(json.dumps([thm]))
    res = evaluate_retriever(model, tmp_path)
    for split in ("random", "novel_premises"):
        for method in ("retriever", "bm25"):
            assert res[split][method]["reachable_fraction"] == 0.75
            assert res[split][method]["R@10"] <= 0.75  # the unreachable one is never retrieved
    assert "reachable" in format_table(res) and "0.7500" in format_table(res)
    # with the imports unknown, every premise outside Main.lean is reachable again
    corpus[2]["imports_known"] = False
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(f) + "\n" for f in corpus))
    res = evaluate_retriever(model, tmp_path, bm25=False)
    assert res["random"]["retriever"]["reachable_fraction"] == 1.0


def test_an_index_is_never_written_into_a_file_or_a_folder_of_the_users(tmp_path, model, corpus):
    """Issue 36 (5): ``cache_dir`` (``evaluate --index``) that is an existing file, or a folder
    holding other files, is one ConfigError line and stays as it was; a new or empty directory
    or an earlier index is written."""
    from leantrain.core.errors import ConfigError

    keep = tmp_path / "keep.txt"
    keep.write_text("precious\n")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    for target, needle in ((keep, "is a file, not a directory"), (mine, "holds files leantrain")):
        with pytest.raises(ConfigError) as e:
            model.index_corpus(corpus, cache_dir=target)
        assert needle in e.value.one_line() and "\n" not in e.value.one_line()
    assert keep.read_text() == "precious\n" and [p.name for p in mine.iterdir()] == ["notes.txt"]
    (tmp_path / "empty").mkdir()
    for target in (tmp_path / "empty", tmp_path / "new", tmp_path / "new"):
        model.index_corpus(corpus, cache_dir=target)
        assert output_kind(target) == "index"
