import json

import pytest
import torch
from leantrain.core.errors import CheckpointError, ConfigError, DataError
from leantrain.core.manifest import RunManifest
from leantrain.llm import SFTConfig, SFTTrainer, create_lora_config, tactic_accuracy
from leantrain.llm.lora import check_target_modules

REPOS = ["https://x/a@1", "https://x/b@2"]


def _trainer(tmp_path, name="run", **kw):
    args = {
        "model_name": "tiny",
        "output_dir": tmp_path / name,
        "lr": 3e-3,
        "batch_size": 3,
        "max_steps": 60,
        "logging_steps": 5,
        "evaluate_each_repo": False,
        "save_steps": 1000,
    }
    args.update(kw)
    return SFTTrainer(**args)


def _logged(path, key="loss"):
    return [e["step"] for e in map(json.loads, path.read_text().splitlines()) if key in e]


def test_only_tactic_tokens_carry_loss(sft_rows, taught, tmp_path):
    import trl

    t = _trainer(tmp_path)
    trl_trainer = trl.SFTTrainer(
        model=t.model, args=t.config, train_dataset=sft_rows, processing_class=t.tokenizer
    )
    batch = trl_trainer.data_collator([trl_trainer.train_dataset[i] for i in range(3)])
    for ids, labels in zip(batch["input_ids"], batch["labels"]):
        kept = t.tokenizer.decode(ids[labels != -100])
        assert kept.startswith(tuple(tac for _, tac in taught))
        assert kept.rstrip("\n").endswith("<|im_end|>")
        assert "⊢" not in kept and "system" not in kept


@pytest.mark.slow
def test_sft_memorises_taught_tactics_and_reloads_identically(sft_rows, taught, tmp_path, capsys):
    t = _trainer(tmp_path)
    result = t.train(sft_rows)
    metrics = result["final"]
    assert metrics["last_loss"] < metrics["first_loss"] / 3
    assert "'loss'" not in capsys.readouterr().out  # HF's log dicts stay off stdout
    pairs = [(row["prompt"], row["completion"][0]["content"]) for row in sft_rows]
    acc = tactic_accuracy(t.model, t.tokenizer, pairs, k=2)
    assert acc["top1_accuracy"] == 1.0
    assert t.suggest_tactics(taught[1][0], k=2)[0] == taught[1][1]

    assert result["model_dir"] == str(tmp_path / "run" / "sft" / "000-dataset")
    for source in (tmp_path / "run", result["output_dir"], result["model_dir"]):
        reloaded = SFTTrainer.from_pretrained(source)
        enc = t.tokenizer("⊢ a = a", return_tensors="pt")
        with torch.no_grad():
            assert torch.equal(t.model(**enc).logits, reloaded.model(**enc).logits)
    manifest = RunManifest.load(tmp_path / "run")
    assert manifest.status == "completed" and manifest.completed_repos[0].startswith("dataset@")
    assert _logged(tmp_path / "run" / "sft" / "logs" / "000-dataset.jsonl")[-1] == 60


def test_second_train_does_no_work_and_another_config_is_refused(sft_rows, tmp_path):
    from transformers import TrainerCallback

    class Count(TrainerCallback):
        begun = 0

        def on_train_begin(self, args, state, control, **kwargs):
            Count.begun += 1

    first = _trainer(tmp_path, max_steps=2, callbacks=[Count()]).train(sft_rows)
    again = _trainer(tmp_path, max_steps=2, callbacks=[Count()]).train(sft_rows)
    assert Count.begun == 1 and again["per_repo"] == first["per_repo"]
    with pytest.raises(ConfigError, match=r"different config.*max_steps"):
        _trainer(tmp_path, max_steps=3).train(sft_rows)
    # other rows (another dataset, or max_samples) in the same dir: refused, not the old result
    with pytest.raises(ConfigError, match="was trained on other data"):
        _trainer(tmp_path, max_steps=2, callbacks=[Count()]).train(sft_rows.select(range(2)))
    assert Count.begun == 1


class _Kill(Exception):
    pass


def _killer(at_step, work=None, on="step_end"):
    from transformers import TrainerCallback

    def kill(args, state, control, **kwargs):
        if state.global_step == at_step and (work is None or args.output_dir.endswith(work)):
            raise _Kill

    return type("Killer", (TrainerCallback,), {f"on_{on}": lambda self, *a, **k: kill(*a, **k)})()


@pytest.mark.slow
def test_resume_after_kill_continues_at_the_saved_step(sft_rows, tmp_path):
    kw = {"max_steps": 8, "save_steps": 2, "logging_steps": 1}
    with pytest.raises(_Kill):
        _trainer(tmp_path, callbacks=[_killer(5)], **kw).train(sft_rows)
    work = tmp_path / "run" / "sft" / "work" / "000"
    assert sorted(p.name for p in work.glob("checkpoint-*"))[-1] == "checkpoint-4"
    # killed again right after the last checkpoint is written: the rerun trains no step at all
    with pytest.raises(_Kill):
        _trainer(tmp_path, callbacks=[_killer(8, on="save")], **kw).train(sft_rows)

    result = _trainer(tmp_path, **kw).train(sft_rows)
    final = result["final"]
    assert final["global_step"] == 8 and final["train_loss"] > 1.0  # real, not HF's 0.0
    assert final["last_loss"] < final["first_loss"]
    # steps 1-4 come from the first run's checkpoint, 5-8 from the resumed run: no step 1 again
    assert _logged(tmp_path / "run" / "sft" / "logs" / "000-dataset.jsonl") == list(range(1, 9))
    assert not work.exists()  # the step's resumable state goes once its model is saved


@pytest.mark.slow
def test_lifelong_over_repos_resumes_at_the_interrupted_repo(database, tmp_path):
    kw = {"max_steps": 4, "save_steps": 2, "logging_steps": 1, "batch_size": 4}
    kw.update(evaluate_each_repo=True, eval_split="test", eval_k=1, max_eval_samples=2)
    kw.update(allow_contamination=True)  # the fake database writes one theorem set to every split
    first = _trainer(tmp_path, callbacks=[_killer(3, work="001")], **kw)
    with pytest.raises(_Kill):
        first.train(REPOS, database, tmp_path / "data")
    manifest = RunManifest.load(tmp_path / "run")
    assert manifest.completed_repos == REPOS[:1]
    assert manifest.order == REPOS and manifest.step("sft", 1) is None  # killed inside step 1

    # repo 1 starts from repo 0's model, checked against its checksum first
    weights = tmp_path / "run" / "sft" / "000-a" / "model.safetensors"
    good = weights.read_bytes()
    weights.write_bytes(good[:-1] + bytes([good[-1] ^ 0xFF]))
    with pytest.raises(CheckpointError, match="checksum"):
        _trainer(tmp_path, **kw).train(REPOS, database, tmp_path / "data")
    weights.write_bytes(good)

    result = _trainer(tmp_path, **kw).train(REPOS, database, tmp_path / "data")
    assert list(result["per_repo"]) == REPOS
    assert [p.rsplit("/", 1)[-1] for p in result["checkpoints"]] == ["000-a", "001-b"]
    assert "test_eval_loss" in result["final"]
    # the forgetting matrix: after repo 0, repo 0; after repo 1, repos 0 and 1
    assert [(e["step"], e["repo_index"]) for e in result["evals"]] == [(0, 0), (1, 0), (1, 1)]
    # a rerun with nothing left to train still evaluates on the run's last data by default
    rerun = _trainer(tmp_path, **kw)
    assert rerun.train(REPOS, database, tmp_path / "data")["per_repo"] == result["per_repo"]
    assert rerun.evaluate()["eval_loss"] == pytest.approx(result["final"]["test_eval_loss"])
    assert all(
        e["score_key"] == "eval_loss" and e["metrics"]["eval_loss"] > 0 for e in result["evals"]
    )


@pytest.mark.slow
def test_lora_saves_only_the_adapter_and_chains_into_grpo(sft_rows, tmp_path):
    from leantrain.llm import GRPOTrainer
    from safetensors.torch import load_file

    t = _trainer(tmp_path, max_steps=3, lora_config={"r": 4, "lora_alpha": 8})
    result = t.train(sft_rows)
    model_dir = tmp_path / "run" / "sft" / "000-dataset"
    assert (model_dir / "adapter_model.safetensors").is_file()
    assert not (model_dir / "model.safetensors").exists()
    assert all("lora" in k for k in load_file(model_dir / "adapter_model.safetensors"))
    (step,) = result["per_repo"].values()  # the adapter's parameters are counted and reported
    lora_params = sum(v.numel() for k, v in t.model.named_parameters() if "lora_" in k)
    assert step["trainable_parameters"] == lora_params > 0
    assert step["parameters"] == sum(v.numel() for v in t.model.parameters())
    assert step["parameters"] > step["trainable_parameters"]

    rl = sft_rows.map(
        lambda r: {"reference": r["completion"][0]["content"]}, remove_columns=["completion"]
    )
    g = GRPOTrainer(
        model_name=str(tmp_path / "run"),  # a run dir: its newest model
        output_dir=tmp_path / "grpo",
        reward_funcs=["format"],
        max_steps=1,
        max_completion_length=8,
        evaluate_each_repo=False,
    )
    before = {k: v.clone() for k, v in g.model.named_parameters() if v.requires_grad}
    assert before and all("lora" in k for k in before)  # GRPO continues training the SFT adapter
    g.train(rl)
    assert (tmp_path / "grpo" / "grpo" / "000-dataset" / "adapter_config.json").is_file()
    assert result["model_dir"] == str(model_dir)


def test_lora_target_module_missing_is_an_error(tmp_path):
    t = _trainer(tmp_path, lora_config=create_lora_config(target_modules=["query_key_value"]))
    with pytest.raises(ConfigError, match=r"query_key_value.*not found"):
        t.model  # noqa: B018
    from leantrain.llm import build_tiny_model

    model, _ = build_tiny_model()
    check_target_modules(model, create_lora_config(target_modules=["q_proj"]))  # present: fine


def test_epochs_per_repo_is_num_train_epochs(tmp_path):
    assert _trainer(tmp_path, epochs_per_repo=3).config.num_train_epochs == 3
    assert SFTTrainer(config={"epochs": 2}).config.num_train_epochs == 2
    ready = SFTConfig(output_dir=str(tmp_path), num_train_epochs=5)
    assert SFTTrainer(config=ready, epochs_per_repo=4).config.num_train_epochs == 4
    assert not hasattr(ready, "epochs_per_repo")
    with pytest.raises(ConfigError, match="same setting"):
        SFTTrainer(epochs_per_repo=2, num_train_epochs=3)


def test_missing_data_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="not found"):
        _trainer(tmp_path).train(tmp_path / "nope")
    with pytest.raises(ConfigError, match="nothing to train on"):
        _trainer(tmp_path, name="other").train()


def test_a_damaged_config_json_is_one_line(tmp_path):
    """An interrupted copy leaves ``config.json`` truncated: one line naming the file (it was
    transformers' OSError traceback in ``leantrain sft --model`` and ``llm eval --model``)."""
    from leantrain.llm.model_loading import load_model_and_tokenizer

    (tmp_path / "config.json").write_text('{"model_type": "qwen2", ')
    with pytest.raises(CheckpointError, match=r"config.json: not valid JSON") as e:
        load_model_and_tokenizer(tmp_path)
    assert "\n" not in e.value.one_line()


def test_corrupted_weights_are_a_checkpoint_error(sft_rows, tmp_path):
    result = _trainer(tmp_path, max_steps=2).train(sft_rows)
    weights = tmp_path / "run" / "sft" / "000-dataset" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="corrupted"):
        SFTTrainer.from_pretrained(result["model_dir"])
    with pytest.raises(CheckpointError, match="no model here"):
        SFTTrainer.from_pretrained(tmp_path)


@pytest.mark.slow
def test_real_export_dir_trains_and_evaluates(lean4_example, tmp_path):
    t = _trainer(
        tmp_path,
        max_steps=4,
        evaluate_each_repo=True,
        eval_split="val",
        max_eval_samples=4,
        eval_k=2,
        allow_contamination=True,  # lean4-example's test statements repeat training ones
    )
    result = t.train(lean4_example)
    assert {"val_eval_loss", "val_top1_accuracy", "val_top2_accuracy"} <= set(result["final"])
    metrics = t.evaluate(lean4_example, "test")
    assert metrics["num_examples"] > 0 and metrics["eval_loss"] > 0


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="CPU precision settings")
@pytest.mark.parametrize(
    ("mode", "expected"), [("off", "fp32"), ("on", "bf16-autocast"), ("auto", "fp32")]
)
def test_cpu_bf16_setting_picks_the_precision_and_trains(sft_rows, tmp_path, mode, expected):
    # 'auto' keeps the tiny model (hidden 64) in fp32: casts cost more than bf16 saves there
    t = _trainer(tmp_path, cpu_bf16=mode, max_steps=4)
    final = t.train(sft_rows)["final"]
    assert final["precision"] == expected
    assert final["train_loss"] == pytest.approx(final["train_loss"])  # finite, not nan
    assert next(t.model.parameters()).dtype == torch.float32  # master weights stay fp32


def test_cpu_bf16_rejects_unknown_values(tmp_path):
    with pytest.raises(ConfigError, match="cpu_bf16"):
        SFTConfig(output_dir=str(tmp_path), cpu_bf16="maybe")


@pytest.mark.parametrize(
    ("hidden", "setting", "expected"),
    [(64, None, False), (256, None, True), (256, False, False), (64, True, True)],
)
def test_activation_checkpointing_unset_follows_the_model_width(
    sft_rows, tmp_path, hidden, setting, expected
):
    from leantrain.llm.tiny_model import save_tiny_model

    model = save_tiny_model(tmp_path / "m", hidden_size=hidden, num_layers=1, num_heads=4)
    extra = {} if setting is None else {"activation_checkpointing": setting}
    t = _trainer(tmp_path / "run", model_name=str(model), max_steps=2, **extra)
    final = t.train(sft_rows)["final"]
    assert final["activation_checkpointing"] is expected
    assert final["global_step"] == 2
