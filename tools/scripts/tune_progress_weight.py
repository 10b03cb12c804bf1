"""Sweep ``progress_weight`` on a validation split and write the best one into a config YAML.

    uv run python tools/scripts/tune_progress_weight.py --weights 0,0.1,0.5,1 \
        --write-config prove.yaml --generator runs/sft --progress runs/progress \
        --data merged --split val [any other `leantrain prove` setting]

The split is proved once per weight with the replay backend (unless ``--backend`` says
otherwise), models loaded once (:func:`leantrain.prover.tuning.tune_progress_weight`); the
table and the best weight are printed as JSON, and ``progress_weight`` is set in
``--write-config`` (its other keys kept): ``leantrain prove --config prove.yaml …``.
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    from leantrain.core.errors import LeanTrainError
    from leantrain.core.parser import parse
    from leantrain.prover.prover_config import ProverConfig
    from leantrain.prover.tuning import DEFAULT_WEIGHTS, tune_progress_weight, write_weight

    own = argparse.ArgumentParser(add_help=False)
    own.add_argument("--weights", default=",".join(map(str, DEFAULT_WEIGHTS)))
    own.add_argument("--write-config", default=None)
    args, rest = own.parse_known_args(sys.argv[1:] if argv is None else argv)
    try:
        weights = [float(w) for w in args.weights.split(",") if w.strip()]
    except ValueError:
        print(f"error: --weights {args.weights!r}: give numbers, e.g. 0,0.1,0.5,1", file=sys.stderr)
        return 2
    try:
        (cfg,) = parse((ProverConfig,), ["--split", "val", *rest], prog="tune_progress_weight")
        from leantrain.core.config import config_to_dict

        result = tune_progress_weight(config_to_dict(cfg), weights)
        if args.write_config:
            result["written"] = str(write_weight(args.write_config, result["best"]))
    except LeanTrainError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
