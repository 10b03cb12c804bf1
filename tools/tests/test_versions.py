"""The workspace's sibling ranges admit the current versions; the release helpers work."""

from __future__ import annotations

import shutil
from pathlib import Path

from leantrain_tools.release import update_changelog
from leantrain_tools.versions import check
from leantrain_tools.workspace import REPO_ROOT, members


def test_every_sibling_range_admits_current_version():
    assert check() == []


def test_every_package_has_version_readme_changelog_and_py_typed():
    pkgs = members()
    assert {"leantrain-core", "leantrain-export", "leantrain-llm", "leantrain"} <= set(pkgs)
    for m in pkgs.values():
        assert (m.path / "README.md").is_file(), m.name
        assert (m.path / "CHANGELOG.md").is_file(), m.name
        assert list((m.path / "src" / "leantrain").glob("*/py.typed")), m.name


def test_no_namespace_init_anywhere():
    assert not list(REPO_ROOT.glob("packages/*/src/leantrain/__init__.py"))


def _copy_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for m in members().values():
        dst = root / "packages" / m.path.name
        dst.mkdir(parents=True)
        shutil.copy(m.path / "pyproject.toml", dst / "pyproject.toml")
    return root


def test_check_reports_a_range_that_excludes_the_sibling(tmp_path):
    root = _copy_workspace(tmp_path)
    core = root / "packages" / "leantrain-core" / "pyproject.toml"
    core.write_text(core.read_text().replace('version = "0.1.0"', 'version = "0.2.0"', 1))
    problems = check(root)
    assert any(
        p.startswith("leantrain-export: requires leantrain-core")
        and p.endswith("but leantrain-core is at 0.2.0")
        for p in problems
    )


def test_check_rejects_exact_pins(tmp_path):
    root = _copy_workspace(tmp_path)
    exp = root / "packages" / "leantrain-export" / "pyproject.toml"
    exp.write_text(exp.read_text().replace('"leantrain-core>=0.1,<0.2"', '"leantrain-core==0.1.0"'))
    assert any("pins leantrain-core" in p for p in check(root))


def test_update_changelog_names_the_release():
    text = "# Changelog — x\n\n## 0.1.0 (unreleased)\n\n- thing\n"
    assert (
        update_changelog(text, "0.2.0", "2026-11-22")
        == "# Changelog — x\n\n## 0.2.0 (2026-11-22)\n\n- thing\n"
    )
    assert "## 0.3.0 (2026-11-22)" in update_changelog(
        "# Changelog — x\n\n## 0.2.0 (d)\n", "0.3.0", "2026-11-22"
    )
