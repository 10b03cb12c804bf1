"""The lifelong engine with a fake trainer and a fake database: order, export once per step,
chaining, resume after a crash, per-repository evaluations, duck-typed repos, config checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from leantrain.core.errors import ConfigError
from leantrain.core.events import read_events
from leantrain.core.forgetting import forgetting_report
from leantrain.core.lifelong import LifelongEngine, Step, final_checkpoint, repo_id

REPOS = ["https://x/a@1", "https://x/b@2", "https://x/c@3"]


class FakeDatabase:
    """Exports one theorem per repository to test, in the LeanDojo layout."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def export_merged_data(self, repos: list[Any], path: Path) -> None:
        ids = [repo_id(r) for r in repos]
        self.calls.append(ids)
        rows = [
            {"url": r.rpartition("@")[0], "commit": r.rpartition("@")[2], "full_name": r}
            for r in ids
        ]
        for strategy in ("random", "novel_premises"):
            (path / strategy).mkdir(parents=True)
            for split in ("train", "val", "test"):
                (path / strategy / f"{split}.json").write_text(json.dumps(rows))
        (path / "corpus.jsonl").write_text("")


class FakeTrainer:
    """'Model' = the list of repositories trained on; its score on a repo's test split is 1
    if that repo was among the last two trained (so the first repo is forgotten)."""

    score_key = "acc"
    higher_is_better = True

    def __init__(self, name: str = "fake", crash_at: int | None = None) -> None:
        self.name = name
        self.crash_at = crash_at
        self.model: list[str] = []
        self.steps: list[Step] = []

    def train_step(self, step: Step) -> dict[str, Any]:
        self.steps.append(step)
        if step.init_from is not None:
            self.load(step.init_from)
        elif step.index == 0:
            self.model = []
        if step.index == self.crash_at:
            step.work_dir.mkdir(parents=True, exist_ok=True)
            raise KeyboardInterrupt  # a kill in the middle of the step
        self.model = [*self.model, step.repo]
        return {"train_loss": 1.0 / (step.index + 1)}

    def evaluate(self, data: Any, split: str = "test") -> dict[str, float]:
        rows = json.loads((Path(data) / "random" / f"{split}.json").read_text())
        hits = [r["full_name"] in self.model[-2:] for r in rows]
        return {"acc": sum(hits) / len(hits), "n": float(len(hits))}

    def save(self, path: Path) -> None:
        (path / "model.json").write_text(json.dumps(self.model))

    def load(self, path: Path) -> None:
        self.model = json.loads((path / "model.json").read_text())


def test_engine_trains_each_repo_once_and_measures_forgetting(tmp_path: Path) -> None:
    db, trainer = FakeDatabase(), FakeTrainer()
    out = LifelongEngine(tmp_path, [trainer], database=db, repos=REPOS).run()["fake"]
    assert db.calls == [REPOS[:1], REPOS[:2], REPOS[:3]]  # one export per step, merged so far
    assert [s.init_from.name if s.init_from else None for s in trainer.steps] == [
        None,
        "000-a",
        "001-b",
    ]
    assert [Path(c).name for c in out["checkpoints"]] == ["000-a", "001-b", "002-c"]
    assert json.loads((Path(out["model_dir"]) / "model.json").read_text()) == REPOS
    assert final_checkpoint(tmp_path) == Path(out["model_dir"])
    # the merged test split after step 2 has all three repos, two of which are "remembered"
    assert out["final"]["test_acc"] == pytest.approx(2 / 3)
    report = forgetting_report(out["evals"])["fake"]
    assert report["matrix"] == [[1.0, None, None], [1.0, 1.0, None], [0.0, 1.0, 1.0]]
    assert report["bwt"] == pytest.approx(-0.5)
    assert report["forgetting"] == [1.0, 0.0]
    assert report["average"] == pytest.approx(2 / 3)
    kinds = [e["kind"] for e in read_events(tmp_path)]
    assert kinds.count("export") == 3 and kinds.count("step") == 3 and kinds.count("eval") == 6


def test_engine_resumes_after_a_crash_without_redoing_work(tmp_path: Path) -> None:
    db = FakeDatabase()
    with pytest.raises(KeyboardInterrupt):
        LifelongEngine(tmp_path, [FakeTrainer(crash_at=1)], database=db, repos=REPOS).run()
    trainer = FakeTrainer()
    out = LifelongEngine(tmp_path, [trainer], database=db, repos=REPOS).run()["fake"]
    assert [s.index for s in trainer.steps] == [1, 2]
    assert trainer.steps[0].init_from == tmp_path / "fake" / "000-a"
    assert len(db.calls) == 3  # step 1's export was reused
    assert not (tmp_path / "fake" / "work").exists() or not any(
        (tmp_path / "fake" / "work").iterdir()
    )
    assert len(out["evals"]) == 6
    again = FakeTrainer()
    LifelongEngine(tmp_path, [again], database=db, repos=REPOS).run()
    assert again.steps == []


def test_chaining_starts_from_the_same_steps_other_model(tmp_path: Path) -> None:
    sft, grpo = FakeTrainer("sft"), FakeTrainer("grpo")
    LifelongEngine(
        tmp_path, [sft, grpo], database=FakeDatabase(), repos=REPOS[:2], chain={"grpo": "sft"}
    ).run()
    assert [s.init_from for s in grpo.steps] == [
        tmp_path / "sft" / "000-a",
        tmp_path / "sft" / "001-b",
    ]


def test_repo_objects_and_names_are_accepted(tmp_path: Path) -> None:
    class LeanGitRepo:
        def __init__(self, url: str, commit: str) -> None:
            self.url, self.commit = url, commit

    db = FakeDatabase()
    LifelongEngine(
        tmp_path, [FakeTrainer()], database=db, repos=[LeanGitRepo("https://x/a", "1")]
    ).run()
    assert db.calls == [["https://x/a@1"]]
    with pytest.raises(ConfigError, match="URL@COMMIT"):
        repo_id("just-a-name")


def test_a_different_config_or_order_in_the_same_dir_is_refused(tmp_path: Path) -> None:
    db = FakeDatabase()
    LifelongEngine(
        tmp_path, [FakeTrainer()], database=db, repos=REPOS[:1], configs={"fake": {"lr": 1}}
    ).run()
    with pytest.raises(ConfigError, match=r"fake\.lr"):
        LifelongEngine(
            tmp_path, [FakeTrainer()], database=db, repos=REPOS[:1], configs={"fake": {"lr": 2}}
        ).run()
    with pytest.raises(ConfigError, match="other repositories"):
        LifelongEngine(
            tmp_path, [FakeTrainer()], database=db, repos=REPOS[1:2], configs={"fake": {"lr": 1}}
        ).run()
    # adding repositories after the earlier ones continues the run
    trainer = FakeTrainer()
    LifelongEngine(
        tmp_path, [trainer], database=db, repos=REPOS[:2], configs={"fake": {"lr": 1}}
    ).run()
    assert [s.index for s in trainer.steps] == [1]


def test_one_off_data_is_a_one_step_run(tmp_path: Path) -> None:
    data = tmp_path / "export"
    FakeDatabase().export_merged_data(REPOS[:2], data)
    out = LifelongEngine(tmp_path / "run", [FakeTrainer()], data=data).run()["fake"]
    assert list(out["per_repo"]) == [f"data:{data.resolve()}"]
    assert out["final"]["test_acc"] == 0.0  # the model is named after the data, not the repos


def test_bad_database_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="export_merged_data"):
        LifelongEngine(tmp_path, [FakeTrainer()], database=object(), repos=REPOS)


def test_forgetting_of_a_lower_is_better_metric() -> None:
    from leantrain.core.forgetting import forgetting_summary

    mae = [[2.0, None], [3.0, 1.0]]  # repo 0 got worse (2 -> 3) after training on repo 1
    s = forgetting_summary(mae, higher_is_better=False)
    assert s["bwt"] == pytest.approx(-1.0)
    assert s["forgetting"] == [pytest.approx(1.0)]
    assert s["average"] == pytest.approx(2.0)
    assert s["average_per_step"] == [2.0, 2.0]


def test_reporting_settings_may_change_on_resume(tmp_path: Path) -> None:
    db = FakeDatabase()
    cfg = {"lr": 1, "disable_tqdm": False, "report_to": "none"}
    LifelongEngine(
        tmp_path, [FakeTrainer()], database=db, repos=REPOS[:1], configs={"fake": cfg}
    ).run()
    trainer = FakeTrainer()
    quieter = {**cfg, "disable_tqdm": True, "report_to": "tensorboard"}
    LifelongEngine(
        tmp_path, [trainer], database=db, repos=REPOS[:2], configs={"fake": quieter}
    ).run()
    assert [s.index for s in trainer.steps] == [1]


def test_the_engine_refuses_a_foreign_directory(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(ConfigError, match="did not write"):
        LifelongEngine(tmp_path, [FakeTrainer()], database=FakeDatabase(), repos=REPOS).run()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_overwrite_starts_a_changed_run_over(tmp_path: Path) -> None:
    db = FakeDatabase()
    LifelongEngine(
        tmp_path, [FakeTrainer()], database=db, repos=REPOS[:1], configs={"fake": {"lr": 1}}
    ).run()
    trainer = FakeTrainer()
    LifelongEngine(
        tmp_path,
        [trainer],
        database=db,
        repos=REPOS[:1],
        configs={"fake": {"lr": 2}},
        overwrite=True,
    ).run()
    assert [s.index for s in trainer.steps] == [0]


def test_an_event_after_a_torn_line_is_kept(tmp_path: Path) -> None:
    from leantrain.core.events import EventLog

    log = EventLog(tmp_path)
    log.write("step", n=1)
    with log.path.open("a", encoding="utf-8") as f:
        f.write('{"kind": "step", "n": 2')  # killed mid-write
    log.write("step", n=3)
    assert [e["n"] for e in read_events(tmp_path)] == [1, 3]


@pytest.mark.parametrize(
    "data",
    [
        bytes(range(256)),
        b"{oops\n",
        b"[1, 2]\n",
        b'{"event": "step"}\n',
        b'{"kind": "step", "metrics": [1]}\n',
    ],
)
def test_events_that_are_not_events_are_a_data_error(tmp_path: Path, data: bytes) -> None:
    from leantrain.core.errors import DataError

    (tmp_path / "metrics.jsonl").write_bytes(data)
    with pytest.raises(DataError, match=r"metrics\.jsonl"):
        list(read_events(tmp_path))


def test_a_rerun_with_nothing_left_holds_the_final_model(tmp_path: Path) -> None:
    db = FakeDatabase()
    LifelongEngine(tmp_path, [FakeTrainer()], database=db, repos=REPOS).run()
    again = FakeTrainer()
    LifelongEngine(tmp_path, [again], database=db, repos=REPOS).run()
    assert again.steps == [] and again.model == REPOS  # not the untrained base model


@pytest.mark.parametrize("lost", ["step", "eval"])
def test_an_event_lost_to_a_kill_after_the_manifest_is_written_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lost: str
) -> None:
    """A kill between saving the manifest and appending to metrics.jsonl: the resumed run
    writes the missing event once (the report reads the step events)."""
    from leantrain.core.events import EventLog

    write = EventLog.write
    state = {"killed": False}

    def kill_once(self: EventLog, kind: str, **fields: Any) -> dict[str, Any]:
        if kind == lost and fields.get("repo_index") == 1 and not state["killed"]:
            state["killed"] = True
            raise KeyboardInterrupt
        return write(self, kind, **fields)

    monkeypatch.setattr(EventLog, "write", kill_once)
    db = FakeDatabase()
    with pytest.raises(KeyboardInterrupt):
        LifelongEngine(tmp_path, [FakeTrainer()], database=db, repos=REPOS).run()
    trainer = FakeTrainer()
    LifelongEngine(tmp_path, [trainer], database=db, repos=REPOS).run()
    assert [s.index for s in trainer.steps] == [2]  # step 1 was trained and recorded: kept
    events = list(read_events(tmp_path))
    steps = [e["repo_index"] for e in events if e["kind"] == "step"]
    evals = sorted((e["step"], e["repo_index"]) for e in events if e["kind"] == "eval")
    assert sorted(steps) == [0, 1, 2]
    assert evals == [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]


def test_a_rerun_with_other_in_memory_rows_is_refused_not_answered_from_the_old_run(
    tmp_path: Path,
) -> None:
    rows = [{"state": "⊢ a", "tactic": "rfl"}, {"state": "⊢ b", "tactic": "simp"}]
    first = LifelongEngine(tmp_path, [FakeTrainer()], data=rows).run()["fake"]
    assert next(iter(first["per_repo"])).startswith("dataset@")
    assert Path(first["model_dir"]).name == "000-dataset"  # named for people, not by hash
    same = FakeTrainer()
    LifelongEngine(tmp_path, [same], data=[dict(r) for r in rows]).run()  # equal content
    assert same.steps == []
    for other in (rows[:1], [*rows, {"state": "⊢ c", "tactic": "omega"}]):
        with pytest.raises(ConfigError, match="was trained on other data"):
            LifelongEngine(tmp_path, [FakeTrainer()], data=other).run()
    again = FakeTrainer()
    out = LifelongEngine(tmp_path, [again], data=rows[:1], overwrite=True).run()["fake"]
    assert [s.data for s in again.steps] == [rows[:1]] and list(out["per_repo"]) != list(
        first["per_repo"]
    )


def test_a_dataset_is_fingerprinted_by_its_rows(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    rows = [{"prompt": f"⊢ {i}", "completion": "rfl"} for i in range(5)]
    LifelongEngine(tmp_path, [FakeTrainer()], data=datasets.Dataset.from_list(rows)).run()
    same = FakeTrainer()
    rebuilt = datasets.Dataset.from_list(rows).with_format("numpy")  # format does not count
    LifelongEngine(tmp_path, [same], data=rebuilt).run()
    assert same.steps == []
    fewer = datasets.Dataset.from_list(rows).select(range(3))  # max_samples=3
    with pytest.raises(ConfigError, match="was trained on other data"):
        LifelongEngine(tmp_path, [FakeTrainer()], data=fewer).run()


def test_in_memory_data_that_cannot_be_fingerprinted_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot tell in-memory data of type object"):
        LifelongEngine(tmp_path, [FakeTrainer()], data=object()).run()


def test_last_data_is_the_last_steps_data_also_when_nothing_was_left(tmp_path: Path) -> None:
    db = FakeDatabase()
    first = LifelongEngine(tmp_path, [FakeTrainer()], database=db, repos=REPOS[:2])
    first.run()
    rerun = LifelongEngine(tmp_path, [FakeTrainer()], database=db, repos=REPOS[:2])
    rerun.run()
    assert first.last_data == rerun.last_data == tmp_path / "data" / "001_b"
    assert (rerun.last_data / "random" / "test.json").is_file()


def test_a_manifest_of_an_unversioned_development_run_is_one_line(tmp_path: Path) -> None:
    from leantrain.core.errors import CheckpointError

    LifelongEngine(tmp_path, [FakeTrainer()], database=FakeDatabase(), repos=REPOS[:1]).run()
    old = json.loads((tmp_path / "manifest.json").read_text())
    old.pop("format_version")
    (tmp_path / "manifest.json").write_text(json.dumps({"schema": 1, **old}))
    with pytest.raises(CheckpointError, match=r"format_version None.*overwrite"):
        LifelongEngine(tmp_path, [FakeTrainer()], database=FakeDatabase(), repos=REPOS[:1]).run()
    trainer = FakeTrainer()
    LifelongEngine(
        tmp_path, [trainer], database=FakeDatabase(), repos=REPOS[:1], overwrite=True
    ).run()
    assert [s.index for s in trainer.steps] == [0]


def test_a_manifest_alone_does_not_make_a_directory_a_run(tmp_path: Path) -> None:
    """Only the .leantrain marker does (the unreleased detection by manifest.json is gone)."""
    (tmp_path / "manifest.json").write_text("{}")
    with pytest.raises(ConfigError, match="did not write"):
        LifelongEngine(tmp_path, [FakeTrainer()], database=FakeDatabase(), repos=REPOS).run()
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_a_model_dir_with_a_manifest_of_its_own_is_not_a_run(tmp_path: Path) -> None:
    LifelongEngine(tmp_path / "run", [FakeTrainer()], data=[{"x": 1}]).run()
    assert final_checkpoint(tmp_path / "run") == tmp_path / "run" / "fake" / "000-dataset"
    model = tmp_path / "model"
    model.mkdir()
    (model / "manifest.json").write_text('{"files": ["model.safetensors"]}')  # not leantrain's
    assert final_checkpoint(model) is None


def test_train_data_is_the_one_train_signature():
    """``train(repos, database, export_dir, *, data_path)`` of every trainer: positional data,
    ``data_path=``, LeanDojo-v2's lifelong order, the config's defaults; the mistakes are one
    line (LeanDojo-v2's ``data_path=`` keyword with a database names ``export_dir``)."""
    from types import SimpleNamespace

    from leantrain.core.lifelong import train_data

    db = FakeDatabase()
    assert train_data("dir", None, None) == {"data": "dir"}
    assert train_data(None, None, "dir") == {"data": "dir"}
    assert train_data(REPOS, db, None) == {"database": db, "repos": REPOS}
    cfg = SimpleNamespace(database=db, repos=REPOS[:1], data_path=None)
    assert train_data(None, None, None, cfg) == {"database": db, "repos": REPOS[:1]}
    assert train_data("dir", None, None, cfg) == {"data": "dir"}  # given data wins
    both = SimpleNamespace(database=db, repos=None, data_path="merged")  # not silently ignored
    with pytest.raises(ConfigError, match=r"both database .* and data_path"):
        train_data(None, None, None, both)
    with pytest.raises(ConfigError, match="both database"):
        train_data(REPOS, db, None, both)
    assert train_data(None, None, None, SimpleNamespace(data_path="d")) == {"data": "d"}
    with pytest.raises(ConfigError, match="export_dir"):
        train_data(REPOS, db, "merged")
    with pytest.raises(ConfigError, match="needs a database"):
        train_data(REPOS, None, None)
    with pytest.raises(ConfigError, match="nothing to train on"):
        train_data(None, None, None, SimpleNamespace(data_path=None))
