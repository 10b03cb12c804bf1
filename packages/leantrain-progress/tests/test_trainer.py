"""ProgressTrainer: learns, keeps the lowest-MSE checkpoint, reloads exactly, resumes lifelong."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from leantrain.core.config import config_from_dict, config_from_yaml
from leantrain.core.errors import ConfigError
from leantrain.core.lifelong import final_checkpoint
from leantrain.core.manifest import RunManifest
from leantrain.progress import ProgressConfig, ProgressDataset, ProgressPredictor, ProgressTrainer
from progress_helpers import learnable_rows, tactic, theorem, tiny_options, write_json, write_jsonl


def test_tiny_model_beats_the_mean_predictor(trained: dict[str, Any]) -> None:
    rows = trained["eval_rows"]
    labels = np.array([r["steps_remaining"] for r in rows], dtype=float)
    mean = np.mean([r["steps_remaining"] for r in trained["train_rows"]])
    mean_mae = float(np.mean(np.abs(labels - mean)))
    metrics = ProgressPredictor.from_pretrained(trained["dir"]).evaluate(rows)
    assert metrics["mae"] < 0.6 * mean_mae, (metrics, mean_mae)
    assert metrics["within_1"] > 0.6


def test_saved_model_reloads_to_identical_outputs(trained: dict[str, Any]) -> None:
    from transformers import AutoTokenizer

    rows = trained["eval_rows"][:12]
    args = ([r["goal"] for r in rows], [r["prefix"] for r in rows], [r["tactic"] for r in rows])
    in_memory = trained["trainer"].predictor().predict_many(*args)
    reloaded = ProgressPredictor.from_pretrained(trained["dir"])
    assert reloaded.predict_many(*args) == in_memory
    # The locally built tokenizer round-trips through AutoTokenizer to the same ids.
    texts = [*ProgressDataset(rows=rows).texts(), "n : ℕ\n⊢ n + 0 = n", "unseen ∀ ε > 0, ∃ δ"]
    tok_dir = AutoTokenizer.from_pretrained(final_checkpoint(trained["dir"]))
    assert tok_dir(texts)["input_ids"] == trained["trainer"].tokenizer(texts)["input_ids"]


def test_result_and_manifest(trained: dict[str, Any]) -> None:
    result, run = trained["result"], trained["dir"]
    assert result["output_dir"] == str(run / "progress")
    assert {"mse", "mae", "within_1", "train_rows", "eval_rows"} <= set(result["final"])
    assert result["model_dir"] == result["checkpoints"][-1] == str(final_checkpoint(run))
    assert Path(result["model_dir"]).parent == run / "progress"
    manifest = RunManifest.load(run)
    assert manifest.status == "completed"
    (step,) = manifest.steps
    assert step.metrics["mse"] == pytest.approx(result["final"]["mse"])
    assert not (run / "progress" / "work" / "000").exists()
    (log_file,) = (run / "progress" / "logs").glob("*.jsonl")
    logs = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert all("step" in x for x in logs)
    assert sum("eval_mse" in x for x in logs) == 20 + 1  # every epoch, then the final model
    evals = [
        {k: v for k, v in x.items() if k not in ("epoch", "step")} for x in logs if "eval_mse" in x
    ]
    assert evals[-1] in evals[:-1]  # the final model is an evaluated epoch's: not evaluated again


def test_a_second_train_with_the_same_config_does_no_work(
    trained: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(self: Any, step: Any) -> None:
        raise AssertionError("trained again")

    monkeypatch.setattr(ProgressTrainer, "train_step", fail)
    monkeypatch.setattr(ProgressTrainer, "evaluate", fail)
    again = ProgressTrainer(*trained["args"], **trained["kwargs"]).train()
    assert again["checkpoints"] == trained["result"]["checkpoints"]
    assert again["final"] == trained["result"]["final"]
    with pytest.raises(ConfigError, match="different config"):
        ProgressTrainer(*trained["args"], **{**trained["kwargs"], "learning_rate": 1e-4}).train()


def test_best_checkpoint_is_the_lowest_mse_one(tmp_path: Path) -> None:
    # Training pulls predictions from ~0 towards 8 while eval labels are 1: eval MSE falls,
    # then rises, so the best epoch is not the last one.
    rng = random.Random(0)
    train = [
        {"goal": f"⊢ p{rng.randint(0, 9)}", "prefix": "", "tactic": "simp", "steps_remaining": 8}
        for _ in range(48)
    ]
    evals = [
        {"goal": f"⊢ p{rng.randint(0, 9)}", "prefix": "", "tactic": "simp", "steps_remaining": 1}
        for _ in range(16)
    ]
    write_jsonl(tmp_path / "train.jsonl", train)
    write_jsonl(tmp_path / "eval.jsonl", evals)
    trainer = ProgressTrainer(
        tmp_path / "train.jsonl",
        output_dir=tmp_path / "out",
        epochs=5,
        **tiny_options(
            eval_data_path=str(tmp_path / "eval.jsonl"),
            learning_rate=1e-2,
            metric_for_best_model="mse",  # the default is MAE; either is "lower is better"
        ),
    )
    fit = trainer.train()["final"]
    history = [h["mse"] for h in fit["eval_history"]]
    assert len(history) == 5
    best = int(np.argmin(history))
    assert best < len(history) - 1, f"precondition: eval MSE must rise at the end, got {history}"
    assert fit["best_mse"] == pytest.approx(history[best])
    final = ProgressPredictor.from_pretrained(tmp_path / "out").evaluate(evals)
    assert final["mse"] == pytest.approx(history[best], rel=1e-4)
    assert final["mse"] < history[-1]


def test_dynamic_padding_leaves_rows_unpadded(tmp_path: Path) -> None:
    rows = learnable_rows(20, seed=3)
    dynamic = ProgressTrainer(**tiny_options())
    dynamic._ensure_model(ProgressDataset(rows=rows).texts())
    lengths = {len(x) for x in dynamic.encode(ProgressDataset(rows=rows))["input_ids"]}
    assert len(lengths) > 1 and max(lengths) < 64
    fixed = ProgressTrainer(**tiny_options(padding="max_length"))
    fixed.model, fixed.tokenizer = dynamic.model, dynamic.tokenizer
    assert {len(x) for x in fixed.encode(ProgressDataset(rows=rows))["input_ids"]} == {64}


def test_config_from_dict_yaml_and_errors(tmp_path: Path) -> None:
    cfg = config_from_dict(ProgressConfig, {"model_name": "tiny", "epochs": 1.0})
    assert cfg.model_name == "tiny" and cfg.learning_rate == 1e-3 and cfg.max_length == 40
    assert cfg.num_train_epochs == 1.0 and cfg.greater_is_better is False
    assert (cfg.loss, cfg.input_summary, cfg.metric_for_best_model) == ("huber", True, "mae")
    yml = tmp_path / "c.yaml"
    yml.write_text("model_name: tiny\nbatch_size: 4\nsplit: [train, val]\n")
    cfg = config_from_yaml(ProgressConfig, yml, epochs=2.0)
    assert (cfg.per_device_train_batch_size, cfg.num_train_epochs, cfg.split) == (
        4,
        2.0,
        ["train", "val"],
    )
    with pytest.raises(ConfigError, match="did you mean 'learning_rate'"):
        config_from_dict(ProgressConfig, {"learning_rat": 1e-3})
    with pytest.raises(ConfigError, match=r"'model_name' .*training needs a base model"):
        config_from_dict(ProgressConfig, {"model_name": None})
    from leantrain.progress.progress_arguments import EvaluateArgs, MakeDataArgs

    ev = config_from_dict(EvaluateArgs, {"data": "rows.jsonl"})  # a trained model: $ENV
    assert (
        ev.model_name,
        ev.split,
        config_from_dict(MakeDataArgs, {"data": "d", "out": "o"}).seed,
    ) == (
        None,
        ["test"],
        42,
    )
    with pytest.raises(ConfigError, match="--data is empty"):
        config_from_dict(EvaluateArgs, {"data": None})
    with pytest.raises(ConfigError, match="eval_ratio"):
        ProgressTrainer(eval_ratio=1.5)
    # The seed's constructor (the default model is now 'tiny', which works offline and sees
    # Lean symbols; its epochs default to 6, its inputs to 40 tokens); TrainingArguments' own
    # names work too.
    c = ProgressTrainer("rows.jsonl").config
    assert (c.model_name, c.per_device_train_batch_size, c.num_train_epochs) == ("tiny", 8, 6.0)
    c = ProgressTrainer("rows.jsonl", model_name="bert-base-uncased").config
    assert (c.per_device_train_batch_size, c.num_train_epochs, c.max_length) == (8, 3.0, 512)
    assert (c.eval_ratio, c.seed, c.data_path) == (0.2, 42, "rows.jsonl")
    c = ProgressTrainer(per_device_train_batch_size=4, disable_tqdm=True).config
    assert c.per_device_train_batch_size == 4 and c.disable_tqdm is True


# -- lifelong ---------------------------------------------------------------------------------
def _repo_theorems(repo_index: int, repo: str, proofs: bool = True) -> list[dict[str, Any]]:
    url, _, commit = repo.rpartition("@")
    out = []
    for t in range(6):
        n = 1 + (t % 3) if proofs else 0
        tacs = [tactic(f"step{j}", f"⊢ goal r{repo_index} t{t} s{j} left{n - j}") for j in range(n)]
        out.append({**theorem(f"r{repo_index}.t{t}", tacs), "url": url, "commit": commit})
    return out


class _Database:
    """``export_merged_data`` of hand-made repositories (the first ``empty`` ones without
    tactic proofs); raises KeyboardInterrupt when asked for step ``kill_at``."""

    def __init__(self, kill_at: int | None = None, empty: int = 0) -> None:
        self.kill_at, self.empty, self.exported = kill_at, empty, []  # type: list[str]

    def export_merged_data(self, repos: list[str], path: Path) -> None:
        if len(repos) - 1 == self.kill_at:
            raise KeyboardInterrupt("killed")
        self.exported.append(repos[-1])
        thms = [t for k, r in enumerate(repos) for t in _repo_theorems(k, r, k >= self.empty)]
        for split in ("train", "test"):
            write_json(Path(path) / "random" / f"{split}.json", thms)


@pytest.mark.slow
def test_lifelong_checkpoints_each_repo_and_resumes_after_a_kill(tmp_path: Path) -> None:
    repos = ["https://x/a@1", "https://x/b@2"]
    out = tmp_path / "run"
    first = ProgressTrainer(output_dir=out, epochs=1, **tiny_options(eval_ratio=0.25))
    with pytest.raises(KeyboardInterrupt):
        first.train(repos, _Database(kill_at=1), tmp_path / "data")
    manifest = RunManifest.load(out)
    assert manifest.completed_repos == repos[:1]
    ckpt0 = manifest.checkpoint_path(manifest.trained_steps("progress")[0].checkpoint)
    assert ckpt0 == out / "progress" / "000-a" and (ckpt0 / "model.safetensors").is_file()

    db = _Database()
    second = ProgressTrainer(output_dir=out, epochs=1, **tiny_options(eval_ratio=0.25))
    result = second.train(repos, db, tmp_path / "data")
    assert db.exported == repos[1:]  # the finished repository is not trained again
    assert list(result["per_repo"]) == repos
    assert result["checkpoints"] == [str(ckpt0), str(out / "progress" / "001-b")]
    manifest = RunManifest.load(out)
    assert manifest.completed_repos == repos and manifest.status == "completed"
    for checkpoint in manifest.checkpoints:
        manifest.verify_checkpoint(checkpoint)
    # The forgetting matrix: after each repository, every repository so far is scored.
    assert [(e["step"], e["repo_index"]) for e in result["evals"]] == [(0, 0), (1, 0), (1, 1)]
    assert all(e["metrics"]["mae"] >= 0 and e["score_key"] == "mae" for e in result["evals"])
    # Training continued from repo a's checkpoint: its vocabulary is kept.
    vocab = [
        json.loads((Path(c) / "tokenizer.json").read_text())["model"]["vocab"]
        for c in result["checkpoints"]
    ]
    assert vocab[0] == vocab[1]
    assert ProgressPredictor.from_pretrained(out).predict(
        "⊢ goal r1 t0 s0 left1", "", "step0"
    ) == pytest.approx(second.predictor().predict("⊢ goal r1 t0 s0 left1", "", "step0"))


@pytest.mark.slow
def test_a_repository_without_proofs_is_skipped(tmp_path: Path) -> None:
    repos = ["https://x/a@1", "https://x/b@2"]
    trainer = ProgressTrainer(output_dir=tmp_path / "run", epochs=1, **tiny_options())
    result = trainer.train(repos, _Database(empty=1), tmp_path / "data")
    assert "no progress rows" in result["per_repo"][repos[0]]["skipped"]
    assert result["final"]["train_rows"] > 0  # repository b trained the base model
    assert not any(Path(result["checkpoints"][0]).iterdir())  # no model before the first proofs
    assert final_checkpoint(tmp_path / "run") == Path(result["checkpoints"][1])
    ProgressPredictor.from_pretrained(tmp_path / "run").predict("⊢ p", "", "simp")


@pytest.mark.slow
def test_killed_run_resumes_at_the_right_step(tmp_path: Path) -> None:
    from transformers import TrainerCallback

    class KillAtEpochEnd(TrainerCallback):
        def __init__(self, epoch: int) -> None:
            self.epoch = epoch

        def on_epoch_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if round(state.epoch) == self.epoch:
                raise KeyboardInterrupt("killed")

    rows = write_jsonl(tmp_path / "rows.jsonl", learnable_rows(64, seed=5))
    opts = tiny_options(eval_ratio=0.25)
    first = ProgressTrainer(rows, output_dir=tmp_path / "out", epochs=3, **opts)
    first.callbacks.append(KillAtEpochEnd(2))  # dies before epoch 2 is saved: epoch 1 is on disk
    with pytest.raises(KeyboardInterrupt):
        first.train()
    steps_per_epoch = 3  # 48 training rows / batch 16
    work = tmp_path / "out" / "progress" / "work" / "000"
    assert sorted(p.name for p in work.glob("checkpoint-*")) == [f"checkpoint-{steps_per_epoch}"]
    assert final_checkpoint(tmp_path / "out") is None  # nothing half-finished published

    seen_steps: list[int] = []

    class RecordSteps(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            seen_steps.append(state.global_step)

    second = ProgressTrainer(rows, output_dir=tmp_path / "out", epochs=3, **opts)
    second.callbacks.append(RecordSteps())
    fit = second.train()["final"]
    assert seen_steps == list(range(steps_per_epoch + 1, 3 * steps_per_epoch + 1))
    assert fit["global_step"] == 3 * steps_per_epoch
    assert [h["epoch"] for h in fit["eval_history"]] == [1.0, 2.0, 3.0]
    assert (final_checkpoint(tmp_path / "out") / "model.safetensors").is_file()
    assert not work.exists()


def test_from_pretrained_and_save_round_trip(trained: dict[str, Any], tmp_path: Path) -> None:
    again = ProgressTrainer.from_pretrained(trained["dir"], max_length=64)
    metrics = again.evaluate(trained["eval_path"])
    assert metrics["mse"] == pytest.approx(trained["result"]["final"]["mse"], rel=1e-5)
    again.save(tmp_path / "copy")
    assert {"model.safetensors", "tokenizer.json"} <= {
        p.name for p in (tmp_path / "copy").iterdir()
    }
    rows = trained["eval_rows"][:5]
    args = ([r["goal"] for r in rows], [r["prefix"] for r in rows], [r["tactic"] for r in rows])
    assert ProgressPredictor.from_pretrained(tmp_path / "copy").predict_many(
        *args
    ) == again.predictor().predict_many(*args)
