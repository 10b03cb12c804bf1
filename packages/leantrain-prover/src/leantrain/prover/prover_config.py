"""``ProverConfig``: every setting of ``leantrain prove`` and :class:`~leantrain.prover.Prover`,
composed of this module's groups, leantrain-tactics' :class:`PromptArgs` and :class:`SplitArgs`,
leantrain-lean's :class:`LeanArgs` and core's; :class:`ProveArgs` is the command's."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Literal

from leantrain.core.config import AtLeast1, NonNegative, Positive, config_to_dict, setting
from leantrain.core.errors import ConfigError
from leantrain.core.groups import Group, OutputDir, Seed
from leantrain.lean.args import LeanArgs
from leantrain.tactics.dataset_config import EvalSplitArgs, PromptArgs, SplitArgs

UNTRACKED_KEYS = frozenset(
    [
        "output_dir",
        "theorems",
        "max_theorems",
        "progress_bar",
        "attempts",
        "shard",
        "preset",
        "num_workers",
        "ray_address",
        "engine_cache",
        "repl_command",
        "url",
    ]
)
"""Settings a run may change when it resumes in the same output directory: which theorems and
attempts are proved (each attempt has its own seed), where, by how many workers and how Lean is
reached — not how (a changed search or model, ``device``, ``generation_batch_size`` or engine
is an error: the results would mix two configurations). ``preset`` is recorded through the
settings it fills."""

PRESETS: dict[str, dict[str, Any]] = {
    # ReProver (Yang et al. 2023, prover/evaluate.py): 64 beams, no expansion cap, 600 s; its
    # ByT5 tactics are at most 512 tokens = 512 bytes, and a BPE token is at least one byte,
    # so 512 new tokens never cut a tactic ReProver could write
    "reprover": {
        "num_sampled_tactics": 64,
        "max_expansions": None,
        "timeout": 600.0,
        "max_new_tokens": 512,
        "decoding": "beam",
    },
    # BFS-Prover (Xin et al. 2025; V2 keeps its search): a budget of 2048 x 2 x 600 — passes x
    # sampled tactics per expansion x expansions — with length normalisation (depth exponent
    # 1); one pass here (--attempts gives more), the wall-clock timeout left at ours
    "bfs-prover": {
        "num_sampled_tactics": 2,
        "max_expansions": 600,
        "decoding": "sample",
        "depth_exponent": 1.0,
    },
}
"""The settings each ``--preset`` fills (those not given explicitly)."""


@dataclass
class SearchArgs(Group):
    """How the best-first search spends its budget and asks the generator."""

    num_sampled_tactics: AtLeast1 = setting(8, "Tactics asked per expanded state.", aliases=("k",))
    max_expansions: AtLeast1 | None = setting(100, "Most expansions per theorem (null: no limit).")
    max_nodes: AtLeast1 | None = setting(None, "Most distinct states per theorem (null: no limit).")
    timeout: Positive = setting(600.0, "Wall-clock seconds per theorem.")
    depth_exponent: NonNegative = setting(
        0.0, "Priority = path's tactic scores summed / depth**depth_exponent (0: the raw sum)."
    )
    tactic_score: Literal["sum", "mean"] = setting(
        "sum", "A tactic's score: its tokens' log-probabilities summed, or their mean per token."
    )
    expansion_batch: AtLeast1 = setting(
        1, "States expanded in one batched generator call (1: strict best-first order)."
    )
    decoding: Literal["beam", "sample"] = setting("beam", "How the k tactics are generated.")
    temperature: Positive = setting(1.0, "Sampling temperature.")
    max_new_tokens: AtLeast1 = setting(64, "Longest tactic, in tokens.")
    generation_batch_size: AtLeast1 = setting(8, "Most states per generate call.")
    attempts: AtLeast1 = setting(
        1, "Independent searches per theorem, each seeded from (seed, theorem, attempt): pass@k."
    )
    preset: Literal["reprover", "bfs-prover"] | None = setting(
        None,
        "Fill the settings not given with an anchor's budget: reprover (k 64, no expansion cap, "
        "600 s, 512-token tactics, beam), bfs-prover (2 sampled tactics x 600 expansions, "
        "depth exponent 1; its 2048 passes are --attempts).",
    )
    shard: str | None = setting(
        None,
        "i/n: prove only shard i of n of the theorems selected (a stable hash of the theorem "
        "id picks it); merge the shards with 'leantrain prove-merge'.",
    )
    num_workers: AtLeast1 = setting(
        1, "Prover actors on Ray sharing one generator (over 1 needs leantrain-prover[ray])."
    )
    ray_address: str | None = setting(None, "Ray cluster to join (default: a local one).")

    feedback_rounds: Literal[0, 1] = setting(
        0, "--mode whole: 1 asks once more after each failed attempt, with Lean's messages."
    )
    max_proof_tokens: AtLeast1 = setting(
        512, "--mode whole: longest proof, in tokens (--attempts proofs sampled per theorem)."
    )

    def check_group(self) -> None:
        """A shard that is not ``i/n`` with ``0 <= i < n``: one line."""
        m = re.fullmatch(r"(\d+)/(\d+)", self.shard or "")
        if self.shard is not None and not (m and int(m[1]) < int(m[2])):
            raise ConfigError(
                f"--shard {self.shard!r} is not i/n with 0 <= i < n",
                hint="e.g. --shard 0/4 … --shard 3/4 for four shards",
            )


@dataclass
class ModelsArgs(Group):
    """The models that guide the search, and where they run."""

    generator: str = setting(
        "",
        "Tactic generator: a leantrain run dir (runs/sft), a model or LoRA adapter dir, a GGUF "
        "file, 'tiny' or a hub id. Asked with the prompt of its prompt.json.",
    )
    progress: str | None = setting(
        None,
        "Progress model (run or model dir) whose predicted steps remaining join the node "
        "priority (needs leantrain-prover[progress]).",
    )
    progress_weight: NonNegative = setting(
        1.0, "Priority = log-probability − progress_weight × predicted steps."
    )
    progress_input: Literal["parent", "child"] = setting(
        "parent", "Progress model reads the parent goal + tactic, or the child state Lean returned."
    )
    engine: Literal["hf", "ct2", "vllm"] = setting(
        "hf", "Generation engine: hf (transformers), ct2 (CTranslate2: [ct2] extra) or vllm (GPU)."
    )
    ct2_compute_type: Literal[
        "auto", "int8", "int8_float32", "int8_float16", "int16", "float16", "bfloat16", "float32"
    ] = setting(
        "auto",
        "CTranslate2 compute type (auto: int8_float16 on CUDA; int8 on CPUs with exact int8 "
        "arithmetic (x86 VNNI/AMX, ARM), else float32).",
    )
    engine_cache: str | None = setting(
        None,
        "Where ct2 / vllm keep converted models (default: OUTPUT_DIR/engine-cache).",
        aliases=("ct2_cache",),
    )
    prompt_override: bool = setting(
        False,
        "Ask with the given system_prompt / retriever / num_premises / max_premise_chars even "
        "where they differ from the generator's prompt.json (otherwise an error).",
    )
    device: str | None = setting(None, "cpu, cuda or cuda:N (default: cuda when available).")

    def check_group(self) -> None:
        """A device torch does not know, or CUDA on a machine without it: one line now."""
        if self.device is not None and not re.fullmatch(r"cpu|cuda(:\d+)?", self.device):
            raise ConfigError(
                f"--device {self.device!r} is no device of the prover",
                hint="give cpu, cuda or cuda:N, or leave --device out",
            )
        if self.device and self.device.startswith("cuda"):
            import torch

            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            index = int(self.device.partition(":")[2] or 0)
            if index >= count:
                found = f"{count} CUDA device(s)" if count else "no CUDA GPU"
                raise ConfigError(
                    f"--device {self.device}: this machine has {found}",
                    hint="--device cpu, or leave --device out (cuda when available)",
                )


@dataclass
class MergeArgs(OutputDir, defaults={"output_dir": dataclasses.MISSING}):
    """``leantrain prove-merge``: shard runs into one run directory (``output_dir``)."""

    runs: list[str] = setting(
        help="Output directories of the runs to merge (the shards of one run).", positional=True
    )


@dataclass
class TheoremArgs(EvalSplitArgs):
    """Which theorems are proved (of the split :class:`EvalSplitArgs` names). The results go to
    core's ``output_dir``: results.jsonl, summary.json and proofs.json (theorems done are
    skipped on a rerun); a ``.jsonl`` name puts the run in NAME/ and copies its rows to
    NAME.jsonl."""

    data: str = setting(
        "",
        "Theorems: an export dir (leantrain export merge), a split dir or file, or a benchmark "
        "JSONL file (miniF2F / ProofNet / NuminaMath-LEAN rows).",
    )
    theorems: list[str] = setting([], "Theorems to prove, by full name (repeatable; default: all).")
    max_theorems: AtLeast1 | None = setting(None, "Prove at most this many theorems of the split.")
    progress_bar: bool = setting(True, "Show a bar over theorems.")


@dataclass
class ProverConfig(
    SearchArgs,
    ModelsArgs,
    TheoremArgs,
    PromptArgs,
    SplitArgs,
    LeanArgs,
    Seed,
    OutputDir,
    defaults={"output_dir": ""},
):
    """Settings of a proof-search run (see each group); from Python, ``generator``, ``data``
    and ``output_dir`` may be left out (a generator object, theorems given, no results
    written)."""

    @classmethod
    def moved_key(cls, key: str, value: Any) -> ConfigError | None:
        """``length_normalize``, now ``depth_exponent`` 1: one line giving the new spelling
        (core's hook for dicts, YAML and flags)."""
        if key != "length_normalize":
            return None
        return ConfigError(
            "'length_normalize' is now 'depth_exponent' (length_normalize: true is 1)",
            hint="give --depth-exponent 1 (YAML: depth_exponent: 1), or leave it out",
        )

    def check_group(self) -> None:
        """``backend`` is LeanArgs'; unset, prove's default is ``replay``. The whole-proof
        settings are refused in tactic mode (they would be ignored)."""
        self.backend = self.backend_or("replay")
        for key in ("feedback_rounds", "max_proof_tokens"):  # at their defaults in tactic mode
            if self.mode == "tactic" and getattr(self, key) != getattr(SearchArgs, key):
                flag = "--" + key.replace("_", "-")
                raise ConfigError(
                    f"{flag} is a setting of --mode whole; a tactic search does not use it",
                    hint=f"add --mode whole, or leave {flag} out (tactics: --max-new-tokens)",
                )

    def tracked(self) -> dict[str, Any]:
        """The settings a resumed run must share with the run it continues."""
        return {k: v for k, v in config_to_dict(self).items() if k not in UNTRACKED_KEYS}


def finalize(config: ProverConfig) -> ProverConfig:
    """Fill the settings ``config.preset`` names and ``config`` does not give (from the command
    line: its flags or ``--config`` file; from Python: those at their default), then refuse
    ``attempts > 1`` under beam search (every attempt would be the same search; whole-proof
    mode always samples). Idempotent."""
    from leantrain.core.parser import given

    if config.preset is not None:
        default = ProverConfig()
        preset = PRESETS[config.preset]
        named = given(config) or {k for k in preset if getattr(config, k) != getattr(default, k)}
        for key, value in preset.items():
            if key not in named:
                setattr(config, key, value)
    if config.attempts > 1 and config.decoding == "beam" and config.mode == "tactic":
        raise ConfigError(
            f"--attempts {config.attempts} with --decoding beam: beam search is deterministic, "
            "so every attempt would be the same search",
            hint="--decoding sample for independent attempts, or --attempts 1",
        )
    return config


@dataclass
class ProveArgs(
    ProverConfig, defaults=dict.fromkeys(("generator", "data", "output_dir"), dataclasses.MISSING)
):
    """Required: the generator, the theorems and the output directory."""


def tracked_defaults() -> dict[str, Any]:
    """The tracked settings' defaults: a setting added since an older run recorded its config
    is no change when it keeps its default, nor is one removed since that the older run
    recorded at its default (``length_normalize: false``): the older run resumes."""
    return {**ProverConfig().tracked(), "length_normalize": False}
