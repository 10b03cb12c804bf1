import shutil
from pathlib import Path

import pytest
import torch
from leantrain.core.errors import ConfigError, DataError
from leantrain.core.lifelong import LifelongEngine
from leantrain.core.manifest import RunManifest
from leantrain.retrieval import EWC, PremiseRetriever, RetrievalTrainer, evaluate_retriever
from leantrain_tools.synthetic_retrieval import write_synthetic_export
from safetensors.torch import load_file


def weights(model_or_dir):
    m = (
        model_or_dir
        if isinstance(model_or_dir, PremiseRetriever)
        else PremiseRetriever.from_pretrained(model_or_dir)
    )
    return {k: v.clone() for k, v in m.encoder.state_dict().items()}


def same(a, b):
    return all(torch.equal(a[k], b[k]) for k in a)


def stamp(ckpt):
    return (ckpt / "encoder" / "model.safetensors").stat().st_mtime_ns


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
    assert m.status == "completed" and len(m.completed_repos) == 1
    step = m.step("retrieval", 0)
    assert step.checkpoint.files and m.verify_checkpoint(step.checkpoint).is_dir()
    assert step.checkpoint.path == "retrieval/000-data"
    assert step.metrics["val_R@10"] == result["final"]["val_R@10"]


@pytest.mark.slow
def test_infonce_per_tactic_training_beats_the_untrained_encoder(tmp_path, make_config):
    """The quality benchmark's recipe (InfoNCE with in-batch + in-file negatives, one item per
    tactic, goal-first contexts, warm-up) learns a learnable synthetic case."""
    data = write_synthetic_export(tmp_path / "data", num_premises=40, num_theorems=200, seed=4)
    cfg = make_config(
        max_steps=60,
        loss="infonce",
        temperature=0.05,
        sample_by="tactic",
        num_negatives=1,
        num_in_file_negatives=1,
        warmup_steps=5,
        trainer={"val_check_interval": 20},
    )
    torch.manual_seed(cfg.seed)
    untrained = PremiseRetriever.from_name(
        "tiny", tiny_d_model=32, tiny_layers=2, context_max_len=64, premise_max_len=64
    )
    before = evaluate_retriever(untrained, data, bm25=False, splits=("random",))["random"][
        "retriever"
    ]
    result = RetrievalTrainer(cfg).train(data)
    trained = PremiseRetriever.from_pretrained(result["model_dir"])
    assert trained.args.context_format == "goal_first"
    after = evaluate_retriever(trained, data, bm25=False, splits=("random",))["random"]["retriever"]
    # few premises are accessible per theorem, so R@10 is high untrained: R@1 and MRR must rise
    assert after["R@1"] > before["R@1"] + 0.1, (before, after)
    assert after["MRR"] > before["MRR"] + 0.1 and after["R@10"] >= before["R@10"]
    assert result["final"]["global_step"] == 60 and result["final"]["resumed"] is False


def test_each_repo_starts_from_the_previous_repos_model(repo_db, make_config):
    # lr 0: a repo trained from the previous model keeps its weights exactly, while a fresh
    # encoder (seeded per step) would differ
    cfg = make_config(max_steps=3, learning_rate=0.0)
    result = RetrievalTrainer(cfg).train(repo_db.repos, repo_db)
    assert list(result["per_repo"]) == repo_db.repos and len(result["checkpoints"]) == 2
    w_a = weights(result["checkpoints"][0])
    torch.manual_seed(cfg.seed + 1)
    assert not same(
        weights(PremiseRetriever.from_name("tiny", tiny_d_model=32, tiny_layers=2)), w_a
    )
    assert same(weights(result["checkpoints"][1]), w_a) and same(weights(result["model_dir"]), w_a)
    assert result["model_dir"].endswith("retrieval/001-beta")
    # the forgetting matrix: step 1 is scored on both repositories
    assert [(e["step"], e["repo_index"]) for e in result["evals"]] == [(0, 0), (1, 0), (1, 1)]
    assert all("R@10" in e["metrics"] for e in result["evals"])


def test_resume_after_a_failure_skips_finished_repos(tmp_path, repo_db, make_config):
    good = repo_db.dirs[repo_db.repos[1]]
    broken = tmp_path / "broken"
    shutil.copytree(good, broken)
    (broken / "random" / "train.json").write_text("[{]")
    repo_db.dirs[repo_db.repos[1]] = broken
    cfg = make_config(max_steps=3)
    with pytest.raises(DataError, match="malformed JSON"):
        RetrievalTrainer(cfg).train(repo_db.repos, repo_db)
    m = RunManifest.load(cfg.output_dir)
    assert m.completed_repos == repo_db.repos[:1]
    ckpt = m.verify_checkpoint(m.step("retrieval", 0).checkpoint)
    before = stamp(ckpt)
    shutil.rmtree(m.run_dir / m.exports[1])  # the export of the broken repository
    repo_db.dirs[repo_db.repos[1]] = good
    result = RetrievalTrainer(cfg).train(repo_db.repos, repo_db)
    assert list(result["per_repo"]) == repo_db.repos
    assert stamp(ckpt) == before  # repo a not retrained
    assert RunManifest.load(cfg.output_dir).completed_repos == repo_db.repos


def test_a_second_train_on_the_same_run_does_no_work(synthetic_export, make_config, monkeypatch):
    cfg = make_config(max_steps=2)
    first = RetrievalTrainer(cfg).train(synthetic_export)
    before = stamp(Path(first["model_dir"]))

    def boom(self, step):
        raise AssertionError("trained again")

    monkeypatch.setattr(RetrievalTrainer, "train_step", boom)
    trainer = RetrievalTrainer(cfg)
    again = trainer.train(synthetic_export)
    assert again["per_repo"] == first["per_repo"] and again["evals"] == first["evals"]
    assert stamp(Path(again["model_dir"])) == before
    assert trainer.retriever is not None  # the final model, ready to use
    with pytest.raises(ConfigError, match="different config"):
        RetrievalTrainer(make_config(max_steps=3)).train(synthetic_export)


def test_evaluate_and_save_round_trip(tmp_path, synthetic_export, make_config):
    trainer = RetrievalTrainer(make_config(max_steps=2, evaluate_each_repo=False))
    trainer.train(synthetic_export)
    texts = ["⊢ a + b = b + a", "theorem Syn.foo : True"]
    trainer.save(tmp_path / "m")
    again = PremiseRetriever.from_pretrained(tmp_path / "m")
    assert torch.equal(again.encode_texts(texts), trainer.retriever.encode_texts(texts))
    other = RetrievalTrainer(make_config())
    other.load(tmp_path / "m")
    metrics = trainer.evaluate(synthetic_export)
    assert other.evaluate(synthetic_export) == metrics
    for key in ("R@1", "R@10", "MRR", "bm25_R@10", "novel_R@10", "novel_bm25_MRR"):
        assert 0.0 <= metrics[key] <= 1.0, key
    assert metrics["count"] > 0 and metrics["novel_count"] > 0
    assert other.evaluate(synthetic_export, split="val")["count"] > 0


def test_per_step_metrics_include_test_scores_and_bm25(synthetic_export, make_config):
    cfg = make_config(max_steps=2)
    result = RetrievalTrainer(cfg).train(synthetic_export)
    m = result["final"]
    for key in ("val_R@10", "test_R@1", "test_R@10", "test_MRR", "test_bm25_R@10"):
        assert 0.0 <= m[key] <= 1.0, key
    assert "test_novel_R@10" in m and "test_novel_bm25_MRR" in m
    assert m["test_count"] > 0 and m["world_size"] == 1 and m["global_step"] == 2
    logs = RunManifest.load(cfg.output_dir).run_dir / "retrieval" / "logs"
    assert (logs / "000-export.jsonl").read_text().count('"train_loss"') >= 1
    assert (logs / "000-export" / "metrics.csv").is_file()  # CSV: TensorBoard is not installed


class Interrupt(Exception):
    pass


def test_a_killed_step_resumes_from_its_work_dir(synthetic_export, make_config):
    import lightning as L

    class Kill(L.Callback):
        def on_train_batch_end(self, trainer, *args):
            if trainer.global_step == 3:
                raise Interrupt

    cfg = make_config(max_steps=6, trainer={"val_check_interval": 2})

    def engine(callbacks):
        return LifelongEngine(
            cfg.output_dir,
            [RetrievalTrainer(cfg)],
            data=synthetic_export,
            evaluate_each_repo=False,
            callbacks={"retrieval": callbacks},
        )

    with pytest.raises(Interrupt):
        engine([Kill()]).run()
    work = RunManifest.load(cfg.output_dir).run_dir / "retrieval" / "work" / "000"
    assert (work / "last.ckpt").is_file() and (work / "best" / "retriever.json").is_file()
    result = engine([]).run()["retrieval"]
    assert result["final"]["resumed"] and result["final"]["global_step"] == 6
    assert not work.exists()


@pytest.mark.slow
def test_ewc_reduces_drift_on_the_earlier_repos_parameters(tmp_path, repo_db, make_config):
    runs = {}
    for lam in (0.0, 1e5):
        cfg = make_config(
            max_steps=20, ewc_lambda=lam, ewc_batches=4, output_dir=str(tmp_path / f"{lam}")
        )
        runs[lam] = RetrievalTrainer(cfg).train(repo_db.repos, repo_db)["checkpoints"]
    ckpt = Path(runs[1e5][0])
    fisher = load_file(ckpt / "ewc" / "fisher.safetensors")
    anchor = load_file(ckpt / "ewc" / "params.safetensors")
    assert set(fisher) == set(anchor) and sum(float(f.sum()) for f in fisher.values()) > 0
    assert same(anchor, weights(ckpt))  # θ* is the repo's best model
    assert same(anchor, weights(runs[0.0][0]))  # repo a trains alike with and without EWC
    assert not (Path(runs[0.0][0]) / "ewc").exists()
    ewc = EWC(fisher, anchor)
    drift = {
        lam: float(ewc.penalty(PremiseRetriever.from_pretrained(c[-1]).encoder))
        for lam, c in runs.items()
    }
    print("EWC drift", drift)
    assert drift[1e5] < 0.5 * drift[0.0], drift
