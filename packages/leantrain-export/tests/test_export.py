"""export_merged_data, lifelong steps (Database.prepare_lifelong / export_merged_data, as the
lifelong engine calls them), curriculum and the CLI."""

from __future__ import annotations

import json

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
)
from leantrain.export import export_merged as export_mod
from leantrain.export.export_config import ExportConfig


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
    # novel_premises is calibrated on what a retriever trains on: tactics with premises
    # (on theorem counts, theorems without tactics all trained and 78 % of tactics were held out)
    details = res.split_details["novel_premises"]
    with_premises = {s: d["tactics_with_premises"] for s, d in details.items()}
    assert sum(with_premises.values()) == 1069  # the data README
    for split, target in (("val", 0.2), ("test", 0.2), ("train", 0.6)):
        assert abs(with_premises[split] / 1069 - target) < 0.08, with_premises
    assert {s: d["theorems"] for s, d in details.items()} == {s: len(ts) for s, ts in novel.items()}
    assert 0 < res.novel_premise_rate < 1
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())["leantrain"]
    assert meta["split_details"] == res.split_details


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


@pytest.mark.slow
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


def test_selection_without_duplicates_skips_the_window_with_the_same_theorems(
    tmp_path, synthetic_repos
):
    db = Database(tmp_path / "lt.db")
    for d in synthetic_repos:
        db.import_path(d)
    conn = db.conn
    ids = db.repo_row_ids(None)

    def selected() -> list[int]:
        return [r[0] for r in conn.execute("SELECT theorem_id FROM temp._sel ORDER BY rowid")]

    assert export_mod._all_distinct(conn, ids)
    assert not export_mod._all_distinct(conn, ids[:2])  # a subset: the window decides
    export_mod.select_theorems(db, None)
    fast = selected()
    conn.execute("DELETE FROM temp._sel")
    export_mod._select_newest(conn)
    assert fast == selected() and len(fast) == db.stats()["theorems"]
    # one theorem key in two repositories: no longer all distinct
    conn.execute(
        "UPDATE theorems SET file_path = (SELECT file_path FROM theorems WHERE id = 1), "
        "full_name = (SELECT full_name FROM theorems WHERE id = 1), start_line = (SELECT "
        "start_line FROM theorems WHERE id = 1), start_col = (SELECT start_col FROM theorems "
        "WHERE id = 1), end_line = (SELECT end_line FROM theorems WHERE id = 1), end_col = "
        "(SELECT end_col FROM theorems WHERE id = 1) WHERE id = (SELECT MAX(id) FROM theorems)"
    )
    assert not export_mod._all_distinct(conn, ids)
    assert export_mod.select_theorems(db, None)[1] == 1  # one duplicate dropped


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


def test_cli_positional_paths_repeated_repos_and_every_export_setting(
    tmp_path, synthetic_repos, capsys
):
    """Issue 32: ``import A B``, ``merge --repo X --repo Y`` and ExportConfig's flags."""
    db = str(tmp_path / "lt.db")
    assert leantrain_main(["export", "import", *map(str, synthetic_repos[:2]), "--db", db]) == 0
    with Database(db) as d:
        ids = [r.id for r in d.list_repositories()]
    assert len(ids) == 2
    argv = ["export", "merge", "--db", db, "--out", str(tmp_path / "m"), "--seed", "5"]
    argv += ["--repo", ids[0], "--repo", ids[1], "--drop-tactics", "false"]
    assert leantrain_main(argv) == 0
    meta = json.loads((tmp_path / "m" / "metadata.json").read_text())["leantrain"]
    assert list(meta["config"]) == list(ExportConfig.KEYS)
    assert meta["config"]["seed"] == 5 and meta["config"]["drop_tactics"] is False
    capsys.readouterr()
    assert leantrain_main(["export", "merge", "--db", db, "--out", "x", "--val-fraction", "1"]) == 2
    err = capsys.readouterr().err
    assert "--val_fraction must be at least 0 and below 1, got 1.0" in err


# -- issue 10: novel_premises calibrated on tactics with premises; unknown imports explicit ------
def _skewed_theorems(url: str, commit: str, n: int, seed: int, ns: str = "T") -> list[dict]:
    """Like the LB4 head: many theorems without tactics, and a few heavy ones with many tactics
    and premises (drawn from a shared pool, so premises recur across theorems)."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = rng.random()
        if kind < 0.4:  # a term-mode proof: no tactics at all
            tactics = []
        elif kind < 0.55:  # tactics without premises
            tactics = [tactic(f"rfl{j}") for j in range(rng.randint(1, 3))]
        else:  # k distinct premises over 1..12 tactics (heavy tail)
            count = rng.choice([1, 1, 2, 3, 5, 8, 12])
            pool = [f"P.p{rng.randrange(5000)}" for _ in range(rng.randint(1, count + 2))]
            tactics = [tactic(f"simp [{rng.choice(pool)}]", []) for _ in range(count)]
            for t in tactics:
                name = t["tactic"][6:-1]
                t.update(tactic(t["tactic"], [name]))
            tactics.append(tactic("done"))
        out.append(
            theorem(
                url, commit, f"{ns}.thm{i}", tactics, file=f"Lib/F{i % 30}.lean", line=i * 5 + 1
            )
        )
    return out


def test_novel_premises_split_holds_its_fractions_in_tactics_with_premises(tmp_path):
    db = Database(tmp_path / "lt.db")
    url = "https://github.com/o/skew"
    db.import_path(write_export(tmp_path / "src", url, "c1", _skewed_theorems(url, "c1", 1500, 3)))
    res = export_merged_data(db, None, tmp_path / "out")
    details = res.split_details["novel_premises"]
    total = sum(d["tactics_with_premises"] for d in details.values())
    for split, target in (("train", 0.6), ("val", 0.2), ("test", 0.2)):
        frac = details[split]["tactics_with_premises"] / total
        assert abs(frac - target) < 0.05, (split, frac, details)
    # theorems without premise-using tactics cannot use a novel premise: they train
    novel = load_split_dir(tmp_path / "out", "novel_premises")
    assert all(
        any(t["annotated_tactic"][1] for t in thm["traced_tactics"])
        for s in ("val", "test")
        for thm in novel[s]
    )
    # sizes are reported for both strategies and match the files; metadata carries them
    for strategy in ("random", "novel_premises"):
        files = load_split_dir(tmp_path / "out", strategy)
        for split, thms in files.items():
            d = res.split_details[strategy][split]
            assert d["theorems"] == len(thms) == res.split_sizes[strategy][split]
            assert d["tactics"] == sum(len(t["traced_tactics"]) for t in thms)
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())["leantrain"]
    assert meta["split_details"] == res.split_details
    # what `export stats` reports is what the export wrote
    summary = export_mod.split_summary(db)
    assert summary["splits"] == res.split_details
    assert summary["novel_premise_rate"] == res.novel_premise_rate


@pytest.mark.slow
def test_lifelong_novel_split_is_stable_when_calibrated_on_tactics(tmp_path):
    db = Database(tmp_path / "lt.db")
    ids = []
    for r in range(3):
        url = f"https://github.com/o/skew{r}"
        thms = _skewed_theorems(url, "c", 300, r, ns=f"R{r}")
        ids += db.import_path(write_export(tmp_path / f"src{r}", url, "c", thms))
    steps = _steps(db, ids, tmp_path / "data")
    assert len({s.novel_premise_rate for s in steps}) == 1
    pinned = json.loads((tmp_path / "data" / "lifelong.json").read_text())
    assert pinned["calibrated_on"] == "tactics_with_premises"
    seen: dict = {}
    for n in range(len(ids)):
        out = tmp_path / "data" / f"{n:03d}"
        current = {key(t): s for s, ts in load_split_dir(out, "novel_premises").items() for t in ts}
        assert all(current[k] == s for k, s in seen.items())
        seen = current


def test_unknown_imports_are_explicit_in_the_export(tmp_path, capsys):
    url_a, url_b = "https://github.com/o/nocorpus", "https://github.com/o/withcorpus"
    thm_a = theorem(url_a, "c", "A.t", [tactic("simp [Foo.bar]", ["Foo.bar"])])
    corpus_b = [
        {"path": "Lib/Base.lean", "imports": [], "premises": [
            {"full_name": "Base.x", "code": "theorem Base.x : True", "start": [1, 1], "end": [1, 20]}
        ]},
        {"path": "Lib/Top.lean", "imports": ["Lib/Base.lean"], "premises": []},
    ]  # fmt: skip
    thm_b = theorem(url_b, "c", "B.t", [tactic("exact Base.x", [])], file="Lib/Top.lean")
    db_path = tmp_path / "lt.db"
    with Database(db_path) as db:
        db.import_path(write_export(tmp_path / "a", url_a, "c", [thm_a]))
        db.import_path(write_export(tmp_path / "b", url_b, "c", [thm_b], corpus=corpus_b))
        res = export_merged_data(db, None, tmp_path / "out")
    lines = {
        f["path"]: f
        for f in map(json.loads, (tmp_path / "out" / "corpus.jsonl").read_text().splitlines())
    }
    # built from annotations: imports unknown, still LeanDojo's {path, imports, premises}
    assert (
        lines["Lib/Defs.lean"]["imports"] == [] and lines["Lib/Defs.lean"]["imports_known"] is False
    )
    # a real corpus: imports as given, no marker (LeanDojo corpora read as known)
    assert lines["Lib/Top.lean"]["imports"] == ["Lib/Base.lean"]
    assert (
        "imports_known" not in lines["Lib/Top.lean"]
        and "imports_known" not in lines["Lib/Base.lean"]
    )
    assert res.unknown_imports == 1
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())["leantrain"]
    assert meta["num_files_unknown_imports"] == 1
    # importing the export back (and a dump-json round trip) keeps the imports unknown
    with Database(tmp_path / "again.db") as again:
        again.import_path(tmp_path / "out")
        export_merged_data(again, None, tmp_path / "out2")
    assert (tmp_path / "out2" / "corpus.jsonl").read_text() == (
        tmp_path / "out" / "corpus.jsonl"
    ).read_text()
    assert (
        leantrain_main(
            ["export", "dump-json", "--db", str(db_path), "--out", str(tmp_path / "d.json")]
        )
        == 0
    )
    dumped = json.loads((tmp_path / "d.json").read_text())
    files = [f for r in dumped["repositories"] for f in r["premise_files"]]
    assert [f.get("imports_known") for f in files if f["path"] == "Lib/Defs.lean"] == [False]
    # `export stats` reports each split's theorems, tactics and tactics with premises
    capsys.readouterr()
    assert leantrain_main(["export", "stats", "--db", str(db_path)]) == 0
    out = capsys.readouterr().out
    assert "novel_premises: train" in out and "with premises" in out
    assert leantrain_main(["export", "stats", "--db", str(db_path), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert set(stats["splits"]["random"]["train"]) == {
        "theorems",
        "tactics",
        "tactics_with_premises",
    }


def test_a_file_rebuilt_from_annotations_does_not_hide_a_traced_copy(tmp_path, lean4_example):
    # lean4-example has no corpus.jsonl (its Init files are rebuilt from annotations, partial,
    # and dated newer); the sample's traced copies of the same files must still win, and no
    # premise an annotation names may go missing from the merged corpus
    db = Database(tmp_path / "lt.db")
    db.import_path(lean4_example)
    db.import_sample()
    out = tmp_path / "merged"
    export_merged_data(db, None, out)
    corpus = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    names = {p["full_name"] for line in corpus for p in line["premises"]}
    for strategy in ("random", "novel_premises"):
        for split in load_split_dir(out, strategy).values():
            assert _premises_of(split) <= names
    paths = [line["path"] for line in corpus]
    assert len(paths) == len(set(paths))


def _premises_of(theorems):
    return set().union(*(_premises(t) for t in theorems)) if theorems else set()


def _blake2b_unit(seed, salt, key):
    # the split hash as documented, written out independently of leantrain.export.splits
    import hashlib

    digest = hashlib.blake2b(f"{seed}\x1f{salt}\x1f{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / float(1 << 64)


def test_splitter_gives_the_module_functions_values():
    # the export's Splitter hashes each salt's prefix once: every split must stay the same
    from leantrain.export.splits import (
        Splitter,
        novel_split,
        premise_held_out,
        random_split,
        unit_hash,
        unit_hasher,
    )

    keys = [f"Lib/F{i % 7}.lean\x1eT.n_{i}\x1e{i}:1\x1e{i + 2}:4 ∀ ⊢ é" for i in range(2000)]
    for seed in (0, 3):
        split = Splitter(seed, 0.1, 0.15)
        unit = unit_hasher(seed, "random")
        for k in keys:
            assert unit(k) == unit_hash(seed, "random", k) == _blake2b_unit(seed, "random", k)
            assert split.random(k) == random_split(seed, k, 0.1, 0.15)
            for held in (False, True):
                assert split.novel(k, held) == novel_split(seed, k, held, 0.1, 0.15)
            assert split.premise_held_out(k, 0.3) == premise_held_out(seed, k, 0.3)
    assert Splitter(0, 0.0, 0.0).novel(keys[0], True) == "train"


def _corpus_line(path, names):
    return {
        "path": path,
        "imports": [],
        "premises": [
            {"full_name": n, "code": f"theorem {n}", "start": [i + 1, 1], "end": [i + 1, 9]}
            for i, n in enumerate(names)
        ],
    }


def test_corpus_copies_merge_only_what_differs(tmp_path):
    # a file held by two repositories: identical copies are written once as they are; a copy
    # with a premise the newest lacks adds it after the newest's premises
    thm = [theorem("https://x/a", "c1", "T.a", [tactic("exact A.one", ["A.one"])])]
    db = Database(tmp_path / "lt.db")
    same = _corpus_line("Lib/Defs.lean", ["A.one", "A.two"])
    old = _corpus_line("Lib/Old.lean", ["B.one", "B.gone"])
    new = _corpus_line("Lib/Old.lean", ["B.one", "B.new"])
    db.import_path(write_export(tmp_path / "a", "https://x/a", "c1", thm, corpus=[same, old]))
    thm_b = [theorem("https://x/b", "c2", "T.b", [tactic("exact A.two", ["A.two"])])]
    db.import_path(
        write_export(
            tmp_path / "b", "https://x/b", "c2", thm_b, date="2024-02-01", corpus=[same, new]
        )
    )
    res = export_merged_data(db, None, tmp_path / "out")
    lines = {
        line["path"]: [p["full_name"] for p in line["premises"]]
        for line in map(json.loads, (tmp_path / "out" / "corpus.jsonl").read_text().splitlines())
    }
    assert lines == {
        "Lib/Defs.lean": ["A.one", "A.two"],
        "Lib/Old.lean": ["B.one", "B.new", "B.gone"],
    }
    assert res.num_premises == 5


def test_premise_stats_reads_uses_of_another_shape(tmp_path):
    # uses_json as leantrain writes it is read by msgspec; a value of another shape (kept as
    # 0/1, as SQL writes it) is read as plain JSON with the same result
    thms = [
        theorem("https://x/a", "c1", f"T.t{i}", [tactic("exact A.one", ["A.one"]), tactic("rfl")])
        for i in range(5)
    ]
    db = Database(tmp_path / "lt.db")
    db.import_path(write_export(tmp_path / "a", "https://x/a", "c1", thms))
    before = export_mod.premise_count_histogram(db, None)
    db.conn.execute(
        "UPDATE theorems SET uses_json = CAST(replace(CAST(uses_json AS TEXT), 'true', '1') AS BLOB)"
    )
    assert b"true" not in db.conn.execute("SELECT uses_json FROM theorems").fetchone()[0]
    assert export_mod.premise_count_histogram(db, None) == before == ({1: 5}, 5)
