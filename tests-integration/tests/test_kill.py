"""SIGKILL at chosen points, then the same command again: it finishes, redoes no finished work,
and everything it wrote verifies.

Each command is killed several times in a chain (run → kill → rerun → kill → … → rerun to the
end); every kill point is an event the run itself produces, so that the kills land in
different phases whatever the machine's speed:

* ``export``  — the temporary directory of a step's merged export appears;
* ``saving``  — a trainer's first resumable checkpoint appears in ``<trainer>/work/NNN/``
  (often while it is still being written);
* ``training`` — a complete checkpoint is there and training goes on past it;
* ``evaluation`` — the ``step`` event of a trainer is in ``metrics.jsonl`` (it is scoring now).

After every kill the manifest loads and each checkpoint it records verifies (a killed run
never points to a missing or half-written checkpoint). After the last rerun: exit 0, one
``step`` event per (trainer, repository), a step killed mid-training continued its step
counter, and every ``<trainer>/NNN-*`` loads with its ``from_pretrained``.
``leantrain export import`` is killed at seeded random points of its run: the DB stays
intact and holds the repository wholly or not at all.

The kills landed and resumed are printed (``pytest -s``) for RELIABILITY.md.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from it_support import leantrain_cmd, quiet_env, tiny_pipeline_config
from leantrain.core.events import read_events
from leantrain.core.manifest import RunManifest
from leantrain.core.sample import sample_repo_dirs

pytestmark = [pytest.mark.slow]

SEED = 9
TIMEOUT_S = 300

Cond = Callable[[], bool]


def _env() -> dict[str, str]:
    # one thread per process: the cores are shared with other test runs
    return quiet_env(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")


def _repos() -> list[Path]:
    dirs = sample_repo_dirs()
    if len(dirs) < 2:
        pytest.skip("leantrain-core ships fewer than two sample repositories")
    return dirs[:2]


def _run(args: list[str], cwd: Path, kill_when: Cond | None = None) -> tuple[bool, int, str]:
    """Run ``leantrain ARGS``; SIGKILL its whole process group once ``kill_when()`` holds.
    Returns (killed, exit code, stderr)."""
    err_path = cwd / f".stderr-{time.monotonic_ns()}"
    with err_path.open("w") as err:
        proc = subprocess.Popen(
            [*leantrain_cmd(), *args],
            cwd=cwd,
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,  # dataloader workers die with it
        )
        killed = False
        deadline = time.monotonic() + TIMEOUT_S
        try:
            while proc.poll() is None:
                if kill_when is not None and kill_when():
                    os.killpg(proc.pid, signal.SIGKILL)
                    killed = True
                    break
                assert time.monotonic() < deadline, f"leantrain {args[0]} hangs"
                time.sleep(0.002)
            proc.wait()
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    text = err_path.read_text(errors="replace")
    err_path.unlink()
    return killed, proc.returncode, text


# -- kill points -------------------------------------------------------------------------------
def _events(run: Path, kind: str, **match: object) -> int:
    return sum(
        1
        for e in read_events(run)
        if e["kind"] == kind and all(e.get(k) == v for k, v in match.items())
    )


def after_seconds(delay: float) -> Cond:
    """``delay`` seconds after the first poll (the process's start)."""
    start: list[float] = []

    def cond() -> bool:
        if not start:
            start.append(time.monotonic())
        return time.monotonic() - start[0] >= delay

    return cond


def at_event(run: Path, kind: str, n: int = 1, **match: object) -> Cond:
    return lambda: _events(run, kind, **match) >= n


def at_export(run: Path, index: int) -> Cond:
    """The merged export of step ``index`` is being written (its temporary directory)."""
    data = run / "data"
    prefix = f"{index:03d}_"
    return lambda: (
        data.is_dir()
        and any(n.startswith(f".{prefix}") or n.startswith(prefix) for n in os.listdir(data))
    )


def at_checkpoint(run: Path, trainer: str, index: int, name: str, complete: str = "") -> Cond:
    """``<trainer>/work/NNN/<name>`` exists (and, when given, the file ``complete`` in it)."""
    work = run / trainer / "work" / f"{index:03d}"

    def cond() -> bool:
        return work.is_dir() and any(
            not complete or (p / complete).is_file() for p in work.glob(name)
        )

    return cond


# -- checks ------------------------------------------------------------------------------------
def _tally(command: str, landed: int, resumed: int) -> None:
    """Kills per command and how many resumed correctly (``pytest -s`` shows them)."""
    print(f"\n[kill] {command}: {resumed}/{landed} kills resumed correctly")


def _check_after_kill(run: Path) -> None:
    """A killed run's manifest loads and every checkpoint it records is whole."""
    if not (run / "manifest.json").exists():
        return
    manifest = RunManifest.load(run)
    assert manifest.status != "completed" or manifest.steps
    for checkpoint in manifest.checkpoints:
        manifest.verify_checkpoint(checkpoint)


def _train_rows(log: Path, skip: int = 0) -> list[dict]:
    """Training-step rows of a per-step log after its first ``skip`` lines."""
    lines = [line for line in log.read_text().splitlines() if line.strip()][skip:]
    rows = [json.loads(line) for line in lines]
    return [
        r
        for r in rows
        if "step" in r and ("loss" in r or "train_loss" in r) and "train_runtime" not in r
    ]


def _resume_marks(run: Path, trainer: str) -> list[tuple[Path, int, int]]:
    """At a kill: ``(log, lines so far, step of the newest complete HF checkpoint)`` of each
    step killed inside training. The rerun must log only steps after that checkpoint."""
    out = []
    for work in (run / trainer / "work").glob("[0-9][0-9][0-9]"):
        done = [
            int(p.name.split("-")[1])
            for p in work.glob("checkpoint-*")
            if (p / "trainer_state.json").is_file()
        ]
        for log in (run / trainer / "logs").glob(f"{work.name}-*.jsonl"):
            if done:
                lines = [x for x in log.read_text().splitlines() if x.strip()]
                out.append((log, len(lines), max(done)))
    return out


def _check_no_restart(marks: list[tuple[Path, int, int]]) -> None:
    """A step killed after a complete checkpoint continued its step counter after it."""
    for log, skip, upto in marks:
        again = sorted({r["step"] for r in _train_rows(log, skip) if r["step"] <= upto})
        assert not again, f"{log.name}: steps {again} trained again after a resume from {upto}"


def _check_finished(run: Path, trainers: list[str], repos: int) -> None:
    manifest = RunManifest.load(run)
    assert manifest.status == "completed"
    steps = manifest.steps
    assert sorted((s.trainer, s.index) for s in steps) == sorted(
        (t, k) for t in trainers for k in range(repos)
    ), steps
    assert all(s.status == "done" for s in steps), steps
    # no finished work redone: one step event per (trainer, repository)
    counts = Counter(
        (e["trainer"], e["repo_index"]) for e in read_events(run) if e["kind"] == "step"
    )
    assert counts == Counter({(t, k): 1 for t in trainers for k in range(repos)}), counts
    evals = Counter((e.trainer, e.step, e.repo_index) for e in manifest.evals)
    assert set(evals.values()) == {1}, evals
    recorded = {c.path for c in manifest.checkpoints}
    for checkpoint in manifest.checkpoints:
        manifest.verify_checkpoint(checkpoint)
    for t in trainers:
        dirs = sorted(p for p in (run / t).glob("[0-9][0-9][0-9]-*") if p.is_dir())
        assert len(dirs) == repos, dirs
        for d in dirs:
            assert str(d.relative_to(run)) in recorded, d
            _load(t, d)
        work = run / t / "work"
        assert not work.exists() or not any(work.iterdir()), list(work.rglob("*"))[:5]


def _load(trainer: str, path: Path) -> None:
    if trainer in ("sft", "grpo"):
        from transformers import AutoModelForCausalLM

        AutoModelForCausalLM.from_pretrained(path)
    elif trainer == "retrieval":
        from leantrain.retrieval import PremiseRetriever

        PremiseRetriever.from_pretrained(path)
    elif trainer == "progress":
        from leantrain.progress.predictor import ProgressPredictor

        ProgressPredictor.from_pretrained(path)


def _kill_chain(
    command: str, args: list[str], cwd: Path, run: Path, points: list[Cond], trainers: list[str]
) -> None:
    landed = 0
    marks = []
    for point in points:
        killed, code, err = _run(args, cwd, point)
        assert killed or code == 0, err
        if not killed:  # finished before this point: the later ones cannot land either
            break
        landed += 1
        _check_after_kill(run)
        marks += [m for t in trainers for m in _resume_marks(run, t)]
    killed, code, err = _run(args, cwd)
    assert code == 0, f"rerun after {landed} kills: exit {code}\n{err[-3000:]}"
    assert "Traceback" not in err, err[-3000:]
    _check_finished(run, trainers, 2)
    _check_no_restart(marks)
    _tally(command, landed, landed)
    assert landed == len(points), f"only {landed} of {len(points)} kill points were reached"


# The default tier kills each command at its two most different points (CI budget); all of
# them with LEANTRAIN_KILL_FULL=1.
FULL = os.environ.get("LEANTRAIN_KILL_FULL") == "1"


def _tier(points: list, keep: tuple[int, ...]) -> list:
    return points if FULL else [points[i] for i in keep]


# -- fixtures ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("db") / "lt.db"
    for repo in _repos():
        _, code, err = _run(["export", "import", str(repo), "--db", str(path)], path.parent)
        assert code == 0, err
    return path


SFT = ["--model", "tiny", "--max-steps", "4", "--save-steps", "2", "--logging-steps", "1"]
SFT += ["--per-device-train-batch-size", "8", "--max-eval-samples", "2", "--eval-k", "1"]


@pytest.fixture(scope="module")
def sft_run(db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The SFT kill chain; its finished run is the model GRPO starts from."""
    cwd = tmp_path_factory.mktemp("sft")
    run = cwd / "sft"
    args = ["sft", *SFT, "--database", str(db), "--output-dir", str(run)]
    points = [
        at_checkpoint(run, "sft", 0, "checkpoint-*"),  # saving (often mid-write)
        at_event(run, "step", trainer="sft", repo_index=0),  # evaluation
        at_export(run, 1),  # export of the second step
        at_checkpoint(run, "sft", 1, "checkpoint-2", "trainer_state.json"),  # training
    ]
    points = _tier(points, (0, 3))
    _kill_chain("leantrain sft", args, cwd, run, points, ["sft"])
    return run


# -- the commands ------------------------------------------------------------------------------
def _table_counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            if not r[0].startswith("sqlite_")
        ]
        return {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}


def _restore(db: Path, base: Path) -> None:
    for f in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        f.unlink(missing_ok=True)
    shutil.copyfile(base, db)


def test_kill_export_import(tmp_path: Path) -> None:
    first, second = _repos()
    ref = tmp_path / "ref.db"
    took = 0.0
    for repo in (first, second):
        t0 = time.monotonic()
        _, code, err = _run(["export", "import", str(repo), "--db", str(ref)], tmp_path)
        assert code == 0, err
        took = time.monotonic() - t0
    full = _table_counts(ref)
    # the DB before each kill: the first repository only (a self-contained copy of it)
    base = tmp_path / "base.db"
    _, code, err = _run(
        ["export", "import", str(first), "--db", str(tmp_path / "one.db")], tmp_path
    )
    assert code == 0, err
    with sqlite3.connect(tmp_path / "one.db") as src, sqlite3.connect(base) as dst:
        src.backup(dst)
    empty = _table_counts(base)
    db = tmp_path / "lt.db"
    wal = Path(f"{db}-wal")
    rng = random.Random(SEED)
    # seeded random points over a clean import's run time, and two inside its write transaction
    points = [after_seconds(rng.uniform(0.6, 1.0) * took) for _ in range(3)]
    points.append(lambda: wal.exists() and wal.stat().st_size > 0)
    points.append(lambda: wal.exists() and wal.stat().st_size > 64 * 1024)
    points = _tier(points, (0, 1, 3))
    landed = resumed = 0
    for point in points:
        _restore(db, base)
        killed, code, err = _run(
            ["export", "import", str(second), "--db", str(db)], tmp_path, point
        )
        if not killed:
            assert code == 0, err
            continue
        landed += 1
        counts = _table_counts(db)  # intact
        assert counts in (empty, full), f"a partial import: {counts} (before {empty})"
        _, code, err = _run(["export", "import", str(second), "--db", str(db)], tmp_path)
        assert code == 0, err
        assert _table_counts(db) == full
        resumed += 1
    _tally("leantrain export import", landed, resumed)
    assert landed >= len(points) - 2, "the kills should land before the import finishes"


def test_kill_sft(sft_run: Path) -> None:
    steps = RunManifest.load(sft_run).trained_steps("sft")
    assert [s.metrics["global_step"] for s in steps] == [4, 4]


def test_kill_grpo(db: Path, sft_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "grpo"
    args = ["grpo", "--model", str(sft_run), "--database", str(db), "--output-dir", str(run)]
    args += ["--max-steps", "2", "--save-steps", "1", "--logging-steps", "1"]
    args += ["--num-generations", "2", "--per-device-train-batch-size", "2"]
    args += ["--max-completion-length", "8", "--max-eval-samples", "2", "--eval-k", "1"]
    args += ["--reward-funcs", "format", "--reward-funcs", "reference_match"]
    points = [
        at_checkpoint(run, "grpo", 0, "checkpoint-*"),
        at_event(run, "step", trainer="grpo", repo_index=0),
        at_export(run, 1),
    ]
    points = _tier(points, (0,))
    _kill_chain("leantrain grpo", args, tmp_path, run, points, ["grpo"])


def test_kill_retrieval(db: Path, tmp_path: Path) -> None:
    run = tmp_path / "ret"
    args = ["retrieval", "train", "--model", "tiny", "--database", str(db)]
    args += ["--output-dir", str(run), "--max-steps", "4", "--val-check-interval", "2"]
    args += ["--tiny-d-model", "32", "--context-max-len", "96", "--premise-max-len", "96"]
    args += ["--batch-size", "4", "--accelerator", "cpu", "--devices", "1"]
    points = [
        at_checkpoint(run, "retrieval", 0, "last.ckpt"),  # training, after a validation
        at_event(run, "step", trainer="retrieval", repo_index=0),  # evaluation
        at_export(run, 1),  # export
    ]
    points = _tier(points, (0, 2))
    _kill_chain("leantrain retrieval train", args, tmp_path, run, points, ["retrieval"])
    steps = RunManifest.load(run).trained_steps("retrieval")
    assert steps[0].metrics["resumed"] is True  # continued from last.ckpt
    assert [s.metrics["global_step"] for s in steps] == [4, 4]


def test_kill_progress(tmp_path: Path) -> None:
    # the progress CLI trains on one export (lifelong runs go through the pipeline, below)
    run = tmp_path / "prog"
    args = ["progress", "train", "--model", "tiny", "--data", str(_repos()[0])]
    args += ["--output-dir", str(run), "--max_steps", "6", "--save_steps", "2"]
    args += ["--logging_steps", "1", "--max-length", "64"]
    args += ["--tiny-hidden-size", "32", "--tiny-vocab-size", "120"]
    points = [
        at_checkpoint(run, "progress", 0, "checkpoint-*"),  # saving
        at_checkpoint(run, "progress", 0, "checkpoint-4", "trainer_state.json"),  # training
        at_event(run, "step", trainer="progress"),  # evaluation
    ]
    points = _tier(points, (1, 2))
    landed = 0
    marks = []
    for point in points:
        killed, code, err = _run(args, tmp_path, point)
        assert killed, f"finished before the kill point: {code}\n{err[-2000:]}"
        landed += 1
        _check_after_kill(run)
        marks += _resume_marks(run, "progress")
    _, code, err = _run(args, tmp_path)
    assert code == 0, err[-3000:]
    manifest = RunManifest.load(run)
    assert manifest.status == "completed"
    assert _events(run, "step") == 1
    for checkpoint in manifest.checkpoints:
        _load("progress", manifest.verify_checkpoint(checkpoint))
    _check_no_restart(marks)
    _tally("leantrain progress train", landed, landed)


def test_kill_pipeline(tmp_path: Path) -> None:
    run = tmp_path / "run"
    cfg = tiny_pipeline_config(run)  # sft, retrieval, progress on two sample repositories
    cfg_path = tmp_path / "cfg.json"
    cfg_path.write_text(json.dumps(cfg))
    trainers = cfg["trainers"]
    points = [
        at_checkpoint(run, "retrieval", 0, "last.ckpt"),  # training the second trainer
        at_event(run, "step", trainer="progress", repo_index=0),  # evaluation
        at_export(run, 1),  # export
        at_checkpoint(run, "sft", 1, "checkpoint-*"),  # saving
    ]
    points = _tier(points, (0, 2))
    args = ["pipeline", "--config", str(cfg_path)]
    _kill_chain("leantrain pipeline", args, tmp_path, run, points, trainers)
