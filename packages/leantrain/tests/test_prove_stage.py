"""The pipeline's ``prove`` stage: the forgetting matrix of replay proof rates, cell by cell.

The pipeline tests run the real pipeline (import, curriculum, exports, engine, report) on the
sample data with a hand-made "SFT" trainer whose model is a table of memorised proofs: after
repository ``i`` it knows exactly the test proofs of repository ``i``, so the matrix is known
in advance (1 on the diagonal, 0 below); they train no model, yet are in the slow tier for
the imports of a whole pipeline. ``test_prove_stage_models`` trains real tiny models.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from leantrain.core.cli import main
from leantrain.core.errors import ConfigError
from leantrain.core.manifest import RunManifest
from leantrain.core.schemas import read_json
from leantrain.pipeline import Pipeline
from leantrain.pipeline import pipeline as pipeline_module
from leantrain.pipeline.prove_stage import ProveStage
from leantrain.pipeline.report import proof_matrix

PROVE = {"num_sampled_tactics": 3, "max_expansions": 4}


class Memoriser:
    """A "generator trainer" whose model is the traced test proofs of the step's repository
    alone (it forgets the earlier ones): ``{state_before: [tactic, …]}``."""

    name = "sft"
    score_key = "memorised"
    higher_is_better = True

    def __init__(self) -> None:
        self.table: dict[str, list[str]] = {}

    def train_step(self, step):
        url, _, commit = step.repo.rpartition("@")
        self.table = {}
        for t in read_json(Path(step.data) / "random" / "test.json"):
            if (t["url"], t["commit"]) == (url, commit):
                for tt in t["traced_tactics"]:
                    self.table.setdefault(tt["state_before"], []).append(tt["tactic"])
        return {"memorised": float(len(self.table))}

    def evaluate(self, data, split="test"):
        return {"memorised": float(len(self.table))}

    def save(self, path):
        (Path(path) / "table.json").write_text(json.dumps(self.table))

    def load(self, path):
        self.table = json.loads((Path(path) / "table.json").read_text())


class TableGenerator:
    """Proposes the memorised tactics of a state and a wrong one; counts its calls and
    raises ``Killed`` at call ``kill_at`` (across all generators: a kill of the process)."""

    calls = 0
    kill_at: int | None = None

    def __init__(self, checkpoint: Path) -> None:
        self.table = json.loads((checkpoint / "table.json").read_text())

    def propose(self, states, k):
        TableGenerator.calls += 1
        if TableGenerator.calls == TableGenerator.kill_at:
            raise Killed
        return [
            [*((t, -0.5) for t in self.table.get(s, [])), ("nonsense", -0.1)][:k] for s in states
        ]


class Killed(BaseException):
    """A kill of the process: a BaseException, as core's ``Terminated`` (the prover turns an
    ``Exception`` of one theorem into that theorem's ``error`` row and goes on)."""


@pytest.fixture
def fake_trainers(monkeypatch):
    """The pipeline with the memorising "SFT" and a ProveStage that loads its tables."""
    real = pipeline_module.build_trainer
    TableGenerator.calls, TableGenerator.kill_at = 0, None

    def build(name, config, pipeline=None):
        if name == "sft":
            return Memoriser()
        stage = real(name, config, pipeline)
        if isinstance(stage, ProveStage):
            stage.load_generator = TableGenerator
        return stage

    monkeypatch.setattr(pipeline_module, "build_trainer", build)


def _config(run_dir: Path, **prove) -> dict:
    return {
        "run_dir": str(run_dir),
        "sources": ["sample"],
        "trainers": ["sft", "prove"],
        "prove": {**PROVE, **prove},
    }


def _own_tests(run_dir: Path) -> list[int]:
    """How many test theorems with a traced proof each repository has (its eval dir)."""
    return [
        sum(1 for t in read_json(d / "random" / "test.json") if t["traced_tactics"])
        for d in sorted((run_dir / "data" / "eval").iterdir())
    ]


@pytest.mark.slow  # the pipeline's imports alone take ~20 s on 2 loaded cores
def test_the_matrix_has_a_cell_per_repository_so_far_with_the_memorised_proofs(
    tmp_path, fake_trainers
):
    run_dir = tmp_path / "run"
    result = Pipeline(_config(run_dir)).run()
    n = len(result["repos"])
    assert n == 3
    own = _own_tests(run_dir)
    assert all(own)
    repos, cells = proof_matrix(run_dir)
    assert repos == result["repos"]
    assert [len(row) for row in cells] == [1, 2, 3]  # rows: after repo i; columns: j <= i
    for i in range(n):
        for j in range(i + 1):
            cell = cells[i][j]
            assert cell["attempted"] == own[j]
            # after repository i the generator knows repository i's proofs, and no others
            assert cell["proved"] == (own[j] if i == j else 0), (i, j)
            assert cell["replay_proof_rate"] == (1.0 if i == j else 0.0)
    # the step's own metrics: the merged test split of the repositories so far
    last = result["results"][result["repos"][-1]]["prove"]["metrics"]
    assert (last["test_proved"], last["test_attempted"]) == (own[-1], sum(own))
    # each step proved with its own generator, recorded in its "checkpoint"
    manifest = RunManifest.load(run_dir)
    for i in range(n):
        models = json.loads(
            (
                manifest.checkpoint_path(manifest.step("prove", i).checkpoint) / "prove_models.json"
            ).read_text()
        )
        assert models["generator"] == manifest.step("sft", i).checkpoint.path
        assert models["progress"] is None
    # a theorem is searched once per step: the merged split and the cells share the results
    for i, d in enumerate(sorted((run_dir / "prove" / "proofs").iterdir())):
        rows = [json.loads(x) for x in (d / "results.jsonl").read_text().splitlines()]
        assert len(rows) == len({r["id"] for r in rows}) == sum(own[: i + 1])
    # the report: the matrix table, labelled as the lower bound it is, and the last rate
    report = Path(result["report"]).read_text()
    assert "## Replay proof rate after each repository" in report
    assert "lower bound" in report
    assert f"| after {_short(repos[-1])} | 0/{own[0]} (0.0 %) |" in report
    assert any(
        r["trainer"] == "prove" and f"replay proof rate {own[-1]}/{sum(own)}" in r["metrics"]
        for r in result["summary"]
    )
    assert "prove" in manifest.metrics["forgetting"]


def _short(repo: str) -> str:
    return repo.split("@")[0].rstrip("/").rsplit("/", 1)[-1]


@pytest.mark.slow  # the pipeline's imports alone take ~20 s on 2 loaded cores
def test_a_rerun_reuses_every_finished_cell_and_a_killed_cell_resumes_per_theorem(
    tmp_path, fake_trainers
):
    run_dir = tmp_path / "run"
    TableGenerator.kill_at = 9  # inside step 1 (step 0 needs fewer calls)
    with pytest.raises(Killed):
        Pipeline(_config(run_dir)).run()
    manifest = RunManifest.load(run_dir)
    assert manifest.step("prove", 0).status == "done"
    assert manifest.step("prove", 1) is None or manifest.step("prove", 1).status != "done"
    step1 = next(d for d in (run_dir / "prove" / "proofs").iterdir() if d.name.startswith("001"))
    done_before = len((step1 / "results.jsonl").read_text().splitlines())
    assert done_before >= 1
    searched: list[int] = []
    TableGenerator.kill_at = None
    original = ProveStage.evaluate

    def counting(self, data, split="test"):
        searched.append(self.models["index"])
        return original(self, data, split)

    import leantrain.pipeline.prove_stage as stage_module

    stage_module.ProveStage.evaluate = counting  # type: ignore[method-assign]
    try:
        TableGenerator.calls = 0
        result = Pipeline(_config(run_dir)).run()
    finally:
        stage_module.ProveStage.evaluate = original  # type: ignore[method-assign]
    # step 0's cells were not proved again; step 1's theorems done before the kill were skipped
    assert searched and min(searched) == 1
    rows = [json.loads(x) for x in (step1 / "results.jsonl").read_text().splitlines()]
    assert len(rows) == len({r["id"] for r in rows})
    _, cells = proof_matrix(run_dir)
    own = _own_tests(run_dir)
    assert [[c["proved"] for c in row] for row in cells] == [
        [own[0]],
        [0, own[1]],
        [0, 0, own[2]],
    ]
    # a third run does nothing: no generator call at all
    TableGenerator.calls = 0
    again = Pipeline(_config(run_dir)).run()
    assert TableGenerator.calls == 0
    assert again["summary"] == result["summary"]


@pytest.mark.slow  # the pipeline's imports alone take ~20 s on 2 loaded cores
def test_a_changed_prove_section_is_refused_on_resume(tmp_path, fake_trainers):
    run_dir = tmp_path / "run"
    cfg = _config(run_dir)
    cfg["repos"] = ["nat-basics"]
    Pipeline(cfg).run()
    cfg["prove"] = {**PROVE, "max_expansions": 5}
    with pytest.raises(ConfigError, match=r"changed: prove\.max_expansions"):
        Pipeline(cfg).run()


@pytest.mark.parametrize(
    ("yaml", "message"),
    [
        ("trainers: [retrieval, prove]", "'prove' in 'trainers' needs a tactic generator"),
        ("trainers: [prove, sft]", "'prove' uses the models of 'sft', which comes after it"),
        (
            "trainers: [sft, prove, progress]",
            "'prove' uses the models of 'progress', which comes after it",
        ),
        (
            "trainers: [sft, prove]\nevaluate_each_repo: false",
            "evaluate_each_repo: false turns off",
        ),
        ("trainers: [sft, prove]\nprove: {generator: x}", "'prove.generator' is set by"),
        ("trainers: [sft, prove]\nprove: {split: val}", "'prove.split' is set by"),
        ("trainers: [sft, prove]\nprove: {max_expansion: 3}", "max_expansion"),
        ("trainers: [sft, prove]\nprove: {max_expansions: 0}", "max_expansions"),
        ("trainers: [sft, prove]\nprove: {backend: lean}", "backend"),
        ("trainers: [sft]\nprove: {max_expansions: 3}", "'prove' is not in 'trainers'"),
        (
            "trainers: [sft, prove]\nprove: {mode: whole}",
            "'prove' has mode whole and proves with the models of 'sft', trained in mode tactic",
        ),
    ],
)
def test_bad_prove_configs_are_one_line_and_nothing_runs(
    tmp_path, monkeypatch, capsys, yaml, message
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.yaml").write_text(yaml + "\n")
    assert main(["pipeline", "--config", "p.yaml"]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err
    assert not (tmp_path / "leantrain-runs").exists()


def test_the_pipeline_sets_the_prove_stage_models_and_output(tmp_path):
    from leantrain.pipeline import PipelineConfig

    cfg = PipelineConfig(
        run_dir=str(tmp_path / "r"),
        trainers=["sft", "grpo", "progress", "prove"],
        prove={"max_expansions": 3},
    )
    assert cfg.prove_generator == "grpo"
    assert cfg.prove.output_dir == str(tmp_path / "r" / "prove")
    assert cfg.prove.progress_bar is False and cfg.prove.max_expansions == 3
    stage = pipeline_module.build_trainer("prove", cfg.prove, cfg)
    assert (stage.generator_from, stage.progress_from) == ("grpo", "progress")
    assert stage.score_key == "replay_proof_rate"


@pytest.mark.slow
def test_real_tiny_models_prove_what_the_generator_memorised(tmp_path):
    """SFT trained on the test proofs of the repositories so far (a memoriser), a real
    progress model: every cell is fully proved, through the real checkpoints."""
    import torch

    torch.set_num_threads(1)  # 2 CPU cores shared by several test runs
    run_dir = tmp_path / "run"
    cfg = {
        "run_dir": str(run_dir),
        "sources": ["sample"],
        "repos": ["nat-basics", "list-basics"],
        "trainers": ["sft", "progress", "prove"],
        "sft": {
            "model_name": "tiny",
            "train_split": "test",
            "allow_contamination": True,  # trains on the theorems it proves, on purpose
            "max_steps": 300,
            "per_device_train_batch_size": 8,
            "learning_rate": 3e-3,
            "logging_steps": 50,
            "save_steps": 1000,
            "max_eval_samples": 2,
            "eval_k": 1,
        },
        "progress": {"model_name": "tiny", "epochs": 1},
        "prove": {"num_sampled_tactics": 4, "max_expansions": 8, "max_new_tokens": 160},
    }
    result = Pipeline(cfg).run()
    _, cells = proof_matrix(run_dir)
    assert [len(row) for row in cells] == [1, 2]
    # a tiny model does not reproduce every multi-line induction block verbatim in 300 steps
    # (3/4, 3/4, 6/7 when written); an untrained one proves none (leantrain-prover's tests)
    for row in cells:
        for cell in row:
            assert cell["attempted"] >= 1
            assert cell["proved"] >= cell["attempted"] / 2, cells
    manifest = RunManifest.load(run_dir)
    for i in range(2):
        step_dir = next((run_dir / "prove" / "proofs").glob(f"{i:03d}-*"))
        used = json.loads((step_dir / "prover_config.json").read_text())
        assert used["generator"] == str(
            manifest.checkpoint_path(manifest.step("sft", i).checkpoint)
        )
        assert used["progress"] == str(
            manifest.checkpoint_path(manifest.step("progress", i).checkpoint)
        )
        found = json.loads((step_dir / "proofs.json").read_text())  # in the traced format
        traced = {
            t["full_name"]: [x["tactic"] for x in t["traced_tactics"]]
            for t in read_json(
                run_dir / "data" / f"{i:03d}_{step_dir.name[4:]}" / "random" / "test.json"
            )
        }
        assert found and all(
            [x["tactic"] for x in p["traced_tactics"]] == traced[p["full_name"]] for p in found
        )
    assert "replay proof rate" in Path(result["report"]).read_text()


class WholeMemoriser(Memoriser):
    """The memorising "SFT" of whole proofs: ``{statement: proof}`` of the step's repository."""

    def train_step(self, step):
        from leantrain.core.schemas import Theorem
        from leantrain.tactics.whole_proof import prompt_statement, whole_proof_example

        url, _, commit = step.repo.rpartition("@")
        self.table = {}
        for record in read_json(Path(step.data) / "random" / "test.json"):
            t = Theorem.model_validate(record)
            example = whole_proof_example(t)
            if (t.url, t.commit) == (url, commit) and example is not None:
                self.table[prompt_statement(example.statement)] = example.proof
        return {"memorised": float(len(self.table))}


class TableSampler:
    """Replies with the memorised proof of the prompt's statement, and once with a wrong one."""

    def __init__(self, checkpoint: Path) -> None:
        self.table = json.loads((checkpoint / "table.json").read_text())

    def sample(self, prompts, k):
        from leantrain.prover.whole import Sample

        out = []
        for messages in prompts:
            proof = self.table.get(messages[-1]["content"], "by skip")
            out.append([Sample(proof, 5, True), *[Sample("by skip", 2, True)] * (k - 1)])
        return out


@pytest.mark.slow  # the pipeline's imports alone take ~20 s on 2 loaded cores
def test_whole_mode_gives_the_matrix_of_pass_at_k(tmp_path, monkeypatch):
    real = pipeline_module.build_trainer

    def build(name, config, pipeline=None):
        if name == "sft":
            return WholeMemoriser()
        stage = real(name, config, pipeline)
        stage.load_generator = TableSampler
        return stage

    monkeypatch.setattr(pipeline_module, "build_trainer", build)
    run_dir = tmp_path / "run"
    config = _config(run_dir)
    config["prove"] = {"mode": "whole", "attempts": 2}
    config["sft"] = {"mode": "whole"}  # the generator's mode (a whole-proof model)
    result = Pipeline(config).run()
    _, cells = proof_matrix(run_dir)
    n = len(result["repos"])
    for i in range(n):
        for j in range(i + 1):
            cell = cells[i][j]
            # after repository i the sampler knows repository i's whole proofs only
            assert cell["replay_whole_proof_rate"] == (1.0 if i == j else 0.0), (i, j)
            assert cell["replay_pass@1"] == (0.5 if i == j else 0.0)
            assert cell["replay_pass@2"] == cell["replay_whole_proof_rate"]
    report = Path(result["report"]).read_text()
    assert "## Replay whole proof rate after each repository" in report
    assert "prove" in RunManifest.load(run_dir).metrics["forgetting"]
