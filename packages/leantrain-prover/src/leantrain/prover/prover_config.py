"""``ProverConfig``: every setting of ``leantrain prove`` and :class:`~leantrain.prover.Prover`.

Filled like every leantrain config (:mod:`leantrain.core.config`): from Python, a dict, a
YAML file (``--config``) or flags; unknown keys are errors, help texts live in
``metadata["help"]`` only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from leantrain.core.config import check_numbers, validate_fields
from leantrain.lean.args import LeanArgs

BACKENDS = ("replay", "repl", "pantograph", "leandojo")
"""What ``prove`` searches on (``backend`` is LeanArgs'; ``kimina`` is refused in one line:
it checks whole proofs only)."""

UNTRACKED_KEYS = frozenset(
    {
        "output_dir",
        "theorems",
        "max_theorems",
        "progress_bar",
        "device",
        "generation_batch_size",
        "repl_command",
        "url",
    }
)
"""Settings that may change between a run and its resumption in the same output directory:
they choose which theorems are proved and where, not how (a changed search or model is an
error, since the results would mix two configurations). ``repl_command`` and ``url`` say how
Lean is reached (a REPL binary moved, a server on another port), not what it is asked."""


@dataclass
class ProverConfig(LeanArgs):
    """Settings of a proof-search run (see each field's help); the backend and how Lean is
    reached (``backend`` — default ``replay`` here —, ``repl_command``, ``lean_project``,
    ``url``, ``tactic_timeout``, ``start_timeout``, ``memory_limit_mb``, ``allowed_axioms``)
    are leantrain-lean's :class:`LeanArgs`."""

    generator: str = field(
        default="",
        metadata={
            "help": "Tactic generator: a leantrain run dir (runs/sft), a model or LoRA adapter "
            "dir, a GGUF file, 'tiny' or a hub id. Asked with the prompt it was trained with."
        },
    )
    progress: str | None = field(
        default=None,
        metadata={
            "help": "Progress model (run or model dir) whose predicted steps remaining join the "
            "node priority (needs leantrain-prover[progress])."
        },
    )
    progress_weight: float = field(
        default=1.0,
        metadata={"help": "Priority = log-probability − progress_weight × predicted steps."},
    )
    retriever: str | None = field(
        default=None,
        metadata={
            "help": "Premise retriever (retrieval run or saved retriever dir) whose top premises "
            "accessible from the theorem lead each prompt (needs leantrain-prover[retrieval]). "
            "Default: the one the generator's run trained with (none for a plain model); '': none."
        },
    )
    num_premises: int | None = field(
        default=None,
        metadata={"help": "Premises per prompt (default: the generator's training setting)."},
    )
    max_premise_chars: int | None = field(
        default=None,
        metadata={
            "help": "Character budget of the premises in a prompt (default: the training one)."
        },
    )
    prompt_override: bool = field(
        default=False,
        metadata={
            "help": "Ask with the given retriever / num_premises / max_premise_chars even where "
            "they differ from what the generator's run trained with (otherwise an error)."
        },
    )
    data: str = field(
        default="",
        metadata={
            "help": "Theorems: an export dir (leantrain export merge), a split dir or file, or "
            "a benchmark JSONL file (miniF2F / ProofNet / NuminaMath-LEAN rows)."
        },
    )
    split: str = field(
        default="test",
        metadata={"help": "Split of --data to prove.", "choices": ("train", "val", "test")},
    )
    split_strategy: str = field(
        default="random",
        metadata={
            "help": "Split strategy directory of an export.",
            "choices": ("random", "novel_premises"),
        },
    )
    theorems: list[str] = field(
        default_factory=list,
        metadata={"help": "Full names of the theorems to prove (repeatable; default: all)."},
    )
    max_theorems: int | None = field(
        default=None, metadata={"help": "Prove at most this many theorems of the split."}
    )
    output_dir: str = field(
        default="",
        metadata={
            "help": "Directory of results.jsonl, summary.json and proofs.json; rerunning into "
            "it resumes (theorems done are skipped)."
        },
    )
    num_sampled_tactics: int = field(
        default=8, metadata={"help": "Tactics asked of the generator per expanded state (k)."}
    )
    max_expansions: int | None = field(
        default=100, metadata={"help": "Most states expanded per theorem (null: no limit)."}
    )
    max_nodes: int | None = field(
        default=None, metadata={"help": "Most distinct states per theorem (null: no limit)."}
    )
    timeout: float = field(default=600.0, metadata={"help": "Wall-clock seconds per theorem."})
    length_normalize: bool = field(
        default=False,
        metadata={"help": "Divide a node's cumulative log-probability by its depth."},
    )
    expansion_batch: int = field(
        default=1,
        metadata={
            "help": "Open states expanded together in one batched generator call (1: strict "
            "best-first order)."
        },
    )
    decoding: str = field(
        default="beam",
        metadata={
            "help": "How the k tactics are generated: beam search or sampling.",
            "choices": ("beam", "sample"),
        },
    )
    temperature: float = field(default=1.0, metadata={"help": "Sampling temperature."})
    max_new_tokens: int = field(default=64, metadata={"help": "Longest tactic, in tokens."})
    generation_batch_size: int = field(
        default=8, metadata={"help": "Most states per generate call."}
    )
    system_prompt: str | None = field(
        default=None,
        metadata={
            "help": "System prompt (default: the one the generator's run trained with, else "
            "leantrain's default)."
        },
    )
    device: str | None = field(
        default=None, metadata={"help": "cpu or cuda (default: cuda when available)."}
    )
    seed: int = field(default=0, metadata={"help": "Random seed (sampling)."})
    progress_bar: bool = field(default=True, metadata={"help": "Show a bar over theorems."})

    def __post_init__(self) -> None:
        validate_fields(self)  # LeanArgs' constraints and check_group
        self.backend = self.backend_or("replay")  # prove's default backend
        check_numbers(
            self,
            {
                "num_sampled_tactics": ">=1",
                "max_expansions": ">=1",
                "max_nodes": ">=1",
                "max_theorems": ">=1",
                "timeout": ">0",
                "expansion_batch": ">=1",
                "temperature": ">0",
                "max_new_tokens": ">=1",
                "generation_batch_size": ">=1",
                "progress_weight": ">=0",
                "num_premises": ">=1",
                "max_premise_chars": ">=1",
                "seed": ">=0",
            },
        )

    def tracked(self) -> dict[str, Any]:
        """The settings a resumed run must share with the run it continues."""
        from leantrain.core.config import config_to_dict

        return {k: v for k, v in config_to_dict(self).items() if k not in UNTRACKED_KEYS}


def tracked_defaults() -> dict[str, Any]:
    """The tracked settings' defaults: a setting added since an older run recorded its config
    is no change when it keeps its default (the older run resumes)."""
    return ProverConfig().tracked()
