"""Registries: decorator, entry points, ``module:attr``, helpful unknown names."""

from __future__ import annotations

import pytest
from leantrain.core import ConfigError, Registry, import_object
from leantrain.core import registry as registry_module


def test_decorator_and_get():
    reg = Registry("reward function")

    @reg.register("format")
    def format_reward(completions):
        return [1.0 for _ in completions]

    @reg.register()
    def no_sorry(completions):
        return [0.0 for _ in completions]

    assert reg.get("format") is format_reward and reg.get("no_sorry") is no_sorry
    assert reg.names() == ["format", "no_sorry"] and "format" in reg
    with pytest.raises(ValueError, match="already registered"):
        reg.add("format", no_sorry)
    reg.add("format", no_sorry, overwrite=True)
    assert reg.get("format") is no_sorry


def test_module_attr_strings():
    reg = Registry("thing")
    assert reg.get("os.path:join", allow_code=True) is import_object("os.path:join")
    assert import_object("leantrain.core.registry:Registry.get") is Registry.get
    with pytest.raises(ConfigError, match="cannot import module"):
        import_object("no_such_module_xyz:f")
    with pytest.raises(ConfigError, match="has no attribute"):
        import_object("os:no_such_attr")
    with pytest.raises(ConfigError, match="not a 'module:attr'"):
        import_object("os.path")


def test_unknown_name_suggests():
    reg = Registry("algorithm preset")
    reg.add("dr_grpo", object())
    with pytest.raises(ConfigError, match="unknown algorithm preset 'dr_grp'") as e:
        reg.get("dr_grp")
    assert "did you mean 'dr_grpo'" in str(e.value)


class _FakeEP:
    def __init__(self, name, obj=None, error=None):
        self.name, self._obj, self._error = name, obj, error

    def load(self):
        if self._error:
            raise self._error
        return self._obj


def test_entry_points_are_discovered(monkeypatch):
    sentinel = object()
    seen_groups = []

    def fake_entry_points(group):
        seen_groups.append(group)
        return [_FakeEP("plugin", sentinel), _FakeEP("broken", error=ImportError("boom"))]

    monkeypatch.setattr(registry_module, "entry_points", fake_entry_points)
    reg = Registry("encoder", "leantrain.encoders")
    assert "plugin" in reg.names() and "plugin" in reg
    assert reg.get("plugin") is sentinel
    assert seen_groups[0] == "leantrain.encoders"
    with pytest.raises(ConfigError, match="failed to load from its entry point: boom"):
        reg.get("broken")


def test_module_attr_needs_the_opt_in(monkeypatch):
    monkeypatch.delenv("LEANTRAIN_ALLOW_CODE", raising=False)
    imported = []
    monkeypatch.setattr(registry_module, "import_object", lambda spec: imported.append(spec))
    reg = Registry("reward function")
    for call in (lambda: reg.get("os:system"), lambda: reg.check_code("os:system")):
        with pytest.raises(ConfigError) as e:
            call()
        assert str(e.value) == (
            "'os:system' is not a registered reward function; loading code named in a config "
            "needs allow_code: true / --allow-code / LEANTRAIN_ALLOW_CODE=1"
        )
    assert imported == []  # refused before anything was imported
    reg.get("os:system", allow_code=True)
    assert imported == ["os:system"]
    monkeypatch.setenv("LEANTRAIN_ALLOW_CODE", "1")
    reg.get("os.path:join")
    reg.check_code("os.path:join")
    assert imported[-1] == "os.path:join"
    monkeypatch.setenv("LEANTRAIN_ALLOW_CODE", "0")
    with pytest.raises(ConfigError, match="LEANTRAIN_ALLOW_CODE=1"):
        reg.get("os.path:join")


def test_registered_names_and_entry_points_need_no_opt_in(monkeypatch):
    monkeypatch.delenv("LEANTRAIN_ALLOW_CODE", raising=False)
    sentinel = object()
    monkeypatch.setattr(
        registry_module, "entry_points", lambda group: [_FakeEP("pkg:plugin", sentinel)]
    )
    reg = Registry("encoder", "leantrain.encoders")
    reg.add("my:name", sentinel)
    assert reg.get("my:name") is sentinel and reg.get("pkg:plugin") is sentinel
    reg.check_code("my:name")
    reg.check_code("pkg:plugin")
    reg.check_code("plain_unknown_name")  # not code: get() reports it as unknown
