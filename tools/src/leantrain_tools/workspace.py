"""Read the workspace: its member packages, their versions and their sibling requirements."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import Requirement

REPO_ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Member:
    """One published package of the workspace (``packages/<dist>``)."""

    name: str
    version: str
    path: Path
    requirements: list[Requirement] = field(default_factory=list)

    @property
    def changelog(self) -> Path:
        return self.path / "CHANGELOG.md"

    @property
    def tag(self) -> str:
        """The release tag of the current version: ``<dist>-v<version>``."""
        return f"{self.name}-v{self.version}"


def members(root: Path = REPO_ROOT) -> dict[str, Member]:
    """The packages under ``packages/``, by distribution name."""
    out = {}
    for pyproject in sorted((root / "packages").glob("*/pyproject.toml")):
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        project = data["project"]
        reqs = [Requirement(r) for r in project.get("dependencies", [])]
        for extra in project.get("optional-dependencies", {}).values():
            reqs += [Requirement(r) for r in extra]
        out[project["name"]] = Member(project["name"], project["version"], pyproject.parent, reqs)
    return out
