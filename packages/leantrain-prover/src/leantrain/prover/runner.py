"""The run function of ``leantrain prove`` (:func:`prove_command`). Bad input is checked in the
order that writes nothing before it is known to be good: settings (when they are read),
theorems, backend (the REPL command for ``repl``, Lean and lean-dojo and the trace cache for
``leandojo``), output directory, then the models; only then is the output directory created.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_bytes
from leantrain.core.errors import ConfigError
from leantrain.prover.prover_config import MergeArgs, ProveArgs


def prove_command(cfg: ProveArgs) -> dict[str, Any]:
    """Run ``leantrain prove …``: the summary (printed as JSON on stdout), its headline on
    stderr."""
    from leantrain.prover.results import RESULTS

    results_file = None
    assert cfg.output_dir is not None  # required by ProveArgs (the type allows None for Python)
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
    if cfg.mode == "whole":  # whole-proof generation, pass@k: leantrain.prover.whole
        from leantrain.prover.whole import prove_whole

        return prove_whole(cfg, results_file)
    from leantrain.prover.premise_prompts import check_premise_settings, premise_settings
    from leantrain.prover.prover import Prover, check_theorems, make_backend
    from leantrain.prover.prover_config import finalize, tracked_defaults
    from leantrain.prover.results import ResultStore
    from leantrain.prover.summary import one_line
    from leantrain.prover.theorems import selected_theorems

    finalize(cfg)  # the preset's settings; --attempts > 1 needs --decoding sample
    theorems = selected_theorems(cfg)
    backend = make_backend(cfg)  # a missing REPL, Lean or lean-dojo: said before anything else
    check_theorems(backend, theorems)  # an untraced repository, no --lean-project: one line
    metric = str(getattr(backend, "metric", "proof rate"))
    # the effective premise settings (also those from the generator's prompt.json) are part of
    # the recorded config: another retriever checkpoint into the same --output-dir is refused
    premises = check_premise_settings(premise_settings(cfg), cfg)
    ResultStore(
        cfg.output_dir, {**cfg.tracked(), **premises.record(cfg)}, metric, tracked_defaults()
    ).check()
    if cfg.num_workers > 1:  # no Ray: one line naming the extra, before any model loads
        from leantrain.prover.parallel import require_ray

        require_ray()
    summary = Prover(cfg, lean_backend=backend).evaluate(theorems)
    where = cfg.output_dir
    if results_file is not None:
        atomic_write_bytes(results_file, (Path(cfg.output_dir) / RESULTS).read_bytes())
        where = f"{results_file} (the run, to resume: {cfg.output_dir}/)"
    print(one_line(summary) + f"; results in {where}", file=sys.stderr)
    return summary


def merge_command(cfg: MergeArgs) -> dict[str, Any]:
    """Run ``leantrain prove-merge S0 S1 … --output-dir ALL``: the merged summary (printed as
    JSON), its headline on stderr."""
    from leantrain.prover.results import merge_runs
    from leantrain.prover.summary import one_line

    summary = merge_runs(cfg.runs, str(cfg.output_dir))
    print(one_line(summary) + f"; merged results in {cfg.output_dir}", file=sys.stderr)
    return summary
