"""ProgressTrainer: learns, keeps the lowest-MSE checkpoint, reloads exactly, resumes lifelong."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from leantrain.core.config import config_from_dict, config_from_yaml
from leantrain.core.errors import ConfigError
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
    tok_dir = AutoTokenizer.from_pretrained(trained["dir"])
    assert tok_dir(texts)["input_ids"] == trained["trainer"].tokenizer(texts)["input_ids"]


def test_result_and_manifest(trained: dict[str, Any]) -> None:
    result = trained["result"]
    assert result["output_dir"] == str(trained["dir"])
    assert {"mse", "mae", "within_1"} <= set(result["metrics"])
    manifest = RunManifest.load(trained["dir"])
    assert manifest.data["status"] == "done"
    assert manifest.data["metrics"]["final"]["mse"] == pytest.approx(result["metrics"]["mse"])
    assert not (trained["dir"] / "hf-checkpoints").exists()


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
        **tiny_options(eval_data_path=str(tmp_path / "eval.jsonl"), learning_rate=1e-2),
    )
    fit = trainer.train()["fit"]
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
    assert cfg.model_name == "tiny" and cfg.learning_rate == 1e-5 and cfg.max_length == 512
    yml = tmp_path / "c.yaml"
    yml.write_text("model_name: tiny\nbatch_size: 4\nsplit: [train, val]\n")
    cfg = config_from_yaml(ProgressConfig, yml, epochs=2.0)
    assert (cfg.batch_size, cfg.epochs, cfg.split) == (4, 2.0, ["train", "val"])
    with pytest.raises(ConfigError, match="did you mean 'learning_rate'"):
        config_from_dict(ProgressConfig, {"learning_rat": 1e-3})
    with pytest.raises(ConfigError, match="eval_ratio"):
        ProgressTrainer(eval_ratio=1.5)
    # The seed's constructor and defaults.
    t = ProgressTrainer("rows.jsonl")
    assert (
        t.config.model_name,
        t.config.batch_size,
        t.config.epochs,
        t.config.eval_ratio,
        t.config.seed,
    ) == (
        "bert-base-uncased",
        8,
        3.0,
        0.2,
        42,
    )


# -- lifelong ---------------------------------------------------------------------------------
@dataclass
class _Step:
    index: int
    repo: str
    repos_so_far: list[str]
    data_dir: Path


def _repo_theorems(repo_index: int) -> list[dict[str, Any]]:
    out = []
    for t in range(6):
        n = 1 + (t % 3)
        tacs = [tactic(f"step{j}", f"⊢ goal r{repo_index} t{t} s{j} left{n - j}") for j in range(n)]
        out.append(theorem(f"r{repo_index}.t{t}", tacs))
    return out


def _fake_exports(kill_at: int | None, calls: list[str]):
    def lifelong_exports(db: Any, repos: list[str], data_path: Path, skip: Any = ()):
        for i, repo in enumerate(repos):
            if repo in set(skip):
                continue
            if kill_at is not None and i == kill_at:
                raise KeyboardInterrupt("killed")
            calls.append(repo)
            d = Path(data_path) / f"step{i}"
            write_json(
                d / "random" / "train.json", [t for k in range(i + 1) for t in _repo_theorems(k)]
            )
            yield _Step(i, repo, repos[: i + 1], d)

    return lifelong_exports


@pytest.mark.slow
def test_lifelong_checkpoints_each_repo_and_resumes_after_a_kill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import leantrain.export

    repos = ["https://x/a@1", "https://x/b@2"]
    out = tmp_path / "run"
    calls: list[str] = []
    monkeypatch.setattr(
        leantrain.export, "lifelong_exports", _fake_exports(1, calls), raising=False
    )
    first = ProgressTrainer(output_dir=out, epochs=1, **tiny_options(eval_ratio=0.25))
    with pytest.raises(KeyboardInterrupt):
        first.train(repos, database="lt.db", data_path=tmp_path / "data")
    manifest = RunManifest.load(out)
    assert manifest.completed_repos == repos[:1]
    ckpt0 = manifest.latest_checkpoint(repo=repos[0])
    assert ckpt0 is not None and (out / ckpt0["path"] / "model.safetensors").is_file()

    calls.clear()
    monkeypatch.setattr(
        leantrain.export, "lifelong_exports", _fake_exports(None, calls), raising=False
    )
    second = ProgressTrainer(output_dir=out, epochs=1, **tiny_options(eval_ratio=0.25))
    result = second.train(repos, database="lt.db", data_path=tmp_path / "data")
    assert calls == repos[1:]  # the finished repository is not trained again
    assert list(result["per_repo"]) == repos
    assert len(result["checkpoints"]) == 2
    manifest = RunManifest.load(out)
    assert manifest.completed_repos == repos and manifest.data["status"] == "done"
    for entry in manifest.data["checkpoints"]:
        manifest.verify_checkpoint(entry)
    # Training continued from repo a's checkpoint: its vocabulary is kept.
    saved = json.loads((out / ckpt0["path"] / "tokenizer.json").read_text())["model"]["vocab"]
    assert json.loads((out / "tokenizer.json").read_text())["model"]["vocab"] == saved
    assert ProgressPredictor.from_pretrained(out).predict(
        "⊢ goal r1 t0 s0 left1", "", "step0"
    ) == pytest.approx(second.predictor().predict("⊢ goal r1 t0 s0 left1", "", "step0"))


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
    saved = sorted(p.name for p in (tmp_path / "out" / "hf-checkpoints").glob("checkpoint-*"))
    assert saved == [f"checkpoint-{steps_per_epoch}"]
    assert not (tmp_path / "out" / "model.safetensors").exists()  # nothing half-finished published

    seen_steps: list[int] = []

    class RecordSteps(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            seen_steps.append(state.global_step)

    second = ProgressTrainer(rows, output_dir=tmp_path / "out", epochs=3, **opts)
    second.callbacks.append(RecordSteps())
    fit = second.train()["fit"]
    assert seen_steps == list(range(steps_per_epoch + 1, 3 * steps_per_epoch + 1))
    assert fit["global_step"] == 3 * steps_per_epoch
    assert [h["epoch"] for h in fit["eval_history"]] == [1.0, 2.0, 3.0]
    assert (tmp_path / "out" / "model.safetensors").is_file()


def test_from_pretrained_and_save_model_round_trip(trained: dict[str, Any], tmp_path: Path) -> None:
    again = ProgressTrainer.from_pretrained(trained["dir"], max_length=64)
    metrics = again.evaluate(trained["eval_path"])
    assert metrics["mse"] == pytest.approx(trained["result"]["metrics"]["mse"], rel=1e-5)
    copy = again.save_model(tmp_path / "copy")
    rows = trained["eval_rows"][:5]
    args = ([r["goal"] for r in rows], [r["prefix"] for r in rows], [r["tactic"] for r in rows])
    assert ProgressPredictor.from_pretrained(copy).predict_many(
        *args
    ) == again.predictor().predict_many(*args)
