"""leantrain.llm."""
