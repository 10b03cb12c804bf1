import json

import pytest
import torch
from leantrain.core.errors import CheckpointError, ConfigError, DataError
from leantrain.llm import SFTTrainer, create_lora_config, tactic_accuracy
from leantrain.llm.lora import check_target_modules


def _trainer(tmp_path, name="run", **kw):
    args = {
        "model_name": "tiny",
        "output_dir": tmp_path / name,
        "lr": 3e-3,
        "batch_size": 3,
        "max_steps": 60,
        "logging_steps": 5,
        "eval_split": "",
        "save_steps": 1000,
    }
    args.update(kw)
    return SFTTrainer(**args)


def test_only_tactic_tokens_carry_loss(sft_rows, taught, tmp_path):
    import trl

    t = _trainer(tmp_path)
    trl_trainer = trl.SFTTrainer(
        model=t.model,
        args=t._stage_args(tmp_path / "s"),
        train_dataset=sft_rows,
        processing_class=t.tokenizer,
    )
    batch = trl_trainer.data_collator([trl_trainer.train_dataset[i] for i in range(3)])
    for ids, labels in zip(batch["input_ids"], batch["labels"]):
        kept = t.tokenizer.decode(ids[labels != -100])
        assert kept.startswith(tuple(tac for _, tac in taught))
        assert kept.rstrip("\n").endswith("<|im_end|>")
        assert "⊢" not in kept and "system" not in kept


def test_sft_memorises_taught_tactics_and_reloads_identically(sft_rows, taught, tmp_path):
    t = _trainer(tmp_path)
    result = t.train(sft_rows)
    metrics = result["final"]
    assert metrics["last_loss"] < metrics["first_loss"] / 3
    pairs = [(row["prompt"], row["completion"][0]["content"]) for row in sft_rows]
    acc = tactic_accuracy(t.model, t.tokenizer, pairs, k=2)
    assert acc["top1_accuracy"] == 1.0
    assert t.suggest_tactics(taught[1][0], k=2)[0] == taught[1][1]

    reloaded = SFTTrainer.from_pretrained(result["output_dir"])
    enc = t.tokenizer("⊢ a = a", return_tensors="pt")
    with torch.no_grad():
        assert torch.equal(t.model(**enc).logits, reloaded.model(**enc).logits)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["completed_repos"] == ["dataset"]


class _Kill(Exception):
    pass


def _killer(at_step, stage=None):
    from transformers import TrainerCallback

    class Killer(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == at_step and (stage is None or args.output_dir.endswith(stage)):
                raise _Kill

    return Killer()


def test_resume_after_kill_continues_at_the_saved_step(sft_rows, tmp_path):
    kw = {"max_steps": 8, "save_steps": 2, "logging_steps": 1}
    with pytest.raises(_Kill):
        _trainer(tmp_path, callbacks=[_killer(5)], **kw).train(sft_rows)
    position = json.loads((tmp_path / "run" / "manifest.json").read_text())["position"]
    assert position["step"] == 4 and position["repo"] == "dataset"

    again = _trainer(tmp_path, **kw)
    result = again.train(sft_rows)
    assert result["final"]["global_step"] == 8
    state = json.loads(
        next(
            (tmp_path / "run" / "stages" / "000").glob("checkpoint-8/trainer_state.json")
        ).read_text()
    )
    logged = [e["step"] for e in state["log_history"] if "loss" in e]
    # steps 1-4 come from the first run's checkpoint, 5-8 from the resumed run: no step 1 again
    assert logged == sorted(set(logged)) and logged[-1] == 8


def test_lifelong_over_repos_resumes_at_the_interrupted_repo(tmp_path):
    from leantrain.export import Database

    db = Database(tmp_path / "lt.db")
    repos = db.import_sample()[:2]
    kw = {"max_steps": 4, "save_steps": 2, "logging_steps": 1, "eval_split": "", "batch_size": 4}
    first = _trainer(tmp_path, callbacks=[_killer(3, stage="001")], **kw)
    with pytest.raises(_Kill):
        first.train(repos, db, tmp_path / "data")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["completed_repos"] == repos[:1]
    assert manifest["position"]["repo"] == repos[1] and manifest["position"]["repo_index"] == 1

    result = _trainer(tmp_path, **kw).train(repos, db, tmp_path / "data")
    assert list(result["per_repo"]) == repos
    assert len(result["checkpoints"]) == 2


def test_lora_saves_only_the_adapter_and_chains_into_grpo(sft_rows, tmp_path):
    from leantrain.llm import GRPOTrainer

    t = _trainer(tmp_path, max_steps=3, lora_config={"r": 4, "lora_alpha": 8})
    result = t.train(sft_rows)
    model_dir = tmp_path / "run" / "model"
    assert (model_dir / "adapter_model.safetensors").is_file()
    assert not (model_dir / "model.safetensors").exists()
    assert all(
        "lora" in k
        for k in __import__("safetensors.torch").torch.load_file(
            model_dir / "adapter_model.safetensors"
        )
    )

    rl = sft_rows.map(
        lambda r: {"reference": r["completion"][0]["content"]}, remove_columns=["completion"]
    )
    g = GRPOTrainer(
        model_name=result["output_dir"],
        output_dir=tmp_path / "grpo",
        reward_funcs=["format"],
        max_steps=1,
        max_completion_length=8,
        eval_split="",
    )
    before = {k: v.clone() for k, v in g.model.named_parameters() if v.requires_grad}
    assert before and all("lora" in k for k in before)  # GRPO continues training the SFT adapter
    g.train(rl)
    assert (tmp_path / "grpo" / "model" / "adapter_config.json").is_file()


def test_lora_target_module_missing_is_an_error(tmp_path):
    t = _trainer(tmp_path, lora_config=create_lora_config(target_modules=["query_key_value"]))
    with pytest.raises(ConfigError, match=r"query_key_value.*not found"):
        t.model  # noqa: B018
    from leantrain.llm import build_tiny_model

    model, _ = build_tiny_model()
    check_target_modules(model, create_lora_config(target_modules=["q_proj"]))  # present: fine


def test_missing_data_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="not found"):
        _trainer(tmp_path).train(tmp_path / "nope")
    with pytest.raises(ConfigError, match="no training data"):
        _trainer(tmp_path).train()


def test_corrupted_checkpoint_is_a_checkpoint_error(sft_rows, tmp_path):
    result = _trainer(tmp_path, max_steps=2).train(sft_rows)
    weights = tmp_path / "run" / "model" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="corrupted"):
        SFTTrainer.from_pretrained(result["output_dir"])
    ckpt = tmp_path / "run" / "checkpoints" / "repo-000" / "model.safetensors"
    data = bytearray(ckpt.read_bytes())
    data[-1] ^= 0xFF  # a flipped byte inside the tensor data: only the manifest checksum sees it
    ckpt.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="checksum"):
        _trainer(tmp_path).train(sft_rows.select([0]))


def test_real_export_dir_trains_and_evaluates(lean4_example, tmp_path):
    t = _trainer(tmp_path, max_steps=4, eval_split="val", max_eval_samples=4, eval_k=2)
    result = t.train(lean4_example)
    assert {"val_eval_loss", "val_top1_accuracy", "val_top2_accuracy"} <= set(result["final"])
    metrics = t.evaluate("test", data=lean4_example)
    assert metrics["num_examples"] > 0 and metrics["eval_loss"] > 0
