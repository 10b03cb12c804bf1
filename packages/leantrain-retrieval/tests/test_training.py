import shutil
from types import SimpleNamespace

import pytest
import torch
from leantrain.core.errors import DataError
from leantrain.core.manifest import RunManifest
from leantrain.retrieval import EWC, PremiseRetriever, RetrievalTrainer, evaluate_retriever
from leantrain.retrieval.synthetic import write_synthetic_export
from safetensors.torch import load_file


def steps(*dirs):
    return [SimpleNamespace(index=i, repo=f"repo-{d.name}", data_dir=d) for i, d in enumerate(dirs)]


def weights(model_or_dir):
    m = (
        model_or_dir
        if isinstance(model_or_dir, PremiseRetriever)
        else PremiseRetriever.from_pretrained(model_or_dir)
    )
    return {k: v.clone() for k, v in m.encoder.state_dict().items()}


def same(a, b):
    return all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_training_beats_the_untrained_encoder(tmp_path, make_config):
    data = write_synthetic_export(tmp_path / "data", num_premises=40, num_theorems=200, seed=3)
    cfg = make_config(max_steps=100)
    torch.manual_seed(cfg.seed)
    untrained = PremiseRetriever.from_name(
        "tiny", tiny_d_model=32, tiny_layers=2, context_max_len=64, premise_max_len=64
    )
    before = evaluate_retriever(untrained, data, bm25=False, splits=("random",))["random"][
        "retriever"
    ]
    result = RetrievalTrainer(cfg).train(data)
    trained = PremiseRetriever.from_pretrained(result["model_dir"])
    after = evaluate_retriever(trained, data, bm25=False, splits=("random",))["random"]["retriever"]
    assert after["R@10"] > before["R@10"] and after["MRR"] > before["MRR"]
    m = RunManifest.load(cfg.output_dir)
    assert m.data["status"] == "completed" and len(m.completed_repos) == 1
    entry = m.latest_checkpoint(repo=m.completed_repos[0])
    assert entry["files"] and m.verify_checkpoint(entry).is_dir()
    assert (
        m.data["metrics"]["per_repo"][m.completed_repos[0]]["val_R@10"]
        == result["final_metrics"]["val_R@10"]
    )


def test_progressive_training_starts_from_the_previous_repo(two_repos, make_config):
    a, b = two_repos
    first = RetrievalTrainer(make_config(max_steps=4)).train_progressive(steps(a))
    w_a = weights(first["checkpoints"][0])
    torch.manual_seed(0)
    assert not same(
        weights(PremiseRetriever.from_name("tiny", tiny_d_model=32, tiny_layers=2)), w_a
    )
    # a second process (new trainer, same run dir) with lr 0: repo b must keep repo a's weights exactly
    second = RetrievalTrainer(make_config(max_steps=3, learning_rate=0.0)).train_progressive(
        steps(a, b)
    )
    assert list(second["per_repo"]) == ["repo-a", "repo-b"] and len(second["checkpoints"]) == 1
    assert same(weights(second["checkpoints"][0]), w_a)
    assert same(weights(second["model_dir"]), w_a)
    assert RunManifest.load(make_config().output_dir).completed_repos == ["repo-a", "repo-b"]


def test_resume_after_a_failure_skips_finished_repos(tmp_path, two_repos, make_config):
    a, b = two_repos
    broken = tmp_path / "broken"
    shutil.copytree(b, broken)
    (broken / "random" / "train.json").write_text("[{]")
    cfg = make_config(max_steps=3)
    with pytest.raises(DataError, match="malformed JSON"):
        RetrievalTrainer(cfg).train_progressive(steps(a, broken))
    m = RunManifest.load(cfg.output_dir)
    assert m.completed_repos == ["repo-a"]
    ckpt = m.verify_checkpoint(m.latest_checkpoint(repo="repo-a"))
    stamp = (ckpt / "encoder" / "model.safetensors").stat().st_mtime_ns
    shutil.rmtree(broken)
    shutil.copytree(b, broken)
    result = RetrievalTrainer(cfg).train_progressive(steps(a, broken))
    assert list(result["per_repo"]) == ["repo-a", "repo-broken"]
    assert (
        ckpt / "encoder" / "model.safetensors"
    ).stat().st_mtime_ns == stamp  # repo a not retrained
    assert RunManifest.load(cfg.output_dir).completed_repos == ["repo-a", "repo-broken"]


@pytest.mark.slow
def test_ewc_reduces_drift_on_the_earlier_repos_parameters(tmp_path, two_repos, make_config):
    a, b = two_repos
    base = make_config(max_steps=10, ewc_lambda=1.0, ewc_batches=4, output_dir=str(tmp_path / "a"))
    RetrievalTrainer(base).train_progressive(steps(a))
    ckpt = tmp_path / "a" / "checkpoints" / "000-repo-a"
    fisher, anchor = (
        load_file(ckpt / "ewc" / "fisher.safetensors"),
        load_file(ckpt / "ewc" / "params.safetensors"),
    )
    assert set(fisher) == set(anchor) and sum(float(f.sum()) for f in fisher.values()) > 0
    assert same({k: anchor[k] for k in anchor}, weights(ckpt))  # θ* is the repo's best checkpoint
    ewc = EWC(fisher, anchor)
    drift = {}
    for lam in (0.0, 1e5):
        run = tmp_path / f"lam{lam}"
        shutil.copytree(tmp_path / "a", run)
        cfg = make_config(max_steps=20, ewc_lambda=lam, ewc_batches=4, output_dir=str(run))
        out = RetrievalTrainer(cfg).train_progressive(steps(a, b))
        model = PremiseRetriever.from_pretrained(out["checkpoints"][-1])
        drift[lam] = float(ewc.penalty(model.encoder).detach())
    print("EWC drift", drift)
    assert drift[1e5] < 0.5 * drift[0.0], drift


def test_per_repo_metrics_include_test_scores_and_bm25(two_repos, make_config):
    result = RetrievalTrainer(make_config(max_steps=2)).train_progressive(steps(two_repos[0]))
    m = result["per_repo"]["repo-a"]
    for key in ("val_R@10", "R@1", "R@10", "MRR", "bm25_R@10", "novel_R@10", "novel_bm25_MRR"):
        assert 0.0 <= m[key] <= 1.0, key
    assert m["test_count"] > 0 and m["world_size"] == 1 and m["global_step"] == 2
