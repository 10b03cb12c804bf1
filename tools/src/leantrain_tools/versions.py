"""Check that every sibling dependency range admits the sibling's current version.

Run ``uv run python -m leantrain_tools.versions``; exits 1 and lists the problems otherwise.
Also rejects ``==`` pins between siblings (they turn independent versions into lockstep) and
sibling dependencies without a ``workspace = true`` source.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from leantrain_tools.workspace import REPO_ROOT, members


def check(root: Path = REPO_ROOT) -> list[str]:
    """Every problem found with sibling requirements, as readable lines (empty when fine)."""
    pkgs = members(root)
    problems = []
    for m in pkgs.values():
        sources = (
            tomllib.loads((m.path / "pyproject.toml").read_text())
            .get("tool", {})
            .get("uv", {})
            .get("sources", {})
        )
        for req in m.requirements:
            sib = pkgs.get(req.name)
            if sib is None:
                continue
            if not str(req.specifier):
                problems.append(f"{m.name}: requirement on {sib.name} has no version range")
            elif any(s.operator in ("==", "===") for s in req.specifier):
                problems.append(
                    f"{m.name}: pins {sib.name} with '{req.specifier}' (use a range such as >=0.1,<0.2)"
                )
            elif not req.specifier.contains(sib.version, prereleases=True):
                problems.append(
                    f"{m.name}: requires {sib.name}{req.specifier} but {sib.name} is at {sib.version}"
                )
            if sources.get(req.name, {}).get("workspace") is not True:
                problems.append(
                    f"{m.name}: {sib.name} lacks '[tool.uv.sources] {sib.name} = {{ workspace = true }}'"
                )
    return problems


def main() -> int:
    problems = check()
    for p in problems:
        print(p)
    if not problems:
        print(f"ok: {len(members())} packages, every sibling range admits the current version")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
