"""Write the sample data of leantrain-core from the hand-written Lean in ``sample_source.py``.

    uv run python -m leantrain_tools.make_sample

derives everything LeanDojo would trace from the Lean text — positions, ``<a>…</a>``
annotations with provenances, the corpus with its import DAG, the ``random`` and
``novel_premises`` splits — and writes one LeanDojo-v2 export directory per repository under
``packages/leantrain-core/src/leantrain/core/sample_data/``. The output is deterministic; re-running it rewrites the
same bytes.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
from pathlib import Path

from leantrain_tools.sample_source import INIT_FILES, LEAN, REPOS
from leantrain_tools.workspace import REPO_ROOT

OUT = REPO_ROOT / "packages" / "leantrain-core" / "src" / "leantrain" / "core" / "sample_data"
URL = "https://github.com/leantrain-samples/{}"
CREATION_TIME = "2025-06-02 10:15:00.000000"
LEANDOJO_VERSION = "4.20.0"
_IDENT = re.compile(r"(?<![\w.'])[A-Za-z_][\w'.]*[\w']|(?<![\w.'])[A-Za-z_]")


def module_name(path: str) -> str:
    for prefix in (LEAN, ".lake/packages/"):
        if path.startswith(prefix):
            path = path[len(prefix) :]
            if prefix != LEAN:
                path = path.split("/", 1)[1]
    return path.removesuffix(".lean").replace("/", ".")


def render_file(
    path: str, imports: list[str], ns: str, opens: list[str], decls: list
) -> tuple[list[dict], list[dict]]:
    """Lay the file out as Lean text; return its premises and its traced theorems (with positions)."""
    lines = [f"import {module_name(i)}" for i in imports]
    if path.endswith("NatBasics/Defs.lean"):
        lines += ["", 'notation "ℕ" => Nat']
    if ns:
        lines += ["", f"namespace {ns}"]
    if opens:
        lines += ["", "open " + " ".join(opens)]
    premises, theorems = [], []
    for decl in decls:
        lines.append("")
        if decl[0] == "thm":
            _, name, sig, goal, steps = decl
            body = "\n".join("  " + line for tac, _ in steps for line in tac.split("\n"))
            header = f"theorem {name} {sig} :="
            code, kind = f"{header} by\n{body}", "theorem"
        else:
            kind, name, rest = decl
            code = f"{kind} {name}{rest}"
        start_line = len(lines) + 1
        code_lines = code.split("\n")
        lines += code_lines
        col = code_lines[0].index(name) + 1
        full_name = f"{ns}.{name}" if ns else name
        premise = {
            "full_name": full_name,
            "code": code,
            "start": [start_line, 1],
            "end": [start_line + len(code_lines) - 1, len(code_lines[-1]) + 1],
            "kind": kind,
            "_def_pos": [start_line, col],
            "_def_end_pos": [start_line, col + len(name)],
        }
        premises.append(premise)
        if decl[0] == "thm":
            theorems.append({"premise": premise, "statement": header, "goal": goal, "steps": steps})
    return premises, theorems


def build_repo(name: str, own_files: list, deps: list) -> dict:
    files = [(p, list(i), ns, op, d, False) for p, i, ns, op, d in INIT_FILES]
    for prefix, dep_files in deps:
        for p, imps, ns, op, d in dep_files:
            imps = [i if i.startswith(".lake/") else prefix + i for i in imps]
            files.append((prefix + p, imps, ns, op, d, False))
    files += [(p, list(i), ns, op, d, True) for p, i, ns, op, d in own_files]

    rendered = {}
    for path, imps, ns, opens, decls, own in files:
        missing = [i for i in imps if i not in rendered]
        assert not missing, f"{path} imports unknown {missing}"
        premises, theorems = render_file(path, imps, ns, opens, decls)
        rendered[path] = {
            "imports": imps,
            "premises": premises,
            "theorems": theorems,
            "ns": ns,
            "opens": opens,
            "own": own,
        }

    def closure(path: str, seen: set[str]) -> set[str]:
        for i in rendered[path]["imports"]:
            if i not in seen:
                seen.add(i)
                closure(i, seen)
        return seen

    url, commit = URL.format(name), hashlib.sha1(f"leantrain-samples/{name}".encode()).hexdigest()
    theorems = []
    for path, info in rendered.items():
        if not info["own"]:
            continue
        imported = {
            p["full_name"]: (q, p) for q in closure(path, set()) for p in rendered[q]["premises"]
        }
        scopes = [s for s in [info["ns"], *info["opens"]] if s]
        for thm in info["theorems"]:
            # premises defined earlier in the same file are accessible too
            local = {
                p["full_name"]: (path, p)
                for p in info["premises"]
                if p["start"] < thm["premise"]["start"]
            }
            accessible = {**imported, **local}
            state, tactics = thm["goal"], []
            for tac, after in thm["steps"]:
                provs, out, last = [], [], 0
                for m in _IDENT.finditer(tac):
                    tok = m.group(0)
                    hit = next(
                        (
                            accessible[c]
                            for c in [tok, *(f"{s}.{tok}" for s in scopes)]
                            if c in accessible
                        ),
                        None,
                    )
                    if hit is None:
                        continue
                    def_path, p = hit
                    provs.append(
                        {
                            "full_name": p["full_name"],
                            "def_path": def_path,
                            "def_pos": p["_def_pos"],
                            "def_end_pos": p["_def_end_pos"],
                        }
                    )
                    out += [tac[last : m.start()], f"<a>{tok}</a>"]
                    last = m.end()
                out.append(tac[last:])
                tactics.append(
                    {
                        "tactic": tac,
                        "annotated_tactic": ["".join(out), provs],
                        "state_before": state,
                        "state_after": after,
                    }
                )
                state = after
            assert 1 <= len(tactics) <= 6 and state == "no goals", thm["premise"]["full_name"]
            p = thm["premise"]
            theorems.append(
                {
                    "url": url,
                    "commit": commit,
                    "file_path": path,
                    "full_name": p["full_name"],
                    "theorem_statement": thm["statement"],
                    "start": p["start"],
                    "end": p["end"],
                    "traced_tactics": tactics,
                }
            )
    corpus = [
        {
            "path": path,
            "imports": info["imports"],
            "premises": [
                {k: v for k, v in p.items() if not k.startswith("_")} for p in info["premises"]
            ],
        }
        for path, info in rendered.items()
    ]
    return {"url": url, "commit": commit, "theorems": theorems, "corpus": corpus}


def _uses_sorry(thm: dict) -> bool:
    return any(t["tactic"] == "sorry" for t in thm["traced_tactics"])


def split_random(theorems: list[dict], seed: str) -> dict[str, list[dict]]:
    order = list(theorems)
    random.Random(seed).shuffle(order)
    order.sort(key=_uses_sorry, reverse=True)  # the sorry theorem stays in train, for filter tests
    n = max(2, round(0.15 * len(order)))
    return {
        "train": order[: len(order) - 2 * n],
        "val": order[len(order) - 2 * n : len(order) - n],
        "test": order[len(order) - n :],
    }


def split_novel_premises(theorems: list[dict]) -> dict[str, list[dict]]:
    """LeanDojo's idea: val/test theorems use at least one premise never used in train."""
    uses: dict[str, list[int]] = {}
    for i, thm in enumerate(theorems):
        for tac in thm["traced_tactics"]:
            for p in tac["annotated_tactic"][1]:
                if i not in uses.setdefault(p["full_name"], []):
                    uses[p["full_name"]].append(i)
    n = max(2, round(0.15 * len(theorems)))
    assigned: dict[int, str] = {}
    for premise in sorted(uses, key=lambda k: (len(uses[k]), k)):
        free = [i for i in uses[premise] if i not in assigned]
        if not free or any(assigned.get(i) == "train" for i in uses[premise]):
            continue
        split = (
            "test"
            if sum(v == "test" for v in assigned.values()) < n
            else "val"
            if sum(v == "val" for v in assigned.values()) < n
            else None
        )
        if split is None:
            break
        for i in free:
            assigned[i] = split
    out: dict[str, list[dict]] = {"train": [], "val": [], "test": []}
    for i, thm in enumerate(theorems):
        out[assigned.get(i, "train")].append(thm)
    return out


def _dump(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False) + "\n", encoding="utf-8")


def main(out: Path | None = None) -> None:
    """Write the sample repositories under ``out`` (default: core's ``sample_data``)."""
    out = OUT if out is None else out
    if out.exists():
        shutil.rmtree(out)
    for name, own_files, deps in REPOS:
        repo = build_repo(name, own_files, deps)
        d = out / name
        for strategy, splits in (
            ("random", split_random(repo["theorems"], name)),
            ("novel_premises", split_novel_premises(repo["theorems"])),
        ):
            for split, thms in splits.items():
                assert thms, (name, strategy, split)
                _dump(d / strategy / f"{split}.json", thms)
        _dump(
            d / "metadata.json",
            {
                "creation_time": CREATION_TIME,
                "from_repo": {"url": repo["url"], "commit": repo["commit"]},
                "leandojo_version": LEANDOJO_VERSION,
            },
        )
        with (d / "corpus.jsonl").open("w", encoding="utf-8") as f:
            for line in repo["corpus"]:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
        with (d / "traced_files.jsonl").open("w", encoding="utf-8") as f:
            for line in repo["corpus"]:
                f.write(json.dumps({"traced_file_path": line["path"]}) + "\n")
        n_tac = sum(len(t["traced_tactics"]) for t in repo["theorems"])
        n_ann = sum(
            len(x["annotated_tactic"][1]) for t in repo["theorems"] for x in t["traced_tactics"]
        )
        print(
            f"{name}: {len(repo['theorems'])} theorems, {n_tac} tactics, {n_ann} annotations, {len(repo['corpus'])} files"
        )


if __name__ == "__main__":
    main()
