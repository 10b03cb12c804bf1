"""``prompt.json``: written and read back typed; a malformed file, a missing or changed
retriever checkpoint is one line naming the file or the path; given settings over the model's,
a difference warned (and used) or refused."""

from __future__ import annotations

import json
import logging

import pytest
from leantrain.core.errors import CheckpointError, ConfigError
from leantrain.tactics.model_prompt import (
    PROMPT_NAME,
    ModelPrompt,
    read_prompt,
    resolve_prompt,
    write_prompt,
)
from leantrain.tactics.premises import retriever_checkpoint


def _retriever(path, content="a"):
    """A directory that passes as a saved retriever (no weights are loaded here)."""
    path.mkdir(parents=True)
    (path / "retriever.json").write_text(json.dumps({"content": content}))
    return path


def _model(path, **fields):
    path.mkdir(parents=True)
    write_prompt(path, ModelPrompt(**fields))
    return path


def test_written_and_read_back(tmp_path):
    ret = retriever_checkpoint(_retriever(tmp_path / "ret"))
    prompt = ModelPrompt("Be brief.", True, ret.path, ret.sha256, 3, 400)
    write_prompt(tmp_path, prompt)
    assert read_prompt(tmp_path) == prompt
    assert json.loads((tmp_path / PROMPT_NAME).read_text())["format_version"] == 1
    assert read_prompt(tmp_path / "elsewhere") is None and read_prompt(None) is None


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ("not json", "not valid JSON"),
        ([1], "not a JSON object"),
        ({"format_version": 9}, "format_version 9"),
        ({"colour": 1}, "unknown field 'colour'"),
        ({"num_premises": None}, "field 'num_premises' is None"),
        ({"num_premises": 0}, "field 'num_premises' is 0"),
        ({"num_premises": True}, "field 'num_premises' is True"),
        ({"system_prompt": None}, "field 'system_prompt' is None"),
        ({"retriever": "/r"}, "retriever and retriever_sha256 go together"),
        ({"mode": "proof"}, "field 'mode' is 'proof'"),
        ({"mode": 1}, "field 'mode' is 1"),
    ],
)
def test_a_malformed_prompt_json_is_one_line_naming_it(tmp_path, change, named):
    write_prompt(tmp_path, ModelPrompt())
    path = tmp_path / PROMPT_NAME
    if isinstance(change, dict):
        path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    else:
        path.write_text(change if isinstance(change, str) else json.dumps(change))
    with pytest.raises(CheckpointError) as e:
        read_prompt(tmp_path)
    line = e.value.one_line()
    assert "\n" not in line and str(path) in line and named in line


def test_a_missing_field_is_named(tmp_path):
    write_prompt(tmp_path, ModelPrompt())
    path = tmp_path / PROMPT_NAME
    data = json.loads(path.read_text())
    del data["max_premise_chars"]
    path.write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="missing field 'max_premise_chars'"):
        read_prompt(tmp_path)


def test_a_prompt_json_without_mode_is_a_tactic_models(tmp_path):
    write_prompt(tmp_path, ModelPrompt(mode="whole"))
    path = tmp_path / PROMPT_NAME
    data = json.loads(path.read_text())
    assert data["mode"] == "whole" and read_prompt(tmp_path).mode == "whole"
    del data["mode"]
    path.write_text(json.dumps(data))
    assert read_prompt(tmp_path) == ModelPrompt(mode="tactic")


def test_a_whole_proof_model_asked_for_tactics_is_the_prompt_conflict(tmp_path):
    model = _model(tmp_path / "m", mode="whole")
    assert resolve_prompt(model, {}).mode == "whole"  # not given: as trained
    with pytest.raises(ConfigError) as e:
        resolve_prompt(model, {"mode": "tactic"}, on_conflict="error")
    line = e.value.one_line()
    assert "\n" not in line and "mode 'tactic' (trained with 'whole')" in line
    tactic = _model(tmp_path / "t")
    with pytest.raises(ConfigError, match="mode 'whole' \\(trained with 'tactic'\\)"):
        resolve_prompt(tactic, {"mode": "whole"}, on_conflict="error")


def test_the_models_prompt_fills_what_is_not_given(tmp_path):
    ret = retriever_checkpoint(_retriever(tmp_path / "ret"))
    model = _model(tmp_path / "m", system_prompt="Be brief.", retriever=ret.path,
                   retriever_sha256=ret.sha256, num_premises=3)  # fmt: skip
    assert resolve_prompt(model, {}) == read_prompt(model)
    assert resolve_prompt(None, {"system_prompt": ""}) == ModelPrompt(system_prompt="")
    # the same content elsewhere (a copy) is no difference, and is what is used
    copy = retriever_checkpoint(_retriever(tmp_path / "copy"))
    got = resolve_prompt(model, {"retriever": str(tmp_path / "copy")}, on_conflict="error")
    assert (got.retriever, got.retriever_sha256, got.num_premises) == (copy.path, ret.sha256, 3)


def test_a_given_setting_that_differs_is_warned_or_refused(tmp_path, caplog):
    ret = retriever_checkpoint(_retriever(tmp_path / "ret"))
    model = _model(tmp_path / "m", system_prompt="Be brief.", retriever=ret.path,
                   retriever_sha256=ret.sha256, num_premises=3)  # fmt: skip
    other = _retriever(tmp_path / "other", content="b")
    for given, named in [
        ({"system_prompt": "Be long."}, "system_prompt 'Be long.' (trained with 'Be brief.')"),
        ({"num_premises": 5}, "num_premises 5 (trained with 3)"),
        ({"retriever": ""}, "retriever None"),
        ({"retriever": str(other)}, f"retriever {other.resolve()}"),
    ]:
        with pytest.raises(ConfigError) as e:
            resolve_prompt(model, given, on_conflict="error", override_hint="pass --override")
        line = e.value.one_line()
        assert "\n" not in line and named in line and "--override" in line, line
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="leantrain.tactics"):
            got = resolve_prompt(model, given)
        assert [r.levelname for r in caplog.records] == ["WARNING"]
        assert named in caplog.text and "the given ones are used" in caplog.text
        key = next(iter(given))
        if key != "retriever":
            assert getattr(got, key) == given[key]
        else:
            assert got.retriever == (str(other.resolve()) if given[key] else None)
    # without premises, the premise settings change nothing: no difference
    plain = _model(tmp_path / "plain")
    assert resolve_prompt(plain, {"num_premises": 4}, on_conflict="error").num_premises == 4


def test_a_missing_or_changed_retriever_is_one_line(tmp_path):
    ret_dir = _retriever(tmp_path / "ret")
    ret = retriever_checkpoint(ret_dir)
    model = _model(tmp_path / "m", retriever=ret.path, retriever_sha256=ret.sha256)
    (ret_dir / "retriever.json").write_text(json.dumps({"content": "changed"}))
    with pytest.raises(ConfigError) as e:
        resolve_prompt(model, {})
    line = e.value.one_line()
    assert str(model / PROMPT_NAME) in line and "changed since the model was trained" in line
    assert ret.sha256[:12] in line and "--retriever" in line
    (ret_dir / "retriever.json").unlink()
    ret_dir.rmdir()
    with pytest.raises(ConfigError) as e:
        resolve_prompt(model, {})
    line = e.value.one_line()
    assert "\n" not in line and f"{ret.path} is missing" in line and "--retriever PATH" in line
    # the override: a copy of the same content
    _retriever(tmp_path / "copy")
    assert resolve_prompt(model, {"retriever": str(tmp_path / "copy")}).retriever_sha256 == (
        ret.sha256
    )
