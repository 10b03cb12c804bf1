"""LeanDojo-v2's RetrievalTrainer calls: ``evaluate()`` with no argument (the config's data),
``evaluate(dataset_path=…)``, and ``save(path)``."""

import pytest
from leantrain.core.errors import ConfigError
from leantrain.retrieval import PremiseRetriever, RetrievalTrainer


def test_evaluate_defaults_to_the_configured_data_and_save_reloads(
    tmp_path, synthetic_export, make_config
):
    trainer = RetrievalTrainer(
        make_config(max_steps=1, evaluate_after_repo=False, data_path=str(synthetic_export))
    )
    trainer.train()
    metrics = trainer.evaluate()
    assert metrics == trainer.evaluate(dataset_path=synthetic_export)
    assert metrics == trainer.evaluate(synthetic_export, "test")
    assert metrics["count"] > 0 and 0.0 <= metrics["R@10"] <= 1.0
    trainer.save(tmp_path / "saved")
    assert PremiseRetriever.from_pretrained(tmp_path / "saved").encode_texts(["⊢ a"]).ndim == 2


def test_evaluate_without_any_data_says_what_to_pass(make_config):
    with pytest.raises(ConfigError, match="nothing to evaluate on"):
        RetrievalTrainer(make_config()).evaluate()
