"""Tracing a repository, as far as it can be tested without Lean.

A fake ``lean_dojo`` module with the shape of the real API (lean-dojo 4.20:
``trace(repo, dst_dir=None, build_deps=True) -> TracedRepo``; ``TracedRepo.traced_files``,
``traced_files_graph`` (networkx, an edge X → Y when X imports Y), ``get_traced_theorems()``;
``TracedFile.path``, ``get_premise_definitions()``; ``TracedTheorem.repo/theorem/start/end``,
``has_tactic_proof()``, ``get_traced_tactics()``; ``TracedTactic.tactic/state_before/
state_after``, ``get_annotated_tactic()``) stands in for the real one; without it, a pipeline
source ``URL@COMMIT`` is one line naming what to install.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from it_support import leantrain_cmd, quiet_env

URL = "https://github.com/example/nat-lemmas"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
CORE = ".lake/packages/lean4/src/lean/Init/Core.lean"


@dataclass(frozen=True)
class Pos:
    line_nb: int
    column_nb: int

    def __iter__(self):
        yield self.line_nb
        yield self.column_nb


@dataclass(frozen=True)
class LeanGitRepo:
    url: str
    commit: str

    @property
    def name(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1]

    @property
    def is_lean4(self) -> bool:
        return self.url == "https://github.com/leanprover/lean4"


LEAN4 = LeanGitRepo("https://github.com/leanprover/lean4", "v4.20.0")


@dataclass(frozen=True)
class Theorem:
    repo: LeanGitRepo
    file_path: Path
    full_name: str


@dataclass
class TracedTactic:
    tactic: str
    state_before: str
    state_after: str
    premises: list[dict[str, Any]] = field(default_factory=list)

    def get_annotated_tactic(self) -> tuple[str, list[dict[str, Any]]]:
        text = self.tactic
        for p in self.premises:
            text = text.replace(p["full_name"], f"<a>{p['full_name']}</a>")
        return text, list(self.premises)


@dataclass
class TracedTheorem:
    theorem: Theorem
    start: Pos
    end: Pos
    tactics: list[TracedTactic]

    @property
    def repo(self) -> LeanGitRepo:
        return self.theorem.repo

    @property
    def file_path(self) -> Path:
        return self.theorem.file_path

    def has_tactic_proof(self) -> bool:
        return bool(self.tactics)

    def get_traced_tactics(self, atomic_only: bool = False) -> list[TracedTactic]:
        return list(self.tactics)


@dataclass(eq=False)
class TracedFile:
    root_dir: Path
    repo: LeanGitRepo
    path: Path
    premises: list[dict[str, Any]]
    theorems: list[TracedTheorem]
    imports: list[Path]

    def get_premise_definitions(self) -> list[dict[str, Any]]:
        return [dict(p) for p in self.premises]

    def get_traced_theorems(self) -> list[TracedTheorem]:
        return list(self.theorems)

    def get_direct_dependencies(self, repo: LeanGitRepo) -> list[tuple[str, Path]]:
        return [(str(p.with_suffix("")).replace("/", "."), p) for p in self.imports]


@dataclass(frozen=True, eq=False)
class TracedRepo:
    repo: LeanGitRepo
    dependencies: dict[str, LeanGitRepo]
    root_dir: Path
    traced_files: list[TracedFile]
    traced_files_graph: Any

    def get_traced_theorems(self) -> list[TracedTheorem]:
        return [t for tf in self.traced_files for t in tf.get_traced_theorems()]


def _premise(name: str, code: str, line: int, kind: str = "commanddeclaration") -> dict:
    return {
        "full_name": name,
        "code": code,
        "start": [line, 1],
        "end": [line, 1 + len(code)],
        "kind": kind,
    }


def _provenance(name: str, path: str, line: int) -> dict:
    return {"full_name": name, "def_path": path, "def_pos": [line, 1], "def_end_pos": [line, 40]}


def fake_traced_repo(root: Path, repo: LeanGitRepo, build_deps: bool = True) -> TracedRepo:
    import networkx as nx

    core = TracedFile(
        root,
        LEAN4,
        Path(CORE),
        [_premise("Eq.refl", "theorem Eq.refl (a : α) : a = a", 10)],
        [
            TracedTheorem(  # Lean's own theorems are not the repository's data
                Theorem(LEAN4, Path("src/lean/Init/Core.lean"), "Eq.symm'"),
                Pos(20, 1),
                Pos(22, 10),
                [TracedTactic("rfl", "⊢ a = a", "no goals")],
            )
        ],
        [],
    )
    defs = TracedFile(
        root,
        repo,
        Path("NatLemmas/Defs.lean"),
        [
            _premise("NatLemmas.double", "def NatLemmas.double (n : ℕ) : ℕ := n + n", 3),
            _premise("NatLemmas.double_zero", "theorem NatLemmas.double_zero : double 0 = 0", 5),
        ],
        [],
        [Path(CORE)],
    )
    theorems = [
        TracedTheorem(
            Theorem(repo, Path("NatLemmas/Basic.lean"), f"NatLemmas.t{i}"),
            Pos(10 + 5 * i, 1),
            Pos(12 + 5 * i, 20),
            [
                TracedTactic(
                    "simp [NatLemmas.double]",
                    f"n : ℕ\n⊢ double n = n + n + {i}",
                    f"⊢ n + n = n + n + {i}",
                    [_provenance("NatLemmas.double", "NatLemmas/Defs.lean", 3)],
                ),
                TracedTactic("· omega", "⊢ n + n = n + n", "no goals"),  # dropped: "·"
                TracedTactic("rfl", "no goals", "no goals"),  # dropped: no goals before
                TracedTactic("omega", f"⊢ n + n = n + n + {i}", "no goals"),
            ],
        )
        for i in range(12)
    ]
    theorems.append(  # no tactic proof (a term proof): not exported
        TracedTheorem(
            Theorem(repo, Path("NatLemmas/Basic.lean"), "NatLemmas.term"),
            Pos(90, 1),
            Pos(90, 30),
            [],
        )
    )
    basic = TracedFile(
        root,
        repo,
        Path("NatLemmas/Basic.lean"),
        [_premise("NatLemmas.t0", "theorem NatLemmas.t0 (n : ℕ) : double n = n + n + 0", 10)],
        theorems,
        [Path("NatLemmas/Defs.lean")],
    )
    files = [basic, core, defs]  # not in import order: the export sorts them
    graph = None
    if build_deps:
        graph = nx.DiGraph()
        for tf in files:
            graph.add_node(str(tf.path), traced_file=tf)
        for tf in files:
            for imp in tf.imports:
                graph.add_edge(str(tf.path), str(imp))
    return TracedRepo(repo, {"lean4": LEAN4}, root, files, graph)


@pytest.fixture
def fake_lean_dojo(monkeypatch, tmp_path):
    """``lean_dojo`` (and a Lean toolchain on PATH) as far as tracing uses them."""
    calls: list[dict[str, Any]] = []

    def trace(repo, dst_dir=None, build_deps=True):
        calls.append({"repo": repo, "dst_dir": dst_dir, "build_deps": build_deps})
        return fake_traced_repo(tmp_path / "cache" / repo.name, repo, build_deps)

    mod = types.ModuleType("lean_dojo")
    mod.__version__ = "4.20.0"  # type: ignore[attr-defined]
    mod.LeanGitRepo = LeanGitRepo  # type: ignore[attr-defined]
    mod.TracedRepo = TracedRepo  # type: ignore[attr-defined]
    mod.trace = trace  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "lean_dojo", mod)
    real_which = shutil.which
    monkeypatch.setattr(
        shutil,
        "which",
        lambda name, *a, **k: (
            f"/fake/{name}" if name in ("lake", "elan") else real_which(name, *a, **k)
        ),
    )
    return calls


def _read_split(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_traced_repo_writes_corpus_and_splits(fake_lean_dojo, tmp_path):
    from leantrain.export import trace_repository

    out = trace_repository(URL, COMMIT, tmp_path / "traced")
    assert fake_lean_dojo[0]["repo"] == LeanGitRepo(URL, COMMIT)

    corpus = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    paths = [r["path"] for r in corpus]
    # each file after the files it imports, as LeanDojo's reversed topological order
    assert paths == [CORE, "NatLemmas/Defs.lean", "NatLemmas/Basic.lean"]
    by_path = {r["path"]: r for r in corpus}
    assert by_path["NatLemmas/Basic.lean"]["imports"] == ["NatLemmas/Defs.lean"]
    assert by_path["NatLemmas/Defs.lean"]["imports"] == [CORE]
    assert by_path[CORE]["imports"] == []
    double = by_path["NatLemmas/Defs.lean"]["premises"][0]
    assert double == {
        "full_name": "NatLemmas.double",
        "code": "def NatLemmas.double (n : ℕ) : ℕ := n + n",
        "start": [3, 1],
        "end": [3, 42],
        "kind": "commanddeclaration",
    }
    assert sum(len(r["premises"]) for r in corpus) == 4

    meta = json.loads((out / "metadata.json").read_text())
    assert meta["from_repo"] == {"url": URL, "commit": COMMIT}
    assert meta["leandojo_version"] == "4.20.0"
    traced = [json.loads(x)["traced_file_path"] for x in (out / "traced_files.jsonl").open()]
    assert sorted(traced) == sorted(paths)

    for strategy in ("random", "novel_premises"):
        rows = [
            t for s in ("train", "val", "test") for t in _read_split(out / strategy / f"{s}.json")
        ]
        # the repository's 12 tactic-proved theorems; not Lean's, not the term proof
        assert sorted(t["full_name"] for t in rows) == sorted(f"NatLemmas.t{i}" for i in range(12))
    train = _read_split(out / "random" / "train.json")
    assert train, "some theorems train"
    thm = train[0]
    assert thm["url"] == URL and thm["commit"] == COMMIT
    assert thm["file_path"] == "NatLemmas/Basic.lean"
    assert [t["tactic"] for t in thm["traced_tactics"]] == ["simp [NatLemmas.double]", "omega"]
    annotated, provenances = thm["traced_tactics"][0]["annotated_tactic"]
    assert annotated == "simp [<a>NatLemmas.double</a>]"
    assert provenances[0]["full_name"] == "NatLemmas.double"
    assert provenances[0]["def_path"] == "NatLemmas/Defs.lean"
    # every theorem uses NatLemmas.double: held out or not, all theorems go the same way
    novel = {
        s: len(_read_split(out / "novel_premises" / f"{s}.json")) for s in ("train", "val", "test")
    }
    assert novel["train"] in (0, 12)


def test_traced_repo_imports_into_the_database(fake_lean_dojo, tmp_path):
    from leantrain.export import Database, trace_repository

    with Database(tmp_path / "lt.db") as db:
        trace_repository(URL, COMMIT, tmp_path / "traced", database=db)
        stats = db.stats()
    assert stats["repositories"] == 1
    assert stats["theorems"] == 12
    assert stats.get("premises", 4) == 4


def test_traced_without_dependency_graph(fake_lean_dojo, tmp_path):
    from leantrain.export import trace_repository

    out = trace_repository(URL, COMMIT, tmp_path / "traced", build_deps=False)
    assert fake_lean_dojo[0]["build_deps"] is False
    corpus = {r["path"]: r for r in map(json.loads, (out / "corpus.jsonl").open())}
    assert corpus["NatLemmas/Basic.lean"]["imports"] == ["NatLemmas/Defs.lean"]


def test_trace_failure_is_one_error(fake_lean_dojo, tmp_path):
    from leantrain.core.errors import LeanTrainError
    from leantrain.export import trace_repository

    def broken(repo, dst_dir=None, build_deps=True):
        raise RuntimeError("git clone failed: repository not found\nmore detail")

    sys.modules["lean_dojo"].trace = broken  # type: ignore[attr-defined]
    with pytest.raises(LeanTrainError, match="git clone failed: repository not found") as e:
        trace_repository(URL, COMMIT, tmp_path / "traced")
    assert "\n" not in e.value.one_line()
    assert not (tmp_path / "traced").exists()


def test_pipeline_traces_url_at_commit_into_its_run_dir(fake_lean_dojo, tmp_path):
    from leantrain.pipeline import Pipeline

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    pipe = Pipeline(
        {
            "name": "trace",
            "run_dir": str(run_dir),
            "sources": [f"{URL}@{COMMIT}"],
            "trainers": ["progress"],
            "progress": {"model_name": "tiny"},
        }
    )
    ids = pipe._import_sources()
    assert ids == [f"{URL}@{COMMIT}"]
    traced = list((run_dir / "traced").iterdir())
    assert [p.name for p in traced] == ["nat-lemmas-0123456789ab"]
    assert (traced[0] / "corpus.jsonl").is_file()


@pytest.mark.slow
def test_pipeline_url_at_commit_without_lean_dojo_is_one_line(tmp_path):
    if "lean_dojo" in sys.modules or shutil.which("lean_dojo"):
        pytest.skip("lean-dojo is installed here")
    import importlib.util

    if importlib.util.find_spec("lean_dojo") is not None:
        pytest.skip("lean-dojo is installed here")
    cfg = tmp_path / "p.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "name": "trace",
                "run_dir": str(tmp_path / "run"),
                "sources": ["sample", f"{URL}@{COMMIT}"],
                "trainers": ["progress"],
                "progress": {"model_name": "tiny"},
            }
        )
    )
    res = subprocess.run(
        [*leantrain_cmd(), "pipeline", "--config", str(cfg)],
        capture_output=True,
        text=True,
        env=quiet_env(),
        cwd=tmp_path,
        timeout=300,
    )
    assert res.returncode == 3, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and errors[0] == lines[-1], res.stderr
    assert errors[0].startswith("error: tracing ") and "leantrain-export[trace]" in errors[0]
    assert "elan" in errors[0]
    assert "Traceback" not in res.stderr and "out_dir" not in res.stderr
    # checked before importing anything: the sample source was not imported first
    assert not (tmp_path / "run" / "imports.json").exists()
    assert not (tmp_path / "run" / "leantrain.db").exists()
