"""leantrain.retrieval."""
