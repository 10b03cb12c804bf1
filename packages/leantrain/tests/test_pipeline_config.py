"""The pipeline config: a plain run name, and code only with the user's opt-in."""

from __future__ import annotations

import pytest
from leantrain.core.cli import main
from leantrain.core.errors import ConfigError
from leantrain.pipeline.pipeline_config import PipelineConfig

OS_SYSTEM = """\
trainers: [sft, grpo]
grpo:
  reward_funcs: [{name: "os:system", command: "id > out"}]
"""


@pytest.fixture(autouse=True)
def _no_env_opt_in(monkeypatch, tmp_path):
    monkeypatch.delenv("LEANTRAIN_ALLOW_CODE", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("name", ["../../x", "a/b", "/abs", "..", ".", "", "a\\b", "x\n"])
def test_name_must_be_a_plain_name(name):
    with pytest.raises(ConfigError, match="'name' must be a plain name"):
        PipelineConfig(name=name, trainers=["progress"])


def test_plain_names_and_a_free_run_dir(tmp_path):
    cfg = PipelineConfig(name="my-run_1.0", trainers=["progress"])
    assert cfg.resolved_run_dir.name == "my-run_1.0"
    cfg = PipelineConfig(run_dir=str(tmp_path / "elsewhere" / "r"), trainers=["progress"])
    assert cfg.resolved_run_dir == tmp_path / "elsewhere" / "r"


def test_os_system_reward_is_refused_and_nothing_runs(tmp_path, capsys):
    (tmp_path / "p.yaml").write_text(OS_SYSTEM)
    assert main(["pipeline", "--config", "p.yaml"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "allow_code: true / --allow-code / LEANTRAIN_ALLOW_CODE=1" in err[0]
    assert not (tmp_path / "out").exists() and not (tmp_path / "leantrain-runs").exists()


def test_allow_code_is_passed_down_to_the_sections(tmp_path, monkeypatch):
    (tmp_path / "my_rewards.py").write_text(
        "def half(completions, **kwargs):\n    return [0.5] * len(completions)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sections = {"grpo": {"reward_funcs": ["my_rewards:half"]}}
    with pytest.raises(ConfigError, match="not a registered reward function"):
        PipelineConfig(trainers=["sft", "grpo"], **sections)
    cfg = PipelineConfig(trainers=["sft", "grpo", "retrieval"], allow_code=True, **sections)
    assert cfg.grpo.allow_code and cfg.sft.allow_code and cfg.retrieval.allow_code
    from leantrain.llm.rewards import build_reward_funcs

    funcs, _ = build_reward_funcs(cfg.grpo.reward_funcs, allow_code=cfg.grpo.allow_code)
    assert funcs[0](None, ["a"]) == [0.5]


@pytest.mark.parametrize("text", ["", "null\n", "# nothing\n"])
def test_an_empty_pipeline_config_is_an_error(tmp_path, capsys, text):
    (tmp_path / "p.yaml").write_text(text)
    assert main(["pipeline", "--config", "p.yaml"]) == 2
    assert "p.yaml: the config file is empty" in capsys.readouterr().err
    assert not (tmp_path / "leantrain-runs").exists()


def test_alias_bomb_under_repos_fails_fast(tmp_path, capsys):
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 8)]
    lines.append(f"repos: [{', '.join(['*a7'] * 9)}]")
    (tmp_path / "p.yaml").write_text("\n".join(lines) + "\n")
    assert main(["pipeline", "--config", "p.yaml"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "alias bomb" in err[0]


def test_a_missing_source_is_one_line_and_no_run_directory(tmp_path, capsys):
    (tmp_path / "p.yaml").write_text("sources: [does/not/exist]\ntrainers: [progress]\n")
    assert main(["pipeline", "--config", "p.yaml"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: source 'does/not/exist' in 'sources' does not exist — give 'sample', an export "
        "directory, a dynamic_database.json or URL@COMMIT to trace"
    ]
    assert not (tmp_path / "leantrain-runs").exists()


def test_a_huge_seed_is_one_line(tmp_path, capsys):
    (tmp_path / "p.yaml").write_text(f"seed: {10**400}\ntrainers: [progress]\n")
    assert main(["pipeline", "--config", "p.yaml"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "p.yaml: key 'seed' must be zero or more and at most" in err[0]


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("source: [sample]\n", "unknown key 'source'"),
        ("sources: [does/not/exist]\ntrainers: [progress]\n", "does not exist"),
    ],
)
def test_config_errors_come_before_any_engine_is_imported(tmp_path, yaml_text, message):
    """A typo fails in about a second: no torch / Lightning / transformers import first."""
    import subprocess
    import sys

    (tmp_path / "p.yaml").write_text(yaml_text)
    probe = (
        "import sys\n"
        "from leantrain.core.cli import main\n"
        "code = main(['pipeline', '--config', 'p.yaml'])\n"
        "heavy = sorted(m for m in ('torch', 'lightning', 'transformers') if m in sys.modules)\n"
        "print(code, heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "2 []"
    assert message in out.stderr


def test_a_missing_source_of_an_imported_run_is_not_re_read(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "imports.json").write_text("{}")
    cfg = PipelineConfig(sources=["gone/export"], trainers=["progress"], run_dir=str(run))
    assert cfg.sources == ["gone/export"]
    with pytest.raises(ConfigError, match="does not exist"):
        PipelineConfig(sources=["gone/export"], trainers=["progress"], run_dir=str(tmp_path / "b"))


def test_yaml_1_2_floats_in_a_trainer_section(tmp_path):
    """Issue 24: `learning_rate: 1e-5` in a section is a float, as on the command line."""
    from leantrain.core.config import config_from_dict, load_yaml
    from leantrain.pipeline.pipeline_config import PipelineConfig

    path = tmp_path / "p.yaml"
    path.write_text(
        f"name: t\nrun_dir: {tmp_path / 'run'}\nsources: [sample]\ntrainers: [progress]\n"
        "progress:\n  learning_rate: 1e-5\n  max_steps: 2\n"
    )
    cfg = config_from_dict(PipelineConfig, load_yaml(path), source=str(path))
    assert cfg.progress.learning_rate == 1e-5 and cfg.progress.max_steps == 2
