"""``leantrain export …`` (import, list, stats, merge, curriculum, dump-json, delete, trace),
declared for core's registry; run functions and settings: :mod:`leantrain.export.commands`."""

from __future__ import annotations

from leantrain.core.command import Command

_C = "leantrain.export.commands"


def _sub(name: str, help: str, run: str, *groups: str) -> Command:
    refs = tuple(g if ":" in g else f"{_C}:{g}" for g in groups)
    return Command(name, help, f"{_C}:{run}", groups=refs, logger="leantrain.export")


def register() -> list[Command]:
    """The ``export`` command of the ``leantrain`` CLI (entry point ``leantrain.commands``)."""
    return [
        Command(
            "export",
            "database of traced repositories: import, list, stats, merge, curriculum, dump-json",
            description="The database of traced Lean repositories and its LeanDojo-v2 exports.",
            subcommands=(
                _sub(
                    "import",
                    "import a LeanDojo-v2 export dir, a LeanDojo benchmark dir or a "
                    "dynamic_database.json",
                    "import_",
                    "Db",
                    "ImportArgs",
                ),
                _sub("list", "list the repositories", "list_", "Db", "JsonArgs"),
                _sub("stats", "counts over the database", "stats", "Db", "JsonArgs"),
                _sub(
                    "merge",
                    "export the merged data of repositories (LeanDojo-v2 format)",
                    "merge",
                    "Repos",
                    "OutArgs",
                    "leantrain.export.export_config:ExportConfig",
                ),
                _sub(
                    "curriculum",
                    "the repositories ordered easiest first (LeanAgent's rule)",
                    "curriculum",
                    "Db",
                    "JsonArgs",
                ),
                _sub(
                    "dump-json",
                    "write the database as a LeanDojo-v2 dynamic_database.json",
                    "dump_json",
                    "Repos",
                    "OutArgs",
                ),
                _sub("delete", "delete a repository and its data", "delete", "Db", "RepoArg"),
                _sub(
                    "trace",
                    "trace a repository with LeanDojo (needs leantrain-export[trace] and a Lean "
                    "toolchain) and import it",
                    "trace",
                    "Db",
                    "TraceArgs",
                    "OutArgs",
                ),
            ),
        )
    ]
