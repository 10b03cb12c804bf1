"""Errors keep their message, hint and fields across a process boundary (pickling)."""

from __future__ import annotations

import pickle

from leantrain.core.errors import ConfigError, DataError


def test_data_error_pickles_whole():
    err = DataError("/data/train.json", "not a list", index=3, field="start", hint="fix it")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is DataError
    assert str(back) == str(err) == "/data/train.json, record 3, field 'start': not a list — fix it"
    assert (back.path, back.index, back.field, back.hint) == (
        "/data/train.json",
        3,
        "start",
        "fix it",
    )
    assert back.message == err.message and back.exit_code == err.exit_code


def test_config_error_pickles_whole():
    err = ConfigError("unknown key 'lr'", hint="did you mean 'learning_rate'?")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is ConfigError and str(back) == str(err) and back.exit_code == 2
    assert back.hint == err.hint and back.message == err.message
