"""Config groups: typed constraints, declared aliases, the generated parser and the registry."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Literal

import pytest
from annotated_types import Ge
from leantrain.core.command import Command, dispatch
from leantrain.core.config import (
    AtLeast1,
    StepLimit,
    config_from_dict,
    config_from_yaml,
    setting,
    validate_fields,
)
from leantrain.core.errors import ConfigError
from leantrain.core.groups import DataArgs, LifelongData, RunArgs, RunSwitches
from leantrain.core.parser import given, parse


@dataclass
class Sampling:
    """How tactics are sampled."""

    k: AtLeast1 = setting(4, "Candidates per state.", aliases=("num_candidates",))
    mode: Literal["greedy", "sample"] = setting("sample", "Decoding.")
    steps: StepLimit = setting(-1, "Steps (-1: no limit).")
    seed_offset: Annotated[int, Ge(0)] | None = setting(None, "Offset of the seed.")

    def __post_init__(self) -> None:
        validate_fields(self)


@dataclass
class Target:
    """What to prove."""

    theorem: str = setting(help="Theorem name.")
    files: list[str] = setting([], "Files to read.")


def _same_everywhere(cls: type, key: str, text: str, value: object, tmp_path) -> list[object]:
    """The value of ``key`` from a dict, YAML, a flag (both spellings) and a keyword."""
    path = tmp_path / "c.yaml"
    path.write_text(f"{key}: {text}\n")
    flag = "--" + key.replace("_", "-")
    got = [
        getattr(config_from_dict(cls, {key: value}), key),
        getattr(config_from_yaml(cls, path), key),
        getattr(parse(cls, [f"--{key}", text]), key),
        getattr(parse(cls, [f"{flag}={text}"]), key),
        getattr(parse(cls, ["--config", str(path)]), key),
    ]
    typed = got[0]
    got.append(getattr(cls(**{key: typed}), key))
    return got


VALID = [
    (RunSwitches, "overwrite", "true", True, True),
    (RunSwitches, "allow_code", "false", False, False),
    (RunArgs, "output_dir", "runs/x", "runs/x", "runs/x"),
    (RunArgs, "output_dir", "'1e3'", "1e3", "1e3"),
    (RunArgs, "seed", "7", 7, 7),
    (DataArgs, "data_path", "'*.json'", "*.json", "*.json"),
    (DataArgs, "data_path", "null", None, None),
    (LifelongData, "database", "db.sqlite", "db.sqlite", "db.sqlite"),
    (LifelongData, "repos", "[a, b]", ["a", "b"], ["a", "b"]),
    (LifelongData, "export_dir", "out", "out", "out"),
    (LifelongData, "evaluate_each_repo", "false", False, False),
    (Sampling, "k", "1", 1, 1),
    (Sampling, "mode", "greedy", "greedy", "greedy"),
    (Sampling, "steps", "-1", -1, -1),
    (Sampling, "steps", "20", 20, 20),
    (Sampling, "seed_offset", "0", 0, 0),
]


@pytest.mark.parametrize(("cls", "key", "text", "value", "expected"), VALID)
def test_every_source_gives_a_group_the_same_value(cls, key, text, value, expected, tmp_path):
    got = _same_everywhere(cls, key, text, value, tmp_path)
    assert all(g == expected and type(g) is type(expected) for g in got), got


@pytest.mark.parametrize(
    ("argv", "data", "message"),
    [
        (["--k", "0"], {"k": 0}, "must be at least 1, got 0"),
        (["--steps", "0"], {"steps": 0}, "must be -1 (no limit) or at least 1, got 0"),
        (["--seed-offset", "-3"], {"seed_offset": -3}, "must be zero or more, got -3"),
        (["--mode", "beam"], {"mode": "beam"}, "key 'mode' has the wrong type: got str 'beam'"),
        (["--k", str(10**30)], {"k": 10**30}, "at most 9,223,372,036,854,775,807"),
    ],
)
def test_constraint_errors_are_one_line_from_every_source(argv, data, message):
    errors = []
    for build in (
        lambda: parse(Sampling, argv),
        lambda: config_from_dict(Sampling, data, source="S"),
        lambda: Sampling(**data),
    ):
        with pytest.raises(ConfigError) as e:
            build()
        errors.append(str(e.value))
    assert all(message in m and "\n" not in m for m in errors), errors
    assert errors[0].startswith(("--", "command line:")) and errors[1].startswith("S:")
    if "wrong type" not in message:
        assert errors[2].startswith(f"--{next(iter(data))} must be")


def test_non_finite_numbers_are_out_of_every_range():
    @dataclass
    class Rate:
        lr: Annotated[float, Ge(0)] = setting(0.1, "Rate.")

    for text in ("nan", ".inf", "inf"):
        with pytest.raises(ConfigError, match="--lr must be zero or more"):
            parse(Rate, ["--lr", text])


def test_declared_aliases_work_everywhere_and_never_with_their_field(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("num_candidates: 3\n")
    assert config_from_dict(Sampling, {"num_candidates": 3}).k == 3
    assert config_from_yaml(Sampling, path).k == 3
    assert config_from_yaml(Sampling, tmp_path / "c.yaml", num_candidates=5).k == 5
    assert parse(Sampling, ["--num-candidates", "2"]).k == 2
    assert parse(LifelongData, ["--data", "d"]).data_path == "d"
    with pytest.raises(ConfigError, match="'--k' and '--num-candidates' are the same setting"):
        parse(Sampling, ["--k", "1", "--num_candidates", "2"])
    with pytest.raises(ConfigError, match="'num_candidates' and 'k' are the same setting"):
        config_from_dict(Sampling, {"k": 1, "num_candidates": 2})


def test_help_marks_required_options_and_has_one_group_per_dataclass(capsys):
    with pytest.raises(SystemExit) as e:
        parse((Target, Sampling, RunArgs), ["--help"], prog="leantrain x")
    assert e.value.code == 0
    out = capsys.readouterr().out
    start = out.index("\n  --theorem")
    assert "(required)" in out[start : out.index("--files", start)]
    assert out.index("What to prove.") < out.index("How tactics are sampled.")
    assert "(choices: greedy, sample)" in out and "--num-candidates" in out
    with pytest.raises(ConfigError, match=r"^leantrain x: missing required --theorem"):
        parse((Target, Sampling), [], prog="leantrain x")


def test_a_tuple_of_groups_gives_one_instance_each_and_yaml_fills_required(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("theorem: foo\nk: 2\nseed: 5\n")
    target, sampling, run = parse((Target, Sampling, RunArgs), ["--config", str(path), "--k", "3"])
    assert (target.theorem, sampling.k, run.seed) == ("foo", 3, 5)
    files = parse(Target, ["--theorem", "t", "--files", "a", "--files", "b"]).files
    assert files == ["a", "b"]
    with pytest.raises(TypeError, match="declared in two"):
        parse((RunArgs, RunSwitches), [])
    path.write_text("theorem: foo\nkk: 2\n")
    with pytest.raises(ConfigError, match=r"unknown key 'kk'.*did you mean 'k'"):
        parse((Target, Sampling), ["--config", str(path)])


def test_a_one_letter_setting_has_a_short_flag():
    assert parse(Sampling, ["-k", "3"]).k == 3
    with pytest.raises(ConfigError, match="--k must be at least 1, got -1"):
        parse(Sampling, ["-k", "-1"])
    with pytest.raises(ConfigError, match="'--k' and '--num-candidates' are the same setting"):
        parse(Sampling, ["-k", "2", "--num-candidates", "3"])


def test_allow_code_alone_or_with_the_run_switches():
    from leantrain.core.groups import AllowCode

    assert parse(AllowCode, ["--allow-code"]).allow_code is True
    with pytest.raises(ConfigError, match="unknown option '--overwrite'"):
        parse(AllowCode, ["--overwrite"])
    switches = parse(RunSwitches, ["--allow-code", "--overwrite"])
    assert switches.allow_code and switches.overwrite and isinstance(switches, AllowCode)


def test_known_only_reads_the_light_groups_and_ignores_the_rest():
    sampling = parse(Sampling, ["--k", "2", "--bf16", "--engine-flag", "1"], known_only=True)
    assert sampling.k == 2
    with pytest.raises(ConfigError, match="--k must be at least 1"):
        parse(Sampling, ["--k", "0", "--bf16"], known_only=True)
    with pytest.raises(ConfigError, match=r"unknown option '--kk'.*did you mean '--k'"):
        parse(Sampling, ["--kk", "2"])


@dataclass
class Pair:
    """Two paths."""

    src: str = setting(help="Source.", positional=True)
    dst: str = setting(help="Destination.", positional=True)


def _copy(pair: Pair) -> dict[str, str]:
    return {"copied": f"{pair.src}->{pair.dst}"}


def test_registry_dispatches_subcommands_positionals_and_prints_json(capsys):
    checked: list[int] = []
    tool = Command(
        "tool",
        "tools",
        subcommands=(
            Command("copy", "copy a thing", _copy, groups=(Pair,)),
            Command(
                "sample",
                "sample",
                lambda s, r: {"k": s.k, "seed": r.seed},
                groups=(Sampling, RunArgs),
                light=(Sampling,),
                check=lambda s: checked.append(s.k),
            ),
        ),
    )
    assert dispatch(tool, ["copy", "a", "b"]) == 0
    assert json.loads(capsys.readouterr().out) == {"copied": "a->b"}
    assert dispatch(tool, ["sample", "--k", "2", "--seed", "3"]) == 0
    assert json.loads(capsys.readouterr().out) == {"k": 2, "seed": 3} and checked == [2]
    assert dispatch(tool, ["--help"]) == 0
    assert "copy" in capsys.readouterr().out
    with pytest.raises(ConfigError, match=r"unknown command 'cpy' of leantrain tool.*'copy'"):
        dispatch(tool, ["cpy"])
    with pytest.raises(ConfigError, match="leantrain tool copy: missing required SRC"):
        dispatch(tool, ["copy"])
    with pytest.raises(ConfigError, match="--k must be at least 1"):  # the light check first
        dispatch(tool, ["sample", "--k", "0"])
    assert checked == [2]


@dataclass
class OwnFile:
    """A command whose ``--config`` is its own file (VERL's YAML) and whose positionals are a
    list (``KEY=VALUE`` overrides)."""

    config: str | None = setting(None, "A file the command reads itself.")
    dry_run: bool = setting(False, "Stop before running.")
    overrides: list[str] = setting([], "KEY=VALUE overrides.", positional=True)


def test_a_group_may_own_config_and_a_positional_list(tmp_path):
    path = tmp_path / "engine.yaml"
    path.write_text("data:\n  batch: 8\n")  # not options of the group: never read by the parser
    got = parse(OwnFile, ["--config", str(path), "--dry-run", "a.b=1", "c=[x, y]"])
    assert (got.config, got.dry_run, got.overrides) == (str(path), True, ["a.b=1", "c=[x, y]"])
    assert parse(OwnFile, ["a=1"]).overrides == ["a=1"] and parse(OwnFile, []).overrides == []
    assert parse(OwnFile, ["--dry-run", "false", "x=2"]).dry_run is False
    from leantrain.core.parser import build_parser

    usage = build_parser([OwnFile], prog="p").format_usage()
    assert "[OVERRIDES ...]" in usage and "[--config FILE]" not in usage
    with pytest.raises(ConfigError, match="unknown key 'data'"):  # others: options YAML
        parse(RunArgs, ["--config", str(path)])


def test_given_names_the_fields_set_by_flags_or_the_config_file(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("mode: greedy\n")
    sampling = parse(Sampling, ["--config", str(path), "--k", "4"])  # 4: the default, given
    assert given(sampling) == {"mode", "k"} and given(Sampling()) == frozenset()
    target, run = parse((Target, RunArgs), ["--theorem", "t"])
    assert (given(target), given(run)) == ({"theorem"}, frozenset())


def test_a_composing_class_changes_a_default_without_declaring_the_setting_again(capsys):
    from leantrain.core.groups import Seed

    @dataclass
    class Split(Seed, defaults={"seed": 3407}):
        """A split."""

        fraction: float = setting(0.2, "Fraction.")

    assert Split().seed == 3407 and Seed().seed == 0 and RunArgs().seed == 0
    assert [f for f in Split.__dataclass_fields__ if f != "fraction"] == ["seed"]
    assert parse(Split, ["--seed", "5"]).seed == 5
    with pytest.raises(ConfigError, match="--seed must be zero or more, got -1"):
        Split(seed=-1)
    with pytest.raises(ConfigError, match="key 'seed' must be zero or more"):
        config_from_dict(Split, {"seed": -1})
    with pytest.raises(SystemExit):
        parse(Split, ["--help"], prog="split")
    assert "Random seed. (default: 3407)" in capsys.readouterr().out


def test_a_positional_list_takes_any_number_and_config_can_be_required(tmp_path):
    @dataclass
    class Paths:
        config_required = True
        paths: list[str] = setting([], "Paths.", positional=True)
        flag: bool = setting(False, "A flag.")

    path = tmp_path / "c.yaml"
    path.write_text("flag: true\n")
    assert parse(Paths, ["--config", str(path)]).paths == []
    got = parse(Paths, ["--config", str(path), "a", "b c", "1e3"])
    assert got.paths == ["a", "b c", "1e3"] and got.flag
    with pytest.raises(ConfigError, match="missing required --config"):
        parse(Paths, ["a"], prog="p")
    from leantrain.core.parser import build_parser

    assert "flags override it (required)" in build_parser([Paths]).format_help()
    assert "(required)" not in build_parser([RunArgs]).format_help()


def test_a_redefault_copies_a_list_per_instance_and_missing_makes_it_required():
    from dataclasses import MISSING

    @dataclass
    class Splits(RunSwitches):
        split: list[str] = setting(["train"], "Splits.", aliases=("splits",))

    @dataclass
    class TestSplits(Splits, DataArgs, defaults={"split": ["test"], "data_path": MISSING}):
        """The test split of given data."""

    a, b = TestSplits(data_path="d"), TestSplits(data_path="d")
    a.split.append("val")
    assert b.split == ["test"] and Splits().split == ["train"]
    assert (
        TestSplits.__dataclass_fields__["split"].metadata
        == Splits.__dataclass_fields__["split"].metadata
    )
    assert parse(TestSplits, ["--data", "x", "--splits", "val"]).split == ["val"]
    with pytest.raises(ConfigError, match="missing required --data-path"):
        parse(TestSplits, [], prog="t")


def test_an_empty_list_flag_is_one_empty_text_not_none():
    from leantrain.core.groups import RepoArgs

    assert parse(RepoArgs, ["--repo", ""]).repos == [""]
    assert parse(RepoArgs, ["--repo", "a", "--repo", "b", "--db", "x.db"]) == RepoArgs(
        database="x.db", repos=["a", "b"]
    )


def test_a_date_yaml_cannot_build_is_one_line_from_a_file_and_text_from_a_flag(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("theorem: 2025-13-45\n")
    with pytest.raises(
        ConfigError, match=r"c\.yaml: malformed YAML value: month must be in 1\.\.12"
    ):
        parse(Target, ["--config", str(path)])
    assert parse(Target, ["--theorem", "2025-13-45"]).theorem == "2025-13-45"
