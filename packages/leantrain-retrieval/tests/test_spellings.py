"""One definition per setting: a model setting, a data setting, a setting both share and a
Lightning setting, given in each spelling (flags with aliases, Python, a dict, YAML), reach the
LightningModule's hparams and optimizer, the data module and the Trainer."""

from leantrain.core.cli import main
from leantrain.core.config import config_from_dict
from leantrain.core.parser import parse_cli
from leantrain.retrieval import RetrievalConfig, RetrievalTrainer


def test_a_setting_reaches_the_model_the_data_and_the_trainer_in_every_spelling(
    tmp_path, synthetic_export, monkeypatch
):
    seen = {}
    real = RetrievalTrainer._lightning_trainer

    def spy(self, step, callbacks):
        seen["config"] = self.config
        seen["trainer"] = real(self, step, callbacks)
        return seen["trainer"]

    monkeypatch.setattr(RetrievalTrainer, "_lightning_trainer", spy)
    out, data = str(tmp_path / "run"), str(synthetic_export)
    small = {"tiny_d_model": 32, "tiny_layers": 1, "evaluate_each_repo": False}
    small |= {"report_to": "none", "data_path": data, "output_dir": out}
    argv = ["retrieval", "train", "--model", "tiny", "--data", data, "--output-dir", out]
    argv += ["--lr", "0.002", "--batch-size", "4", "--context-max-len", "48"]
    argv += ["--max-steps", "2", "--accelerator", "cpu", "--tiny-d-model", "32"]
    argv += ["--tiny-layers", "1", "--evaluate-each-repo", "false", "--report-to", "none"]
    assert main(argv) == 0

    trainer = seen["trainer"]
    assert trainer.max_steps == 2 and trainer.global_step == 2
    model, dm = trainer.lightning_module, trainer.datamodule
    assert model.hparams.learning_rate == 0.002 and model.hparams.context_max_len == 48
    assert model.optimizers().optimizer.param_groups[0]["initial_lr"] == 0.002
    assert dm.hparams.batch_size == 4 and dm.hparams.context_max_len == 48
    assert dm.train_dataloader().batch_size == 4

    trainer_section = {"max_steps": 2, "accelerator": "cpu"}
    python = RetrievalConfig(
        learning_rate=0.002, batch_size=4, context_max_len=48, trainer=trainer_section, **small
    )
    as_dict = config_from_dict(
        RetrievalConfig,
        {"lr": 0.002, "batch_size": 4, "context_max_len": 48, "trainer": trainer_section, **small},
    )
    yaml_file = tmp_path / "r.yaml"
    yaml_file.write_text(
        "learning_rate: 0.002\nbatch_size: 4\ncontext_max_len: 48\n"
        "trainer: {max_steps: 2, accelerator: cpu}\n"
        + "".join(
            f"{k}: {str(v).lower() if isinstance(v, bool) else v}\n" for k, v in small.items()
        )
    )
    from_yaml = parse_cli(RetrievalConfig, ["--config", str(yaml_file)])
    assert python == as_dict == from_yaml == seen["config"]
