"""The ``leantrain`` console script: discovery, --version, errors as one line with an exit code."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from leantrain.core import Command, ConfigError, DataError, cli
from leantrain.core.config import setting
from leantrain.core.groups import Group


@dataclass
class XArgs(Group):
    """The fake commands' one setting."""

    x: int | None = setting(None, "A number.")


def _fake(monkeypatch, calls):
    def ok(args):
        calls.append(args.x)
        return 0

    def data_error(args):
        raise DataError("x/train.json", "bad", index=3, field="tactic", hint="fix it")

    def config_error(args):
        raise ConfigError("unknown key 'lr'", hint="did you mean 'learning_rate'?")

    commands = {
        c.name: c
        for c in [
            Command("fake", "a fake command", ok, groups=(XArgs,)),
            Command("broken", "raises", data_error, groups=(XArgs,)),
            Command("badcfg", "raises", config_error, groups=(XArgs,)),
        ]
    }
    monkeypatch.setattr(cli, "discover_commands", lambda: commands)


def test_version_lists_packages(capsys):
    assert cli.main(["--version"]) == 0
    out = capsys.readouterr().out
    assert any(line.startswith("leantrain-core ") for line in out.splitlines())


def test_help_lists_commands(monkeypatch, capsys):
    _fake(monkeypatch, [])
    assert cli.main([]) == 0 and cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "fake" in out and "a fake command" in out


def test_runs_command_with_rest_of_argv(monkeypatch):
    calls = []
    _fake(monkeypatch, calls)
    assert cli.main(["fake", "--x", "1"]) == 0
    assert calls == [1]


def test_unknown_command_exit_2_with_suggestion(monkeypatch, capsys):
    _fake(monkeypatch, [])
    assert cli.main(["fak"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'fak'" in err and "did you mean 'fake'" in err


def test_known_command_of_a_missing_package_names_the_package(monkeypatch, capsys):
    _fake(monkeypatch, [])  # only 'fake' is installed
    assert cli.main(["retrieval", "train"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "'retrieval' command comes with leantrain-retrieval" in err and "pip install" in err
    assert cli.main(["verl", "train"]) == 2
    assert "uv run --package leantrain-verl" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "code", "text"),
    [
        ("broken", 1, "x/train.json, record 3, field 'tactic': bad — fix it"),
        ("badcfg", 2, "did you mean 'learning_rate'"),
    ],
)
def test_leantrain_error_becomes_one_line(monkeypatch, capsys, name, code, text):
    monkeypatch.delenv("LEANTRAIN_TRACEBACK", raising=False)
    _fake(monkeypatch, [])
    assert cli.main([name]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and text in err
    assert "Traceback" not in err


def test_real_discovery_returns_commands():
    commands = cli.discover_commands()
    assert all(isinstance(c, Command) and c.name == n for n, c in commands.items())
