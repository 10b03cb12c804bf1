"""leantrain.tactics."""
