"""Calibrate ``progress_weight`` on a validation split: the priority mixes the generator's nats
with the progress model's steps, and no single weight suits every pair of models.

:func:`tune_progress_weight` proves the split once per weight (models and backend loaded once;
the replay backend by default, so it needs no Lean) and picks the weight that proves the most
theorems, then the one that needs the fewest expansions, then the smallest;
:func:`write_weight` records it in a config YAML that ``leantrain prove --config`` reads.
``tools/tune_progress_weight.py`` is the command line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from leantrain.core.errors import ConfigError

DEFAULT_WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)


def tune_progress_weight(
    config: Mapping[str, Any],
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    **objects: Any,
) -> dict[str, Any]:
    """Prove ``config``'s split (``split``, default ``val``; backend default ``replay``) at each
    of ``weights``; ``objects`` are :class:`~leantrain.prover.Prover`'s (a generator, a
    progress model, a backend in memory). Returns ``{"best": weight, "table": [{weight,
    proved, attempted, expansions}, …]}``. Nothing is written to an output directory."""
    from leantrain.prover.prover import Prover

    if not weights:
        raise ConfigError("no progress weights to try", hint="give --weights 0,0.1,0.5,1")
    settings = {"split": "val", "backend": "replay", **config, "output_dir": ""}
    settings["progress_bar"] = False
    table: list[dict[str, Any]] = []
    prover = None
    for weight in weights:
        prover = Prover({**settings, "progress_weight": weight}, **objects)
        if prover.progress is None:
            raise ConfigError(
                "tuning progress_weight needs a progress model",
                hint="give --progress RUN (or set LEANPROGRESS_MODEL)",
            )
        objects = {  # loaded once: the next weights reuse them
            "tactic_generator": prover.generator,
            "progress_model": prover.progress,
            "lean_backend": prover.backend,
            **({"premise_source": prover.premise_source} if prover.premise_source else {}),
        }
        theorems = prover.load_theorems()
        rows = [prover.prove(t, settings["split"]) for t in theorems]
        table.append(
            {
                "progress_weight": weight,
                "proved": sum(r["proved"] for r in rows),
                "attempted": len(rows),
                "expansions": sum(r["expansions"] for r in rows),
            }
        )
    best = max(table, key=lambda r: (r["proved"], -r["expansions"], -r["progress_weight"]))
    return {"best": best["progress_weight"], "table": table}


def write_weight(path: str | Path, weight: float) -> Path:
    """Set ``progress_weight: weight`` in the YAML config ``path`` (created when absent; its
    other keys kept), atomically."""
    import yaml
    from leantrain.core.atomic import atomic_write_text

    path = Path(path)
    data: dict[str, Any] = {}
    if path.is_file():
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{path}: not a mapping of settings", hint="give a config YAML")
        data = dict(loaded or {})
    data["progress_weight"] = float(weight)
    return atomic_write_text(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
