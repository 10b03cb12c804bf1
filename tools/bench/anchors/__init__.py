"""Side-by-side benchmarks against LeanDojo-v2 1.0.9: one module per benchmark (a plug-in).

A benchmark module in this folder defines ``BENCH = Benchmark(...)``; ``tools/bench/anchor.py``
finds every such module (no list to edit) and adds a ``--<name>`` flag for it. The module is
run once per side and repeat as a script, each run in its own process:

    <python> tools/bench/anchors/<module>.py --side ours|ld2|… --inputs inputs.json

``ld2`` runs under LeanDojo-v2's throwaway venv, every other side (``ours``, and any extra side
a benchmark lists in ``Benchmark.sides``, such as ``trl`` for plain TRL) under the workspace's
interpreter. The script calls :func:`_side.main` with a ``{side: fn}`` dict; each
``fn(inputs, timer)`` does its set-up, then runs the timed work inside ``with timer:`` and
returns the number of items done (samples, premises, queries, theorems); it may set
``timer.extra`` to a dict of facts for the JSON results (a ``tokens`` count there also gives a
tokens/s line in the table). Module-level imports must be stdlib only, so that the driver can
import the module to read ``BENCH`` without torch or LeanDojo-v2.

``prepare(work, args)`` (run once, in the driver's process, under the workspace) writes the
inputs both sides read — the same files and model directories for both — and returns them as
a JSON-able dict. A missing data file is an error (:func:`require`), never a silent substitute.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
DATA = (ROOT / ".." / "shared" / "data").resolve()
MATHLIB = DATA / "mathlib-sample" / "test.json"
LB4 = DATA / "leandojo-benchmark-4-head" / "test_head.json"


@dataclass(frozen=True)
class Benchmark:
    """One row of the comparison table."""

    name: str  # flag name: ``--<name>``
    title: str  # the "what" column of the table
    unit: str  # what one item is, per second: "samples/s", "premises/s", …
    prepare: Callable[[Path, Any], dict[str, Any]]
    script: Path  # this module's file, run once per side
    order: int = 50  # position in the table
    target: float | None = None  # the throughput ratio to reach, if any
    sides: tuple[str, ...] = ("ours", "ld2")  # run in this order; ratios are ours / each other


SIDE_LABELS = {"ours": "leantrain", "ld2": "LeanDojo-v2", "trl": "plain TRL"}


def require(path: Path) -> Path:
    """``path`` if it is a file, else a one-line error naming it and where data comes from."""
    if not path.is_file():
        raise SystemExit(
            f"missing data file {path}: the benchmarks run on ../shared/data (see its README.md); "
            "put it there, there is no synthetic substitute"
        )
    return path


def discover() -> dict[str, Benchmark]:
    """Every ``BENCH`` defined by a module of this package, by name, in table order."""
    found: list[Benchmark] = []
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        bench = getattr(module, "BENCH", None)
        if isinstance(bench, Benchmark):
            found.append(bench)
    return {b.name: b for b in sorted(found, key=lambda b: (b.order, b.name))}


def portable_tokenizer(model_dir: Path) -> None:
    """Make a tokenizer saved by transformers 5 loadable by LeanDojo-v2's transformers 4.57.

    transformers 5 records ``tokenizer_class: TokenizersBackend``, a class 4.57 lacks (both
    versions load ``PreTrainedTokenizerFast`` from the same ``tokenizer.json`` to the same ids),
    and ``extra_special_tokens`` as a list, which 4.57 reads as ``additional_special_tokens``.
    """
    import json

    cfg_path = model_dir / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    if cfg.get("tokenizer_class") == "TokenizersBackend":
        cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
    if isinstance(cfg.get("extra_special_tokens"), list):  # 4.57 wants a dict there
        cfg["additional_special_tokens"] = cfg.pop("extra_special_tokens")
    cfg_path.write_text(json.dumps(cfg, indent=2), encoding="utf-8")


def portable_config(model_dir: Path) -> None:
    """Make a ``config.json`` written by transformers 5 read the same by transformers 4.57.

    transformers 5 records the rotary base as ``rope_parameters: {rope_theta, rope_type}``;
    4.57 reads ``rope_theta`` (and ``rope_scaling`` for a non-default type) and would silently
    take its default base instead. Both keys are written; transformers 5 reads the file as
    before (the same config), 4.57 now gets the model's base.
    """
    import json

    cfg_path = model_dir / "config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    rope = cfg.get("rope_parameters")
    if not isinstance(rope, dict) or "rope_theta" in cfg:
        return
    cfg["rope_theta"] = rope["rope_theta"]
    if rope.get("rope_type", "default") != "default":
        cfg["rope_scaling"] = {k: v for k, v in rope.items() if k != "rope_theta"}
    cfg_path.write_text(json.dumps(cfg, indent=2), encoding="utf-8")
