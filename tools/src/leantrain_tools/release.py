"""Bump one package's version, open its CHANGELOG entry and print the release steps.

One command::

    uv run leantrain-release leantrain-llm minor      # or major / patch

runs ``uv version --bump minor --package leantrain-llm`` (only that package changes), renames
the CHANGELOG's "unreleased" heading to the new version and date, checks that every sibling
range still admits the new version, and prints the tag (``leantrain-llm-v0.2.0``) and the
build / smoke-install commands to publish it. Use ``--dry-run`` to see what would happen.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import subprocess
import sys

from leantrain_tools.versions import check
from leantrain_tools.workspace import REPO_ROOT, members


def update_changelog(text: str, version: str, date: str) -> str:
    """Turn the first ``## … (unreleased)`` heading into ``## <version> (<date>)``.

    Without an unreleased section, a new empty section for the version is added on top.
    """
    pattern = re.compile(r"^## .*\(unreleased\)[ \t]*$", re.MULTILINE)
    if pattern.search(text):
        return pattern.sub(f"## {version} ({date})", text, count=1)
    head, sep, rest = text.partition("\n\n")
    return f"{head}{sep}## {version} ({date})\n\n- (no entries)\n\n{rest}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="leantrain-release", description=__doc__.splitlines()[0])
    parser.add_argument("package", help="distribution name, e.g. leantrain-llm")
    parser.add_argument("bump", choices=["major", "minor", "patch"])
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    pkgs = members()
    if args.package not in pkgs:
        print(
            f"error: unknown package '{args.package}'; one of: {', '.join(pkgs)}", file=sys.stderr
        )
        return 2
    cmd = ["uv", "version", "--bump", args.bump, "--package", args.package, "--no-sync"]
    if args.dry_run:
        cmd.append("--dry-run")
    subprocess.run(cmd, check=True, cwd=REPO_ROOT)
    if args.dry_run:
        return 0
    member = members()[args.package]
    member.changelog.write_text(
        update_changelog(
            member.changelog.read_text(encoding="utf-8"),
            member.version,
            dt.date.today().isoformat(),
        ),
        encoding="utf-8",
    )
    problems = check()
    for p in problems:
        print(f"warning: {p}")
    print(f"bumped {member.name} to {member.version}; tag: {member.tag}")
    print("next: uv lock && git commit -am 'release: " + member.tag + f"' && git tag {member.tag}")
    print(
        f"      uv build --package {member.name} --no-sources && (smoke-install the wheel, run 'leantrain --help')"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
