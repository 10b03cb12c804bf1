"""leantrain.pipeline."""
