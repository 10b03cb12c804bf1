"""leantrain.export."""
