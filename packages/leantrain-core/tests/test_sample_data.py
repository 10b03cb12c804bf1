"""The shipped sample: realistic, consistent LeanDojo-v2 exports that load with the schemas."""

from __future__ import annotations

import json

import pytest
from leantrain.core import (
    contains_sorry,
    load_corpus,
    load_theorems,
    sample_data_dir,
    sample_repo_dirs,
)
from leantrain.core.lean_text import marked_names, strip_marks

SPLITS = ("train", "val", "test")
REPOS = sample_repo_dirs()


def _theorems(repo, strategy="random"):
    return [t for s in SPLITS for t in load_theorems(repo / strategy / f"{s}.json")]


def _closure(corpus, path):
    by_path = {f.path: f for f in corpus}
    seen, todo = set(), [path]
    while todo:
        for imp in by_path[todo.pop()].imports:
            if imp not in seen:
                seen.add(imp)
                todo.append(imp)
    return seen


def test_at_least_three_repos_and_forty_theorems():
    assert [r.name for r in REPOS] == ["list-basics", "nat-basics", "order-algebra"]
    assert sample_data_dir().is_dir()
    assert sum(len(_theorems(r)) for r in REPOS) >= 40


@pytest.mark.parametrize("repo", REPOS, ids=lambda r: r.name)
def test_layout_and_metadata(repo):
    for strategy in ("random", "novel_premises"):
        for s in SPLITS:
            assert load_theorems(repo / strategy / f"{s}.json"), f"{strategy}/{s} is empty"
    meta = json.loads((repo / "metadata.json").read_text())
    assert set(meta) == {"creation_time", "from_repo", "leandojo_version"}
    assert meta["from_repo"]["url"] == f"https://github.com/leantrain-samples/{repo.name}"
    commit = meta["from_repo"]["commit"]
    assert len(commit) == 40 and int(commit, 16) >= 0
    corpus = load_corpus(repo / "corpus.jsonl")
    traced = [
        json.loads(line)["traced_file_path"]
        for line in (repo / "traced_files.jsonl").read_text().splitlines()
    ]
    assert traced == [f.path for f in corpus]
    for t in _theorems(repo):
        assert (t.url, t.commit) == (meta["from_repo"]["url"], commit)
    # both strategies partition the same theorems
    names = lambda s: sorted(t.full_name for t in _theorems(repo, s))  # noqa: E731
    assert names("random") == names("novel_premises")


@pytest.mark.parametrize("repo", REPOS, ids=lambda r: r.name)
def test_annotations_point_at_accessible_corpus_premises(repo):
    corpus = load_corpus(repo / "corpus.jsonl")
    premises = {(f.path, p.full_name): p for f in corpus for p in f.premises}
    n = 0
    for t in _theorems(repo):
        assert 1 <= len(t.traced_tactics) <= 6
        accessible = _closure(corpus, t.file_path)
        for i, tac in enumerate(t.traced_tactics):
            if i:
                assert tac.state_before == t.traced_tactics[i - 1].state_after
            text, provs = tac.annotated_tactic
            assert strip_marks(text) == tac.tactic
            assert len(marked_names(text)) == len(provs)
            for p in provs:
                n += 1
                q = premises[(p.def_path, p.full_name)]
                assert tuple(q.start) <= tuple(p.def_pos) < tuple(p.def_end_pos) <= tuple(q.end)
                same_file_before = p.def_path == t.file_path and tuple(q.end) < tuple(t.start)
                assert p.def_path in accessible or same_file_before, (t.full_name, p.full_name)
        assert t.traced_tactics[-1].state_after == "no goals"
        # a theorem of the repo is itself a premise of the corpus, at the same position
        own = premises[(t.file_path, t.full_name)]
        assert (tuple(own.start), tuple(own.end)) == (t.start, t.end)
    assert n >= 20


def test_import_dag_is_acyclic_with_a_diamond_and_shared_init():
    corpora = {r.name: load_corpus(r / "corpus.jsonl") for r in REPOS}
    for corpus in corpora.values():
        order = {f.path: i for i, f in enumerate(corpus)}
        for f in corpus:
            assert all(order[i] < order[f.path] for i in f.imports), f.path  # topological order
    corpus = corpora["list-basics"]
    by_path = {f.path: f for f in corpus}
    # ListBasics imports Length and Sum, which both import Defs
    assert {"ListBasics/Length.lean", "ListBasics/Sum.lean"} <= set(
        by_path["ListBasics.lean"].imports
    )
    assert all(
        "ListBasics/Defs.lean" in by_path[p].imports
        for p in ("ListBasics/Length.lean", "ListBasics/Sum.lean")
    )
    names = [
        {p.full_name for f in c for p in f.premises if f.path.startswith(".lake/packages/lean4/")}
        for c in corpora.values()
    ]
    assert names[0] == names[1] == names[2] and "Nat.add_comm" in names[0]
    # the downstream repo sees its dependency's files under .lake/packages/
    assert any(f.path.startswith(".lake/packages/nat-basics/") for f in corpora["order-algebra"])


def test_realistic_features_present():
    tactics = [tac for r in REPOS for t in _theorems(r) for tac in t.traced_tactics]
    assert sum(contains_sorry(t.tactic) for t in tactics) >= 1
    assert sum("\n" in t.tactic for t in tactics) >= 3
    assert sum(t.state_after == "no goals" for t in tactics) >= 40
    assert any("⊢" in t.state_before and "ℕ" in t.state_before for t in tactics)
    assert any(t.state_after.startswith("case ") for t in tactics)
    heads = {t.tactic.split()[0] for t in tactics}
    assert {"intro", "induction", "simp", "rw", "omega", "exact", "constructor", "cases"} <= heads
    # the sorry theorem sits in train, so filtering it is testable
    sorry_thms = [
        t
        for r in REPOS
        for t in load_theorems(r / "random" / "train.json")
        if any(contains_sorry(x.tactic) for x in t.traced_tactics)
    ]
    assert sorry_thms


@pytest.mark.parametrize("repo", REPOS, ids=lambda r: r.name)
def test_novel_premises_split_is_novel(repo):
    used = lambda ts: {p.full_name for t in ts for x in t.traced_tactics for p in x.premises}  # noqa: E731
    train = used(load_theorems(repo / "novel_premises" / "train.json"))
    for s in ("val", "test"):
        for t in load_theorems(repo / "novel_premises" / f"{s}.json"):
            assert used([t]) - train, f"{t.full_name} in {s} uses no novel premise"
