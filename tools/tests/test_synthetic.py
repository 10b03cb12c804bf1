"""The synthetic generator: deterministic, schema-valid, realistic in shape, streaming."""

from __future__ import annotations

import hashlib
import json
import statistics

import pytest
from leantrain.core import load_corpus, load_theorems
from leantrain.core.schemas import Theorem
from leantrain_tools.synthetic import generate_synthetic, synthetic_theorems

SPLITS = ("train", "val", "test")


def _digest(root):
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth")
    dirs = generate_synthetic(
        root, 600, n_repos=3, seed=7, theorems_per_file=25, premises_per_file=10
    )
    return root, dirs


def test_same_seed_same_bytes_other_seed_differs(tmp_path, synth):
    root, _ = synth
    generate_synthetic(
        tmp_path / "a", 600, n_repos=3, seed=7, theorems_per_file=25, premises_per_file=10
    )
    generate_synthetic(
        tmp_path / "b", 600, n_repos=3, seed=8, theorems_per_file=25, premises_per_file=10
    )
    assert _digest(tmp_path / "a") == _digest(root)
    assert _digest(tmp_path / "b") != _digest(root)


def test_layout_counts_and_schema(synth):
    _, dirs = synth
    assert [d.name for d in dirs] == ["synth-000", "synth-001", "synth-002"]
    total = 0
    for d in dirs:
        meta = json.loads((d / "metadata.json").read_text())
        assert meta["from_repo"]["url"].endswith(d.name) and len(meta["from_repo"]["commit"]) == 40
        per_strategy = {}
        for strategy in ("random", "novel_premises"):
            thms = [t for s in SPLITS for t in load_theorems(d / strategy / f"{s}.json")]
            per_strategy[strategy] = sorted(t.full_name for t in thms)
        assert per_strategy["random"] == per_strategy["novel_premises"]
        assert len(set(per_strategy["random"])) == len(per_strategy["random"])
        total += len(per_strategy["random"])
        corpus = load_corpus(d / "corpus.jsonl")
        traced = [
            json.loads(x)["traced_file_path"]
            for x in (d / "traced_files.jsonl").read_text().splitlines()
        ]
        assert traced == [f.path for f in corpus]
    assert total == 600


def _closure(corpus, path):
    by_path = {f.path: f for f in corpus}
    seen, todo = set(), [path]
    while todo:
        for imp in by_path[todo.pop()].imports:
            if imp not in seen:
                seen.add(imp)
                todo.append(imp)
    return seen


def test_premises_exist_and_are_accessible(synth):
    _, dirs = synth
    d = dirs[-1]  # the last repo sees Init, both dependencies and itself
    corpus = load_corpus(d / "corpus.jsonl")
    order = {f.path: i for i, f in enumerate(corpus)}
    assert all(order[i] < order[f.path] for f in corpus for i in f.imports)  # a DAG, in order
    assert any(len(f.imports) >= 2 for f in corpus if not f.path.startswith(".lake/"))  # diamonds
    premises = {(f.path, p.full_name): p for f in corpus for p in f.premises}
    dep_paths = set()
    for t in load_theorems(d / "random" / "train.json"):
        accessible = _closure(corpus, t.file_path)
        for tac in t.traced_tactics:
            for p in tac.premises:
                q = premises[(p.def_path, p.full_name)]
                assert tuple(q.start) <= tuple(p.def_pos) < tuple(p.def_end_pos) <= tuple(q.end)
                assert p.def_path in accessible or (
                    p.def_path == t.file_path and tuple(q.end) < tuple(t.start)
                )
                if p.def_path.startswith(".lake/packages/synth-"):
                    dep_paths.add(p.def_path.split("/")[2])
        own = premises[(t.file_path, t.full_name)]
        assert (tuple(own.start), tuple(own.end)) == (t.start, t.end)
    assert dep_paths == {"synth-000", "synth-001"}


def test_shape_statistics(synth):
    _, dirs = synth
    thms = [t for d in dirs for s in SPLITS for t in load_theorems(d / "random" / f"{s}.json")]
    n_tac = [len(t.traced_tactics) for t in thms]
    assert 3.2 <= statistics.mean(n_tac) <= 4.8 and min(n_tac) == 1 and max(n_tac) >= 10
    tactics = [x for t in thms for x in t.traced_tactics]
    per_tac = [len(x.premises) for x in tactics]
    assert max(per_tac) == 3 and 0.3 <= statistics.mean(per_tac) <= 1.2
    lengths = [len(x.state_before) for x in tactics]
    assert 80 <= statistics.median(lengths) <= 300
    assert sum(30 <= n <= 450 for n in lengths) / len(lengths) >= 0.9
    assert all("⊢" in x.state_before for x in tactics)
    assert all(t.traced_tactics[-1].state_after == "no goals" for t in thms)
    # heavy-tailed popularity: the most used premise is used far more than the median one
    counts = {}
    for x in tactics:
        for p in x.premises:
            counts[p.full_name] = counts.get(p.full_name, 0) + 1
    assert max(counts.values()) >= 5 * statistics.median(counts.values())


def test_novel_premises_split_is_novel(synth):
    _, dirs = synth
    for d in dirs:
        used = lambda ts: {p.full_name for t in ts for x in t.traced_tactics for p in x.premises}  # noqa: E731
        train = used(load_theorems(d / "novel_premises" / "train.json"))
        for s in ("val", "test"):
            for t in load_theorems(d / "novel_premises" / f"{s}.json"):
                assert used([t]) - train


def test_synthetic_theorems_are_valid_records():
    records = list(synthetic_theorems(50, seed=3))
    assert len(records) == 50
    assert records == list(synthetic_theorems(50, seed=3))
    assert all(Theorem.model_validate(r).traced_tactics for r in records)


def test_regenerating_replaces_the_directory_whole(tmp_path):
    (d,) = generate_synthetic(tmp_path, 30, n_repos=1)
    (d / "stray.txt").write_text("x")
    generate_synthetic(tmp_path, 20, n_repos=1)
    assert not (d / "stray.txt").exists()
    assert sum(len(load_theorems(d / "random" / f"{s}.json")) for s in SPLITS) == 20
    assert [p.name for p in tmp_path.iterdir()] == ["synth-000"]  # no temp dirs left behind


@pytest.mark.slow
def test_twenty_thousand_theorems_stream(tmp_path):
    dirs = generate_synthetic(tmp_path, 20_000, n_repos=2, seed=1)
    n = 0
    for d in dirs:
        for s in SPLITS:
            data = json.loads((d / "random" / f"{s}.json").read_text())
            n += len(data)
    assert n == 20_000
