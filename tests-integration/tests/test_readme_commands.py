"""The READMEs' commands run from a fresh clone: every ```bash block of README.md and of each
package's README runs, in order, in a fresh directory (one per README) through the
``leantrain`` CLI, with only what the repository ships (the sample data).

What is not run, by rule: installers (``pip install``, ``uv add``, ``uv sync``: offline here)
and the test suites (``uv run pytest``). What is not run, by a visible mark in the README: a
block whose first line is ``# needs: WHAT``, or a line whose comment says ``needs: WHAT`` (a
Lean toolchain, a GPU, a real model, minutes). A command followed by a ``#   -> error: …``
line must fail with that message. A ```yaml block whose first line is
``# FILE.yaml — uv run leantrain …`` (or just ``# FILE.yaml``) is written to FILE.yaml first,
and its command, if any, run.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READMES = [ROOT / "README.md", *sorted((ROOT / "packages").glob("*/README.md"))]
BLOCK = re.compile(r"```(bash|yaml)\n(.*?)```", re.S)
INSTALLERS = (("pip", "install"), ("uv", "add"), ("uv", "sync"), ("uv", "run", "pytest"))
NEEDS = re.compile(r"#.*\bneeds: ")


@dataclass
class Command:
    """One command line of a README: what to run, and the error it must end with, if any."""

    where: str
    argv: list[str]
    env: dict[str, str]
    error: str | None = None
    file: tuple[str, str] | None = None  # a YAML block to write first: (name, text)


def _lines(code: str) -> list[str]:
    return code.replace("\\\n", " ").splitlines()


def commands(readme: Path) -> tuple[list[Command], list[str]]:
    """The commands of ``readme`` to run, in order, and the lines skipped by a mark."""
    text = readme.read_text(encoding="utf-8")
    runs: list[Command] = []
    skipped: list[str] = []
    for block in BLOCK.finditer(text):
        language, code = block.group(1), block.group(2)
        where = f"{readme.relative_to(ROOT)}:{text[: block.start()].count(chr(10)) + 1}"
        lines = _lines(code)
        if lines and lines[0].startswith("# needs: "):
            skipped.append(f"{where} {lines[0]}")
            continue
        if language == "yaml":
            head = re.match(r"# (\S+\.yaml)(?:\s+—\s+((?:uv run )?leantrain .*))?", lines[0])
            if head:
                argv = shlex.split(head.group(2) or "", comments=True)
                runs.append(Command(where, argv, {}, file=(head.group(1), code)))
            continue
        for number, line in enumerate(lines):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if NEEDS.search(line):
                skipped.append(f"{where} {line.strip()}")
                continue
            follow = lines[number + 1].strip() if number + 1 < len(lines) else ""
            error = follow.removeprefix("#").strip().removeprefix("-> error:").strip()
            error = error if follow.startswith("#") and "-> error:" in follow else None
            for piece in _split_and(line):
                runs.append(_command(where, piece, error))
    return runs, skipped


def _split_and(line: str) -> list[list[str]]:
    words = shlex.split(line, comments=True)
    out: list[list[str]] = [[]]
    for word in words:
        if word == "&&":
            out.append([])
        else:
            out[-1].append(word)
    return [w for w in out if w]


def _command(where: str, words: list[str], error: str | None) -> Command:
    env = {}
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    return Command(where, words, env, error)


def _runnable(command: Command) -> list[str] | None:
    """The ``leantrain`` arguments of a command, ``None`` for an installer / test suite."""
    argv = command.argv
    if not argv and command.file:
        return []
    if any(tuple(argv[: len(i)]) == i for i in INSTALLERS):
        return None
    if argv[:3] == ["uv", "run", "leantrain"]:
        return argv[3:]
    if argv[:1] == ["leantrain"]:
        return argv[1:]
    raise AssertionError(
        f"{command.where}: '{' '.join(argv)}' is not a leantrain command: make it one, or mark "
        "it '# needs: …' (a Lean toolchain, a GPU, a real model) so the README test skips it"
    )


def test_every_readme_line_is_a_leantrain_command_an_installer_or_marked():
    for readme in READMES:
        runs, _ = commands(readme)
        for command in runs:
            _runnable(command)  # raises for anything else


def test_no_example_refers_to_a_path_outside_the_repository():
    examples = [ROOT / "PORTING.md", *READMES]
    for path in examples:
        text = path.read_text(encoding="utf-8")
        for block in re.finditer(r"```\w*\n(.*?)```", text, re.S):
            assert "shared/data" not in block.group(1), f"{path.name}: {block.group(1)[:200]}"


def test_the_marked_skips_are_few():
    skipped = [line for readme in READMES for line in commands(readme)[1]]
    assert len(skipped) <= 20, "\n".join(skipped)


@pytest.mark.slow
@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_readme_commands_run_in_a_fresh_directory(readme, tmp_path, monkeypatch, capsys):
    import torch
    from leantrain.core.cli import main

    torch.set_num_threads(1)  # 2 CPU cores shared by several test runs
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LEANTRAIN_DATA", raising=False)
    ran = 0
    for command in commands(readme)[0]:
        if command.file:
            Path(command.file[0]).write_text(command.file[1], encoding="utf-8")
        args = _runnable(command)
        if not args:
            continue
        with monkeypatch.context() as env:
            for key, value in command.env.items():
                env.setenv(key, value)
            capsys.readouterr()
            try:
                code = main(args)
            except SystemExit as e:  # argparse's own exits
                code = e.code if isinstance(e.code, int) else 1
        err = capsys.readouterr().err
        shown = f"{command.where}: leantrain {' '.join(args)}"
        if command.error is None:
            assert code == 0, f"{shown}\n{err[-2000:]}"
        else:
            assert code != 0, f"{shown}: should fail with {command.error}"
            head = command.error.split("…")[0].strip()[:60]
            assert head in err, f"{shown}: expected '{head}' in\n{err[-2000:]}"
        ran += 1
    if not ran:
        pytest.skip(f"{readme.relative_to(ROOT)} has no leantrain command to run")
