"""Names other toolkits' users already have, thin over leantrain's trainers (one module per
origin). See ``PORTING.md`` at the repository root for each snippet side by side.

* :mod:`leantrain.llm.compat.hello_agents` — ``SFTTrainerWrapper``, ``GRPOTrainerWrapper``,
  ``create_sft_dataset``, ``create_rl_dataset``, ``create_accuracy_reward``,
  ``create_lora_config`` and ``RLTrainingTool`` (``run({"action": "train", …})``).

LeanDojo-v2's trainers need no compat module: ``leantrain.llm.SFTTrainer`` /
``GRPOTrainer``, ``leantrain.retrieval.RetrievalTrainer`` and
``leantrain.progress.ProgressTrainer`` take its constructor arguments and
``train(repos, database, data_path)`` as they are (the third argument is ``export_dir``).
"""
