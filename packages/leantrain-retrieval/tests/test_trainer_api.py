"""LeanDojo-v2's RetrievalTrainer calls: ``evaluate()`` with no argument (the config's data),
``evaluate(dataset_path=…)``, and ``save(path)``."""

import pytest
from leantrain.core.errors import ConfigError
from leantrain.retrieval import PremiseRetriever, RetrievalTrainer


def test_evaluate_defaults_to_the_configured_data_and_save_reloads(
    tmp_path, synthetic_export, make_config
):
    trainer = RetrievalTrainer(
        make_config(max_steps=1, evaluate_each_repo=False, data_path=str(synthetic_export))
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


@pytest.mark.slow
def test_training_through_the_api_prints_no_engine_chatter(tmp_path, synthetic_export):
    """Lightning's litlogger tip and torch's LeafSpec deprecation (raised inside Lightning) used
    to be printed by every ``RetrievalTrainer.train()`` outside the CLI (a fresh process: the
    way a user's script runs)."""
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    script = textwrap.dedent(f"""
        import logging, sys, warnings
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from conftest import tiny_config
        from pathlib import Path
        from leantrain.retrieval import RetrievalTrainer
        warnings.simplefilter("default")
        cfg = tiny_config(Path({str(tmp_path)!r}), max_steps=1, evaluate_each_repo=False,
                          data_path={str(synthetic_export)!r})
        RetrievalTrainer(cfg).train()
        # the filters were scoped to training: nothing stays behind
        assert not logging.getLogger("lightning.pytorch.utilities.rank_zero").filters
        print("trained")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "trained" in proc.stdout
    assert "litlogger" not in proc.stdout + proc.stderr
    assert "LeafSpec" not in proc.stderr
