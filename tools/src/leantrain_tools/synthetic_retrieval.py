"""Synthetic LeanDojo-v2 exports for tests, demos and benchmarks (no Lean toolchain needed).

Premises are lemmas ``<Ns>.<word>`` stating ``<word> x = <word'> x``; each theorem's tactic
``rw [<Ns>.<word>]`` uses one premise and its goal mentions the same symbols, so a retriever
can learn the link. Files form an import chain, and the theorems' file imports the last one,
so every premise is accessible to them.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_json, atomic_write_jsonl
from leantrain.core.schemas import CorpusFile

_CONSONANTS = "bcdfghklmnprstvz"
_VOWELS = "aeiou"


def _word(rng: random.Random, syllables: int = 3) -> str:
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(syllables))


def synthetic_corpus(
    num_premises: int, num_files: int = 8, *, namespace: str = "Syn", seed: int = 0
) -> list[CorpusFile]:
    """``num_premises`` lemmas over ``num_files`` files (file i imports file i-1)."""
    rng = random.Random(seed)
    per_file = max(1, -(-num_premises // num_files))
    files: list[dict[str, Any]] = []
    made = 0
    for f in range(num_files):
        path = f"{namespace}/File{f}.lean"
        prems = []
        for j in range(min(per_file, num_premises - made)):
            a, b = _word(rng), _word(rng)
            name = f"{namespace}.{a}_{j}"
            code = f"theorem {name} (x : Nat) : {a} x = {b} x := by\n  simp [{a}, {b}]"
            prems.append(
                {
                    "full_name": name,
                    "code": code,
                    "start": [3 * j + 1, 1],
                    "end": [3 * j + 2, 20],
                    "kind": "theorem",
                }
            )
            made += 1
        files.append(
            {"path": path, "imports": [files[-1]["path"]] if files else [], "premises": prems}
        )
    return [CorpusFile.model_validate(f) for f in files]


def _theorem(
    prem: dict[str, Any], def_path: str, main: str, url: str, i: int, rng: random.Random
) -> dict[str, Any]:
    name = prem["full_name"]
    a = name.split(".")[-1].rsplit("_", 1)[0]
    b = prem["code"].split("= ")[1].split(" x")[0]
    var = rng.choice("xyznm")
    state = f"{var} : Nat\n⊢ {a} ({var} + {i % 7}) = {b} ({var} + {i % 7})"
    return {
        "url": url,
        "commit": "0" * 40,
        "file_path": main,
        "full_name": f"Main.thm_{i}",
        "theorem_statement": f"theorem Main.thm_{i} ({var} : Nat) : {a} ({var} + {i % 7}) = {b} ({var} + {i % 7}) :=",
        "start": [2 * i + 2, 1],
        "end": [2 * i + 3, 20],
        "traced_tactics": [
            {
                "tactic": f"rw [{name}]",
                "annotated_tactic": [
                    f"rw [<a>{name}</a>]",
                    [
                        {
                            "full_name": name,
                            "def_path": def_path,
                            "def_pos": prem["start"],
                            "def_end_pos": prem["end"],
                        }
                    ],
                ],
                "state_before": state,
                "state_after": "no goals",
            }
        ],
    }


def write_synthetic_export(
    out_dir: str | Path,
    *,
    num_premises: int = 40,
    num_theorems: int = 120,
    num_files: int = 4,
    namespace: str = "Syn",
    seed: int = 0,
    url: str | None = None,
) -> Path:
    """Write an export dir (``random/``, ``novel_premises/``, ``corpus.jsonl``, metadata)."""
    out = Path(out_dir)
    rng = random.Random(seed + 1)
    files = synthetic_corpus(num_premises, num_files, namespace=namespace, seed=seed)
    main = f"{namespace}/Main.lean"
    url = url or f"https://example.com/{namespace.lower()}"
    corpus = [f.to_json() for f in files] + [
        {"path": main, "imports": [files[-1].path], "premises": []}
    ]
    located = [(p, f["path"]) for f in corpus for p in f["premises"]]
    theorems = [
        _theorem(*located[i % len(located)], main, url, i, rng) for i in range(num_theorems)
    ]
    order = list(range(num_theorems))
    rng.shuffle(order)
    n_val = n_test = max(1, num_theorems // 10)
    splits = {
        "test": [theorems[i] for i in order[:n_test]],
        "val": [theorems[i] for i in order[n_test : n_test + n_val]],
        "train": [theorems[i] for i in order[n_test + n_val :]],
    }
    for name, rows in splits.items():
        atomic_write_json(out / "random" / f"{name}.json", rows, indent=None)
    # novel_premises: test/val theorems use premises that no training theorem uses
    held = {p["full_name"] for p, _ in located[: max(1, len(located) // 10)]}
    uses = lambda t: t["traced_tactics"][0]["annotated_tactic"][1][0]["full_name"]  # noqa: E731
    novel = [t for t in theorems if uses(t) in held]
    rest = [t for t in theorems if uses(t) not in held]
    half = len(novel) // 2
    for name, rows in {"test": novel[:half] or novel, "val": novel[half:], "train": rest}.items():
        atomic_write_json(out / "novel_premises" / f"{name}.json", rows, indent=None)
    atomic_write_jsonl(out / "corpus.jsonl", corpus)
    atomic_write_jsonl(
        out / "traced_files.jsonl", [{"traced_file_path": f["path"]} for f in corpus]
    )
    atomic_write_json(
        out / "metadata.json", {"from_repo": {"url": url, "commit": "0" * 40}, "synthetic": True}
    )
    return out
