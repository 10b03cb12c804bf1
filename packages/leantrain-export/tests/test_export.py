"""export_merged_data, lifelong steps (Database.prepare_lifelong / export_merged_data, as the
lifelong engine calls them), curriculum and the CLI."""

from __future__ import annotations

import json
import math

import pytest
from export_helpers import key, load_split_dir, tactic, theorem, write_export
from leantrain.core.cli import main as leantrain_main
from leantrain.core.errors import ConfigError, DataError
from leantrain.export import (
    Database,
    RepoInfo,
    export_merged_data,
    order_repositories,
    pin_novel_premise_rate,
    theorem_difficulty,
)
from leantrain.export import export_merged as export_mod


def _premises(t):
    return {a["full_name"] for tt in t["traced_tactics"] for a in tt["annotated_tactic"][1]}


def _check_invariants(out, all_keys):
    for strategy in ("random", "novel_premises"):
        splits = load_split_dir(out, strategy)
        keys = {s: [key(t) for t in v] for s, v in splits.items()}
        for s, ks in keys.items():
            assert len(ks) == len(set(ks)), f"{strategy}/{s} has duplicates"
        assert not set(keys["train"]) & set(keys["val"])
        assert not set(keys["train"]) & set(keys["test"])
        assert not set(keys["val"]) & set(keys["test"])
        assert set(keys["train"]) | set(keys["val"]) | set(keys["test"]) == all_keys  # complete
    novel = load_split_dir(out, "novel_premises")
    train_premises = set().union(*(_premises(t) for t in novel["train"]))
    for t in novel["val"] + novel["test"]:
        assert _premises(t) - train_premises, f"{t['full_name']} uses no novel premise"
    return novel


def test_split_invariants_and_fractions_on_real_benchmark(tmp_path, benchmark_head):
    db = Database(tmp_path / "lt.db")
    db.import_path(benchmark_head)
    res = export_merged_data(db, None, tmp_path / "out")
    all_keys = {key(t) for t in json.loads((benchmark_head / "test_head.json").read_text())}
    novel = _check_invariants(tmp_path / "out", all_keys)
    n = len(all_keys)
    rnd = res.split_sizes["random"]
    assert abs(rnd["val"] / n - 0.2) < 0.05 and abs(rnd["test"] / n - 0.2) < 0.05
    held = (len(novel["val"]) + len(novel["test"])) / n
    assert abs(held - 0.4) < 0.08, held  # calibrated rate hits val+test approximately
    assert 0 < res.novel_premise_rate < 1


def test_deterministic_for_a_seed(tmp_path, synthetic_repos):
    db = Database(tmp_path / "lt.db")
    for d in synthetic_repos:
        db.import_path(d)
    export_merged_data(db, None, tmp_path / "a", seed=7)
    export_merged_data(db, None, tmp_path / "b", seed=7)
    export_merged_data(db, None, tmp_path / "c", seed=8)
    for strategy in ("random", "novel_premises"):
        for split in ("train", "val", "test"):
            a = (tmp_path / "a" / strategy / f"{split}.json").read_bytes()
            assert a == (tmp_path / "b" / strategy / f"{split}.json").read_bytes()
    assert load_split_dir(tmp_path / "a", "random") != load_split_dir(tmp_path / "c", "random")
    assert (tmp_path / "a" / "corpus.jsonl").read_bytes() == (
        tmp_path / "b" / "corpus.jsonl"
    ).read_bytes()


def _steps(db, ids, data):
    """What the lifelong engine does: pin once, then export the repositories so far."""
    db.prepare_lifelong(ids, data)
    return [db.export_merged_data(ids[: n + 1], data / f"{n:03d}") for n in range(len(ids))]


def test_lifelong_steps_are_stable_and_resumable(tmp_path, synthetic_repos):
    db = Database(tmp_path / "lt.db")
    ids = [i for d in synthetic_repos for i in db.import_path(d)]
    steps = _steps(db, ids, tmp_path / "data")
    assert len({s.novel_premise_rate for s in steps}) == 1  # calibrated once
    seen: dict[str, dict] = {"random": {}, "novel_premises": {}}
    for n in range(len(ids)):
        out = tmp_path / "data" / f"{n:03d}"
        _check_invariants(out, {key(t) for s in load_split_dir(out, "random").values() for t in s})
        for strategy in seen:
            current = {
                key(t): split for split, ts in load_split_dir(out, strategy).items() for t in ts
            }
            for k, split in seen[strategy].items():
                assert current[k] == split, f"{strategy}: {k} moved from {split} to {current[k]}"
            seen[strategy] = current
    assert all(v for v in seen.values())
    # resume in a new process (a new Database): the pin in data/ is reused, the export identical
    again = Database(tmp_path / "lt.db")
    assert again.prepare_lifelong(ids, tmp_path / "data") == steps[0].novel_premise_rate
    again.export_merged_data(ids, tmp_path / "resumed")
    assert load_split_dir(tmp_path / "resumed", "novel_premises") == load_split_dir(
        tmp_path / "data" / "002", "novel_premises"
    )


def test_pinned_rate_survives_a_run_extended_with_more_repositories(tmp_path, synthetic_repos):
    db = Database(tmp_path / "lt.db")
    ids = [i for d in synthetic_repos for i in db.import_path(d)]
    reference = _steps(db, ids, tmp_path / "all")
    rate = pin_novel_premise_rate(db, ids, tmp_path / "data")
    assert rate == reference[0].novel_premise_rate
    # a run started on the first repository, extended later: the first pin stays
    first = Database(tmp_path / "lt.db")
    assert first.prepare_lifelong(ids[:1], tmp_path / "data") == rate
    for n in range(1, len(ids) + 1):
        result = first.export_merged_data(ids[:n], tmp_path / "data" / f"{n:03d}")
        assert result.novel_premise_rate == rate
        assert load_split_dir(tmp_path / "data" / f"{n:03d}", "novel_premises") == load_split_dir(
            tmp_path / "all" / f"{n - 1:03d}", "novel_premises"
        )
    pinned = json.loads((tmp_path / "data" / "lifelong.json").read_text())
    assert pinned["novel_premise_rate"] == rate


def test_dedup_keeps_newest_date_processed(tmp_path):
    def make(name, tac, date):
        url = f"https://github.com/o/{name}"
        return write_export(
            tmp_path / name,
            url,
            "c",
            [
                theorem(url, "c", "shared_thm", [tactic(tac)]),
                theorem(url, "c", f"own_{name}", [tactic("rfl")], line=20),
            ],
            date=date,
        )

    db = Database(tmp_path / "lt.db")
    db.import_path(make("old", "simp", "2024-01-01T00:00:00"))
    db.import_path(make("new", "omega", "2024-06-01T00:00:00"))
    res = export_merged_data(db, None, tmp_path / "out", val_fraction=0.0, test_fraction=0.0)
    train = load_split_dir(tmp_path / "out", "random")["train"]
    shared = [t for t in train if t["full_name"] == "shared_thm"]
    assert len(shared) == 1 and shared[0]["traced_tactics"][0]["tactic"] == "omega"
    assert shared[0]["url"] == "https://github.com/o/new"
    assert res.num_theorems == 3 and res.duplicates_dropped == 1
    db.update_repository("https://github.com/o/old@c", date_processed="2025-01-01T00:00:00")
    export_merged_data(db, None, tmp_path / "out", val_fraction=0.0, test_fraction=0.0)
    shared = [
        t
        for t in load_split_dir(tmp_path / "out", "random")["train"]
        if t["full_name"] == "shared_thm"
    ]
    assert shared[0]["traced_tactics"][0]["tactic"] == "simp"


def test_no_goals_and_focus_dot_tactics_are_dropped(tmp_path):
    tacs = [
        tactic("constructor", before="⊢ p ∧ q", after="case left\n⊢ p"),
        tactic("· exact hp", ["hp"]),
        tactic("rfl", before="no goals"),
    ]
    write_export(tmp_path / "src", "u", "c", [theorem("u", "c", "t", tacs)])
    db = Database(tmp_path / "lt.db")
    db.import_path(tmp_path / "src")
    res = export_merged_data(db, None, tmp_path / "out", val_fraction=0.0, test_fraction=0.0)
    (t,) = load_split_dir(tmp_path / "out", "random")["train"]
    assert [x["tactic"] for x in t["traced_tactics"]] == ["constructor"]
    assert (res.num_tactics, res.dropped_tactics) == (1, 2)
    assert db.stats()["tactics"] == 3  # the database keeps everything


def test_merge_errors_write_nothing(tmp_path, lean4_example):
    db = Database(tmp_path / "lt.db")
    with pytest.raises(DataError, match="holds no repositories"):
        export_merged_data(db, None, tmp_path / "out")
    db.import_path(lean4_example)
    with pytest.raises(DataError, match="unknown repository 'nope@x'"):
        export_merged_data(db, ["nope@x"], tmp_path / "out")
    with pytest.raises(DataError, match="empty selection"):
        export_merged_data(db, [], tmp_path / "out")
    db.add_repository(RepoInfo(url="https://e/x", commit="1"))
    with pytest.raises(DataError, match=r"empty selection.*no theorems"):
        export_merged_data(db, ["https://e/x@1"], tmp_path / "out")
    with pytest.raises(ConfigError, match="val_fraction"):
        export_merged_data(db, None, tmp_path / "out", val_fraction=0.7, test_fraction=0.5)
    with pytest.raises(ConfigError, match="unknown key"):
        export_merged_data(db, None, tmp_path / "out", sed=1)
    assert not (tmp_path / "out").exists()


def test_interrupted_export_keeps_the_previous_one(tmp_path, lean4_example, monkeypatch):
    db = Database(tmp_path / "lt.db")
    db.import_path(lean4_example)
    export_merged_data(db, None, tmp_path / "out")
    before = {p.name: p.read_bytes() for p in (tmp_path / "out" / "random").iterdir()}

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(export_mod, "_write_corpus", boom)
    with pytest.raises(KeyboardInterrupt):
        export_merged_data(db, None, tmp_path / "out", seed=99)
    assert {p.name: p.read_bytes() for p in (tmp_path / "out" / "random").iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out")) == []


def test_curriculum_orders_easiest_first(tmp_path):
    db = Database(tmp_path / "lt.db")
    for name, steps in (("hard", [6, 7, 8, 9]), ("easy", [1, 1, 2, 2]), ("mid", [2, 3, 4, 5])):
        url = f"https://github.com/o/{name}"
        thms = [
            theorem(url, "c", f"{name}_{i}", [tactic("rfl")] * n, line=10 * i + 1)
            for i, n in enumerate(steps)
        ]
        write_export(tmp_path / name, url, "c", thms)
        db.import_path(tmp_path / name)
    assert [i.split("/")[-1].split("@")[0] for i in db.curriculum()] == ["easy", "mid", "hard"]
    order = order_repositories(db)
    assert (order[0].easy, order[-1].easy) == (4, 0)
    assert theorem_difficulty(3) == pytest.approx(math.e**3)
    assert theorem_difficulty(2, has_sorry=True) == math.inf and theorem_difficulty(0) is None


def test_cli_end_to_end(tmp_path, lean4_example, capsys):
    db = str(tmp_path / "lt.db")
    assert leantrain_main(["export", "import", str(lean4_example), "--db", db]) == 0
    assert leantrain_main(["export", "list", "--db", db, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out.split("\n", 2)[-1])
    rid = listed[0]["id"]
    assert (
        leantrain_main(
            [
                "export",
                "merge",
                "--db",
                db,
                "--repo",
                rid,
                "--out",
                str(tmp_path / "out"),
                "--seed",
                "1",
            ]
        )
        == 0
    )
    assert (tmp_path / "out" / "novel_premises" / "test.json").is_file()
    assert leantrain_main(["export", "stats", "--db", db, "--json"]) == 0
    assert (
        json.loads(capsys.readouterr().out.split("wrote", 1)[-1].split("\n", 3)[-1])["theorems"]
        == 20
    )
    assert leantrain_main(["export", "curriculum", "--db", db]) == 0
    assert (
        leantrain_main(["export", "dump-json", "--db", db, "--out", str(tmp_path / "dyn.json")])
        == 0
    )
    assert (
        json.loads((tmp_path / "dyn.json").read_text())["repositories"][0]["commit"]
        == listed[0]["commit"]
    )
    capsys.readouterr()
    assert (
        leantrain_main(
            ["export", "merge", "--db", db, "--repo", "nope@x", "--out", str(tmp_path / "o2")]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "unknown repository" in err
    assert leantrain_main(["export", "merge", "--db", db]) == 2
    assert leantrain_main(["export", "list", "--db", str(tmp_path / "missing.db")]) == 1
    assert leantrain_main(["export", "import", str(tmp_path / "nowhere"), "--db", db]) == 1
    assert not (tmp_path / "missing.db").exists()


def test_cli_imports_the_sample_data(tmp_path, capsys):
    from leantrain.core.sample import sample_repo_dirs

    if not sample_repo_dirs():
        pytest.skip("leantrain-core ships no sample data yet")
    db = str(tmp_path / "lt.db")
    assert leantrain_main(["export", "import", "--sample", "--db", db]) == 0
    with Database(db) as d:
        assert len(d.list_repositories()) == len(sample_repo_dirs())
        res = export_merged_data(d, d.curriculum(), tmp_path / "out")
    assert res.num_theorems > 0 and res.num_premises > 0
