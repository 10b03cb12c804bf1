"""A deterministic generator of synthetic LeanDojo-v2 exports, of any size.

``generate_synthetic(out_dir, n_theorems)`` writes one export directory per synthetic
repository — ``random/`` and ``novel_premises/`` splits, ``corpus.jsonl``,
``traced_files.jsonl``, ``metadata.json`` — in the same layout and schemas as the real exports
and the shipped sample, for benchmarks and scale tests. The text is not Lean that compiles, but
its shape is realistic:

* tactics per theorem follow a geometric law (mean ``mean_tactics``, 4 by default);
* each premise-taking tactic (``rw``, ``simp``, ``exact``, ``apply`` …) names 0-3 premises,
  drawn only from premises *accessible* to the theorem (earlier in its file, in the files it
  imports, in the repositories it depends on), with a heavy-tailed (Zipf-like) popularity and a
  preference for premises of the same file;
* proof states are 50-400 characters with hypotheses and a ``⊢`` goal, the last state is
  ``no goals``, and some steps leave two ``case`` goals.

Repository *k* depends on repository *k-1* (so on all earlier ones); its corpus holds the shared
``Init`` files, its dependencies' files under ``.lake/packages/<name>/`` and its own files,
which import each other as a DAG with diamonds. Output is streamed: memory holds one file's
theorems and a compact table of premises, so 100k+ theorems take seconds, and each repository
directory is swapped in atomically. The same ``seed`` gives the same bytes.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from leantrain.core.atomic import atomic_directory

_LEAN = ".lake/packages/lean4/src/lean/"
_INIT_FILES = [
    (_LEAN + "Init/Core.lean", []),
    (_LEAN + "Init/Data/Nat/Basic.lean", [_LEAN + "Init/Core.lean"]),
    (
        _LEAN + "Init/Data/List/Basic.lean",
        [_LEAN + "Init/Core.lean", _LEAN + "Init/Data/Nat/Basic.lean"],
    ),
    (
        _LEAN + "Init.lean",
        [_LEAN + "Init/Data/Nat/Basic.lean", _LEAN + "Init/Data/List/Basic.lean"],
    ),
]
_INIT_NAMESPACES = ["", "Nat", "List", ""]
_INIT_PREMISES_PER_FILE = 40
_CREATION_TIME = "2025-06-02 10:15:00.000000"

_WORDS = [
    "add",
    "mul",
    "sub",
    "div",
    "mod",
    "pow",
    "neg",
    "inv",
    "comm",
    "assoc",
    "left",
    "right",
    "cancel",
    "distrib",
    "le",
    "lt",
    "ne",
    "eq",
    "zero",
    "one",
    "two",
    "succ",
    "pred",
    "pos",
    "nonneg",
    "mono",
    "strict_mono",
    "injective",
    "surjective",
    "map",
    "append",
    "length",
    "reverse",
    "cons",
    "nil",
    "sum",
    "prod",
    "max",
    "min",
    "abs",
    "sq",
    "sqrt",
    "dvd",
    "gcd",
    "lcm",
    "card",
    "image",
    "preimage",
    "inter",
    "union",
    "subset",
    "mem",
    "filter",
    "fold",
    "self",
    "iff",
    "of",
    "trans",
    "symm",
    "refl",
    "antisymm",
    "bot",
    "top",
    "sup",
    "inf",
]
_TOPICS = [
    "Basic",
    "Order",
    "Lemmas",
    "Defs",
    "Arith",
    "Lattice",
    "Group",
    "Ring",
    "Field",
    "Finset",
    "Sum",
    "Prod",
    "Bound",
    "Parity",
    "Div",
    "Gcd",
    "Image",
    "Card",
]
_DOMAINS = [
    # (binder type, variable names, binary operators, relations, atoms)
    (
        "ℕ",
        ["n", "m", "k", "a", "b", "c"],
        [" + ", " * ", " - ", " / ", " % ", " ^ "],
        [" = ", " ≤ ", " < ", " ≠ ", " ∣ "],
        ["0", "1", "2", "(n + 1)", "Nat.succ k", "f n", "n.factorial"],
    ),
    (
        "ℤ",
        ["x", "y", "z", "a", "b"],
        [" + ", " * ", " - ", " / ", " % "],
        [" = ", " ≤ ", " < ", " ≠ "],
        ["0", "1", "-1", "|x|", "x.natAbs", "Int.toNat y"],
    ),
    (
        "ℝ",
        ["x", "y", "ε", "δ", "r"],
        [" + ", " * ", " - ", " / "],
        [" = ", " ≤ ", " < ", " ≠ "],
        ["0", "1", "2⁻¹", "Real.sqrt x", "|x - y|", "x ^ 2", "Real.exp r", "π"],
    ),
    (
        "List α",
        ["l", "l₁", "l₂", "xs", "ys"],
        [" ++ "],
        [" = ", " ≠ ", " <+ ", " ⊆ "],
        ["[]", "[a]", "a :: l", "l.reverse", "List.map f l", "List.filter p xs", "l.tail"],
    ),
    (
        "Finset ℕ",
        ["s", "t", "u"],
        [" ∪ ", " ∩ ", " \\ "],
        [" = ", " ⊆ ", " ⊂ ", " ≠ "],
        ["∅", "{0}", "Finset.range n", "s.image f", "s.filter p", "insert a s"],
    ),
]
_EXTRA_HYPS = [
    "α : Type u_1",
    "β : Type u_2",
    "inst✝ : DecidableEq α",
    "inst✝¹ : LinearOrder α",
    "f : ℕ → ℕ",
    "p : α → Prop",
    "hf : Monotone f",
    "hp : DecidablePred p",
    "a : α",
    "ih : P k",
]
_NO_PREMISE_TACTICS = [
    "omega",
    "linarith",
    "norm_num",
    "positivity",
    "ring",
    "decide",
    "rfl",
    "assumption",
    "trivial",
    "aesop",
    "exact le_rfl",
    "constructor",
    "tauto",
]


@dataclass
class _Premise:
    full_name: str
    repo: int  # -1 for Init
    path: str  # path inside its own repository
    pos: tuple[int, int]
    end_pos: tuple[int, int]


def _commit(seed: int, repo: int) -> str:
    return hashlib.sha1(f"leantrain-synthetic:{seed}:{repo}".encode()).hexdigest()


def _repo_name(repo: int) -> str:
    return f"synth-{repo:03d}"


def _repo_module(repo: int) -> str:
    return f"Synth{repo:03d}"


def _module_name(path: str) -> str:
    if path.startswith(_LEAN):
        path = path[len(_LEAN) :]
    elif path.startswith(".lake/packages/"):
        path = path.split("/", 3)[3]
    return path.removesuffix(".lean").replace("/", ".")


class _Generator:
    """Generates premises and theorems; one instance per call, state shared across repos."""

    def __init__(
        self,
        seed: int,
        *,
        mean_tactics: float,
        max_tactics: int,
        sorry_fraction: float,
        novel_premise_fraction: float,
    ) -> None:
        self.seed = seed
        self.p_geom = 1.0 / max(mean_tactics, 1.0)
        self.max_tactics = max_tactics
        self.sorry_fraction = sorry_fraction
        self.novel_fraction = novel_premise_fraction
        self.premises: list[_Premise] = []
        self.cum_weight: list[float] = []  # cumulative popularity, for prefix-restricted draws
        self.novel: set[int] = set()
        self.name_counter = 0

    # -- premises ------------------------------------------------------------------------------
    def _name(self, rng: random.Random) -> str:
        self.name_counter += 1
        words = rng.sample(_WORDS, rng.randint(2, 4))
        return "_".join(words) + f"_{self.name_counter}"

    def add_premise(
        self, rng: random.Random, prem: _Premise, *, boost: float = 1.0, own: bool = False
    ) -> int:
        idx = len(self.premises)
        self.premises.append(prem)
        w = rng.paretovariate(1.1) * boost  # heavy tail: a few premises are used very often
        self.cum_weight.append((self.cum_weight[-1] if self.cum_weight else 0.0) + w)
        if own and rng.random() < self.novel_fraction:
            self.novel.add(idx)
        return idx

    def draw_premise(self, rng: random.Random, n_accessible: int, file_start: int) -> int:
        """A premise index below ``n_accessible``: often from the current file, else by popularity."""
        if file_start < n_accessible and rng.random() < 0.3:
            return rng.randrange(file_start, n_accessible)
        x = rng.random() * self.cum_weight[n_accessible - 1]
        return min(bisect.bisect_right(self.cum_weight, x, 0, n_accessible), n_accessible - 1)

    # -- states --------------------------------------------------------------------------------
    def _expr(self, rng: random.Random, dom: tuple, target: int, names: list[str]) -> str:
        _, _, ops, _, atoms = dom
        rand = rng.random  # indexing by random() is ~3x faster than rng.choice on this hot path
        nn, no, na = len(names), len(ops), len(atoms)
        parts = [names[int(rand() * nn)]]
        length = len(parts[0])
        while length < target:
            op = ops[int(rand() * no)]
            u = rand()
            term = names[int(u / 0.6 * nn)] if u < 0.6 else atoms[int((u - 0.6) / 0.4 * na)]
            if u < 0.12:  # one draw in five of the names branch becomes a parenthesised term
                term = f"({term}{ops[int(rand() * no)]}{names[int(rand() * nn)]})"
            parts += [op, term]
            length += len(op) + len(term)
        return "".join(parts)

    def _goal(self, rng: random.Random, dom: tuple, target: int, names: list[str]) -> str:
        rel = rng.choice(dom[3])
        half = max(4, (target - len(rel)) // 2)
        r = rng.random()
        if r < 0.15:
            bound = dom[1][-1] if dom[1][-1] not in names else dom[1][-2] + "'"
            names = [*names, bound]
        goal = self._expr(rng, dom, half, names) + rel + self._expr(rng, dom, half, names)
        if r < 0.1:
            goal = f"∀ ({names[-1]} : {dom[0]}), {goal}"
        elif r < 0.15:
            goal = f"∃ {names[-1]}, {goal}"
        return "⊢ " + goal

    def _context(self, rng: random.Random, dom: tuple) -> tuple[list[str], list[str]]:
        names = dom[1]
        k = rng.randint(1, len(names))
        hyps = []
        if dom[0] == "List α" or rng.random() < 0.2:
            hyps.append("α : Type u_1")
        hyps.append(" ".join(names[:k]) + f" : {dom[0]}")
        for i in range(rng.choice((0, 0, 1, 1, 2, 3))):
            rel = rng.choice(dom[3])
            a, b = rng.choice(names[:k]), rng.choice(names[:k] + dom[4][:2])
            hyps.append(f"h{'₀₁₂₃'[i]} : {a}{rel}{b}")
        if rng.random() < 0.25:
            hyps.append(rng.choice(_EXTRA_HYPS))
        return hyps, names[:k]

    # -- theorems ------------------------------------------------------------------------------
    def theorem(
        self, rng: random.Random, name: str, n_accessible: int, file_start: int
    ) -> tuple[str, list[dict[str, Any]], set[int]]:
        """``(statement, traced_tactics, used premise indices)`` of one synthetic theorem."""
        dom = rng.choice(_DOMAINS)
        hyps, names = self._context(rng, dom)
        # state length 50-400 characters: log-uniform, most states are short
        target = int(math.exp(rng.uniform(math.log(50), math.log(400))))
        ctx = "\n".join(hyps)
        goal = self._goal(rng, dom, max(12, target - len(ctx) - 3), names)
        binders = " ".join(
            f"{{{h}}}" if h.startswith(("α", "β")) else f"({h})" for h in hyps if "✝" not in h
        )
        statement = f"theorem {name} {binders} : {goal[2:]} :="
        n_tac = min(
            self.max_tactics,
            1 + int(math.log(1.0 - rng.random()) / math.log(1.0 - self.p_geom))
            if self.p_geom < 1
            else 1,
        )
        use_sorry = rng.random() < self.sorry_fraction
        state = f"{ctx}\n{goal}"
        tactics: list[dict[str, Any]] = []
        used: set[int] = set()
        cases = 0
        for step in range(n_tac):
            last = step == n_tac - 1
            if use_sorry and last:
                tactics.append(self._tactic("sorry", None, [], state, "no goals"))
                break
            premises: list[int] = []
            annotated = None
            r = rng.random()
            if r < 0.45 and n_accessible:
                k = rng.choice((1, 1, 1, 2, 2, 3))
                kind = rng.random()
                if kind >= 0.65:  # exact / apply take one premise
                    k = 1
                premises = [self.draw_premise(rng, n_accessible, file_start) for _ in range(k)]
                names = [self.premises[i].full_name for i in premises]
                if kind < 0.35:
                    fmt = "rw [{}]"
                elif kind < 0.65:
                    fmt = "simp only [{}]" if rng.random() < 0.4 else "simp [{}]"
                elif kind < 0.85:
                    args = " ".join(
                        rng.choice(("_", names[0], "h₀")) for _ in range(rng.randint(0, 2))
                    )
                    fmt = ("exact {} " + args).rstrip()
                else:
                    fmt = "apply {}"
                text = fmt.format(", ".join(names))
                annotated = fmt.format(", ".join(f"<a>{n}</a>" for n in names))
            elif r < 0.55:
                text = f"induction {names[0]} with\n  | zero => simp\n  | succ k ih =>\n    simp only [ih]\n    omega"
            elif r < 0.65:
                text = f"intro {rng.choice(names)}"
            elif r < 0.72:
                text = f"have h : {self._expr(rng, dom, 8, names)}{rng.choice(dom[3])}{self._expr(rng, dom, 8, names)} := by omega"
            else:
                text = rng.choice(_NO_PREMISE_TACTICS)
            used.update(premises)
            if last:
                after = "no goals"
            else:
                new_goal = self._goal(
                    rng, dom, max(12, target - len(ctx) - 3 + rng.randint(-20, 20)), names
                )
                after = f"{ctx}\n{new_goal}"
                if cases == 0 and text in ("constructor", "tauto") and step < n_tac - 2:
                    cases = 1
                    other = self._goal(rng, dom, max(12, target // 2), names)
                    after = f"case left\n{ctx}\n{new_goal}\n\ncase right\n{ctx}\n{other}"
            tactics.append(self._tactic(text, annotated, premises, state, after))
            state = after
        return statement, tactics, used

    def _tactic(
        self, text: str, annotated: str | None, premises: list[int], before: str, after: str
    ) -> dict[str, Any]:
        provs = []
        for i in premises:
            p = self.premises[i]
            provs.append(
                {
                    "full_name": p.full_name,
                    "def_path": self._path_from(p),
                    "def_pos": list(p.pos),
                    "def_end_pos": list(p.end_pos),
                }
            )
        return {
            "tactic": text,
            "annotated_tactic": [annotated or text, provs],
            "state_before": before,
            "state_after": after,
        }

    def _path_from(self, p: _Premise) -> str:
        """The premise's path as seen from the repository being generated."""
        if p.repo < 0 or p.repo == self.current_repo:
            return p.path
        return f".lake/packages/{_repo_name(p.repo)}/{p.path}"

    current_repo = 0


class _ArrayWriter:
    """Streams a JSON array to a file, one record at a time."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.f: TextIO = path.open("w", encoding="utf-8")
        self.n = 0
        self.f.write("[")

    def write(self, line: str) -> None:
        self.f.write(", " if self.n else "")
        self.f.write(line)
        self.n += 1

    def close(self) -> None:
        self.f.write("]\n")
        self.f.close()


def _premise_code(kind: str, name: str, rng: random.Random) -> list[str]:
    body = rng.choice(
        (
            "by simp",
            "by omega",
            "rfl",
            "by\n  intro h\n  simp_all",
            "fun h => h.symm",
            "by\n  induction n <;> simp_all",
        )
    )
    return f"{kind} {name} : {rng.choice(('n + 0 = n', 'a ≤ b → b ≤ c → a ≤ c', 'l ++ [] = l', 'x * 1 = x'))} := {body}".split(
        "\n"
    )


def _init_premises(gen: _Generator, rng: random.Random, corpus: list[dict[str, Any]]) -> None:
    for (path, imports), ns in zip(_INIT_FILES, _INIT_NAMESPACES):
        premises = []
        line = len(imports) + 2
        n = 0 if path.endswith("Init.lean") else _INIT_PREMISES_PER_FILE
        for _ in range(n):
            name = (f"{ns}." if ns else "") + gen._name(rng)
            kind = rng.choice(("theorem", "theorem", "theorem", "def"))
            code = _premise_code(kind, name, rng)
            col = len(kind) + 2
            gen.add_premise(
                rng, _Premise(name, -1, path, (line, col), (line, col + len(name))), boost=5.0
            )
            premises.append(
                {
                    "full_name": name,
                    "code": "\n".join(code),
                    "start": [line, 1],
                    "end": [line + len(code) - 1, len(code[-1]) + 1],
                    "kind": kind,
                }
            )
            line += len(code) + 1
        corpus.append({"path": path, "imports": imports, "premises": premises})


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def generate_synthetic(
    out_dir: str | Path,
    n_theorems: int,
    *,
    n_repos: int = 3,
    seed: int = 0,
    theorems_per_file: int = 40,
    premises_per_file: int = 20,
    mean_tactics: float = 4.0,
    max_tactics: int = 24,
    val_fraction: float = 0.05,
    test_fraction: float = 0.05,
    novel_premise_fraction: float = 0.01,
    sorry_fraction: float = 0.005,
) -> list[Path]:
    """Write ``n_repos`` synthetic LeanDojo-v2 export dirs holding ``n_theorems`` theorems in all.

    Returns the repository directories (``out_dir/synth-000`` …), in dependency order (each
    depends on the one before). ``premises_per_file`` lemmas without traced proofs are added to
    each file besides its traced theorems (which are premises too). In ``novel_premises/``,
    val and test hold exactly the theorems that use a premise flagged novel, which no train
    theorem uses. Deterministic for a given ``seed`` and arguments.
    """
    if n_theorems < 0 or n_repos < 1 or theorems_per_file < 1:
        raise ValueError("need n_theorems >= 0, n_repos >= 1, theorems_per_file >= 1")
    out_dir = Path(out_dir)
    gen = _Generator(
        seed,
        mean_tactics=mean_tactics,
        max_tactics=max_tactics,
        sorry_fraction=sorry_fraction,
        novel_premise_fraction=novel_premise_fraction,
    )
    init_rng = random.Random(f"{seed}:init")
    init_corpus: list[dict[str, Any]] = []
    _init_premises(gen, init_rng, init_corpus)
    dirs = []
    for repo in range(n_repos):
        count = n_theorems // n_repos + (1 if repo < n_theorems % n_repos else 0)
        target = out_dir / _repo_name(repo)
        with atomic_directory(target) as tmp:
            _write_repo(
                gen,
                tmp,
                repo,
                count,
                seed,
                init_corpus,
                dirs[-1] if dirs else None,
                target,
                theorems_per_file=theorems_per_file,
                premises_per_file=premises_per_file,
                val_fraction=val_fraction,
                test_fraction=test_fraction,
            )
        dirs.append(target)
    return dirs


def _write_repo(
    gen: _Generator,
    tmp: Path,
    repo: int,
    count: int,
    seed: int,
    init_corpus: list[dict[str, Any]],
    prev_dir: Path | None,
    target: Path,
    *,
    theorems_per_file: int,
    premises_per_file: int,
    val_fraction: float,
    test_fraction: float,
) -> None:
    rng = random.Random(f"{seed}:repo:{repo}")
    gen.current_repo = repo
    name, module = _repo_name(repo), _repo_module(repo)
    url, commit = f"https://github.com/leantrain-synthetic/{name}", _commit(seed, repo)
    splits = {
        (s, p): _ArrayWriter(tmp / s / f"{p}.json")
        for s in ("random", "novel_premises")
        for p in ("train", "val", "test")
    }
    corpus = (tmp / "corpus.jsonl").open("w", encoding="utf-8")
    traced = (tmp / "traced_files.jsonl").open("w", encoding="utf-8")

    def emit_file(line: dict[str, Any]) -> None:
        corpus.write(_dump(line) + "\n")
        traced.write(_dump({"traced_file_path": line["path"]}) + "\n")

    # the dependency's corpus already holds Init and everything below it: re-root its own files
    if prev_dir is None:
        for line in init_corpus:
            emit_file(line)
    else:
        prefix = f".lake/packages/{_repo_name(repo - 1)}/"
        with (prev_dir / "corpus.jsonl").open(encoding="utf-8") as f:
            for raw in f:
                line = json.loads(raw)
                fix = lambda p: p if p.startswith(".lake/") else prefix + p  # noqa: E731
                line["path"], line["imports"] = fix(line["path"]), [fix(i) for i in line["imports"]]
                emit_file(line)
    dep_root = (
        f".lake/packages/{_repo_name(repo - 1)}/{_repo_module(repo - 1)}.lean"
        if repo
        else _INIT_FILES[-1][0]
    )

    n_files = max(1, math.ceil(count / theorems_per_file))
    files: list[str] = []
    done = 0
    for j in range(n_files):
        topic = _TOPICS[j % len(_TOPICS)]
        path = f"{module}/{topic}{j // len(_TOPICS) or ''}.lean"
        # a chain through the previous file plus a random earlier one: a DAG with diamonds, and
        # every earlier file stays reachable, so accessible premises are a prefix of the table
        imports = [files[-1]] if files else [dep_root, _INIT_FILES[-1][0]] if repo else [dep_root]
        if len(files) >= 2 and rng.random() < 0.5:
            imports.append(files[rng.randrange(len(files) - 1)])
        n_thm = min(theorems_per_file, count - done)
        done += n_thm
        slots = ["p"] * premises_per_file + ["t"] * n_thm
        rng.shuffle(slots)
        ns = f"{module}.{topic}"
        file_start = len(gen.premises)
        line_no = len(imports) + 4
        premises_out = []
        for slot in slots:
            name = gen._name(rng)
            full = f"{ns}.{name}"
            n_acc = len(gen.premises)
            if slot == "p":
                kind = rng.choice(("theorem", "theorem", "lemma", "def", "instance"))
                code = _premise_code(kind, name, rng)
            else:
                statement, tactics, used = gen.theorem(rng, name, n_acc, file_start)
                kind = "theorem"
                body = [statement[:-3] + ":= by"] + [
                    "  " + ln for t in tactics for ln in t["tactic"].split("\n")
                ]
                code = body
                thm = {
                    "url": url,
                    "commit": commit,
                    "file_path": path,
                    "full_name": full,
                    "theorem_statement": statement,
                    "start": [line_no, 1],
                    "end": [line_no + len(code) - 1, len(code[-1]) + 1],
                    "traced_tactics": tactics,
                }
                text = _dump(thm)
                u = rng.random()
                split = (
                    "test"
                    if u < test_fraction
                    else "val"
                    if u < test_fraction + val_fraction
                    else "train"
                )
                splits["random", split].write(text)
                novel = (
                    "train"
                    if gen.novel.isdisjoint(used)
                    else ("test" if rng.random() < 0.5 else "val")
                )
                splits["novel_premises", novel].write(text)
            col = len(kind) + 2
            gen.add_premise(
                rng,
                _Premise(full, repo, path, (line_no, col), (line_no, col + len(name))),
                own=True,
            )
            premises_out.append(
                {
                    "full_name": full,
                    "code": "\n".join(code),
                    "start": [line_no, 1],
                    "end": [line_no + len(code) - 1, len(code[-1]) + 1],
                    "kind": kind,
                }
            )
            line_no += len(code) + 1
        emit_file({"path": path, "imports": imports, "premises": premises_out})
        files.append(path)
    emit_file({"path": f"{module}.lean", "imports": files[-1:], "premises": []})
    for w in splits.values():
        w.close()
    corpus.close()
    traced.close()
    (tmp / "metadata.json").write_text(
        _dump(
            {
                "creation_time": _CREATION_TIME,
                "from_repo": {"url": url, "commit": commit},
                "leandojo_version": "4.20.0",
            }
        )
        + "\n",
        encoding="utf-8",
    )


def synthetic_theorems(n: int, seed: int = 0, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Yield ``n`` synthetic theorem records (LeanDojo JSON dicts) of one repository.

    Convenience over :func:`generate_synthetic` for tests that want records, not files: it
    writes to a temporary directory and streams the ``random`` splits back.
    """
    import tempfile

    from leantrain.core.schemas import read_json

    with tempfile.TemporaryDirectory() as tmp:
        (repo,) = generate_synthetic(tmp, n, n_repos=1, seed=seed, **kwargs)
        for split in ("train", "val", "test"):
            yield from read_json(repo / "random" / f"{split}.json")
