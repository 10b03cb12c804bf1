"""leantrain.progress."""
