"""leantrain.prover: prove Lean 4 theorems with what leantrain trained.

Best-first proof search (ReProver's algorithm) guided by a tactic generator asked with its
training prompt, optionally by the progress model, on Lean through leantrain-lean's contract
(``repl``, ``pantograph``, ``leandojo``; every proof found is re-checked before it counts) or
on ``replay`` (offline, the export's traced proofs: the **replay proof rate**, a lower
bound)::

    from leantrain.prover import Prover

    prover = Prover(generator="runs/sft", data="export", split="test", output_dir="proofs")
    summary = prover.evaluate()

Heavy libraries (torch, transformers) load with the generator, not on import.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from typing import Any

try:
    __version__ = _version("leantrain-prover")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

_EXPORTS = {
    "Backend": "leantrain.prover.backend",
    "BackendError": "leantrain.prover.backend",
    "Outcome": "leantrain.prover.backend",
    "Session": "leantrain.prover.backend",
    "SessionCrashed": "leantrain.prover.backend",
    "State": "leantrain.prover.backend",
    "HFGenerator": "leantrain.prover.generator",
    "LeanDojoBackend": "leantrain.lean.leandojo",
    "PremiseAugmentedGenerator": "leantrain.prover.premise_prompts",
    "PremiseSettings": "leantrain.prover.premise_prompts",
    "Prover": "leantrain.prover.prover",
    "ProverConfig": "leantrain.prover.prover_config",
    "REPLAY_METRIC": "leantrain.prover.replay",
    "ReplayBackend": "leantrain.prover.replay",
    "ProofStep": "leantrain.prover.search",
    "SearchResult": "leantrain.prover.search",
    "SearchSettings": "leantrain.prover.search",
    "StepsPredictor": "leantrain.prover.search",
    "TacticGenerator": "leantrain.prover.search",
    "best_first_search": "leantrain.prover.search",
    "summarize": "leantrain.prover.summary",
    "load_split": "leantrain.prover.theorems",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    # Lazy, so that `import leantrain.prover` (the CLI) stays cheap.
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'leantrain.prover' has no attribute {name!r}")
