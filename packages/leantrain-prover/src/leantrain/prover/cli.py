"""``leantrain prove``: best-first proof search over a split of an export or a benchmark file.

Imported by every ``leantrain`` invocation, so nothing heavy loads at module level. Bad input
is checked in the order that writes nothing before it is known to be good: settings, theorems,
backend (the REPL command for ``repl``, Lean and lean-dojo and the trace cache for
``leandojo``), output directory, then the models; only then is
the output directory created.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from leantrain.core.atomic import atomic_write_bytes
from leantrain.core.command import Command
from leantrain.core.config import parse_cli
from leantrain.core.errors import ConfigError


def run(argv: list[str]) -> int:
    """Run ``leantrain prove …``; prints the summary as JSON on stdout and its headline on
    stderr."""
    from leantrain.prover.prover_config import ProverConfig
    from leantrain.prover.results import RESULTS

    cfg = parse_cli(
        ProverConfig,
        argv,
        aliases={"out": "output_dir", "k": "num_sampled_tactics"},
        prog="leantrain prove",
        description="Prove theorems of an export with best-first search guided by a trained "
        "tactic generator.",
    )
    if not cfg.generator:
        raise ConfigError("prove needs --generator", hint="--generator runs/sft (or a model dir)")
    if not cfg.data:
        raise ConfigError(
            "prove needs --data",
            hint="--data EXPORT_DIR (leantrain export merge) or a benchmark .jsonl",
        )
    results_file = None
    if cfg.output_dir.endswith(".jsonl"):
        # --out proofs.jsonl: the run (resume state, summary, proofs) goes into proofs/, and
        # its results.jsonl is copied to proofs.jsonl when the run ends
        results_file = Path(cfg.output_dir)
        cfg.output_dir = str(results_file.with_suffix(""))
        if results_file.exists() and not (Path(cfg.output_dir) / RESULTS).is_file():
            raise ConfigError(
                f"--output-dir {results_file}: the file exists and {cfg.output_dir}/ holds no "
                "proof run that wrote it",
                hint="give a new file name, or remove the file",
            )
    elif cfg.output_dir.endswith(".json"):
        raise ConfigError(
            f"--output-dir {cfg.output_dir!r} looks like a file name",
            hint="results go into a directory (results.jsonl, summary.json, proofs.json): "
            "--output-dir proofs, or a .jsonl file for the per-theorem rows",
        )
    from leantrain.prover.prover import Prover, make_backend
    from leantrain.prover.results import ResultStore
    from leantrain.prover.summary import one_line
    from leantrain.prover.theorems import load_split

    theorems = load_split(
        cfg.data,
        cfg.split,
        split_strategy=cfg.split_strategy,
        names=cfg.theorems,
        limit=cfg.max_theorems,
    )
    backend = make_backend(cfg)  # a missing REPL, Lean or lean-dojo: said before anything else
    from leantrain.prover.prover import check_theorems

    check_theorems(backend, theorems)  # an untraced repository, no --lean-project: one line
    if not cfg.output_dir:
        raise ConfigError("prove needs --output-dir", hint="--output-dir proofs/new")
    metric = str(getattr(backend, "metric", "proof rate"))
    from leantrain.prover.premise_prompts import check_premise_settings, premise_settings

    # the effective premise settings (also those from the generator's run) are part of the
    # recorded config: another retriever checkpoint into the same --output-dir is refused
    premises = check_premise_settings(premise_settings(cfg), cfg)
    from leantrain.prover.prover_config import tracked_defaults

    ResultStore(
        cfg.output_dir, {**cfg.tracked(), **premises.record(cfg)}, metric, tracked_defaults()
    ).check()
    prover = Prover(cfg, lean_backend=backend)
    summary = prover.evaluate(theorems)
    where = cfg.output_dir
    if results_file is not None:
        atomic_write_bytes(results_file, (Path(cfg.output_dir) / RESULTS).read_bytes())
        where = f"{results_file} (the run, to resume: {cfg.output_dir}/)"
    print(json.dumps(summary, ensure_ascii=False, indent=2))
    print(one_line(summary) + f"; results in {where}", file=sys.stderr)
    return 0


def register() -> list[Command]:
    """The ``prove`` command of the ``leantrain`` CLI."""
    return [
        Command(
            "prove",
            "prove theorems with the trained models (best-first search)",
            run,
            metrics=("replay_proof_rate", "proof_rate"),
        )
    ]
