"""``leantrain prove``, declared for core's registry: best-first proof search over a split of
an export or a benchmark file (:func:`leantrain.prover.runner.prove_command`)."""

from __future__ import annotations

from leantrain.core.command import Command


def register() -> list[Command]:
    """The ``prove`` and ``prove-merge`` commands of the ``leantrain`` CLI (entry point
    ``leantrain.commands``)."""
    return [
        Command(
            "prove",
            "prove theorems with a trained tactic generator (best-first search)",
            "leantrain.prover.runner:prove_command",
            groups=("leantrain.prover.prover_config:ProveArgs",),
            metrics=("replay_proof_rate", "proof_rate"),
        ),
        Command(
            "prove-merge",
            "merge the output dirs of 'prove --shard i/n' runs into one (summary recomputed)",
            "leantrain.prover.runner:merge_command",
            groups=("leantrain.prover.prover_config:MergeArgs",),
        ),
    ]
