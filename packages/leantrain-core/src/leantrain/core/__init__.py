"""leantrain.core: LeanDojo schemas, Lean text helpers, config loading, registries, run
manifests, atomic writes, sample data and the ``leantrain`` CLI. No torch."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from leantrain.core.atomic import (
    atomic_directory,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_jsonl,
    atomic_write_text,
)
from leantrain.core.command import Command
from leantrain.core.config import config_from_dict, config_from_yaml, config_to_dict
from leantrain.core.errors import (
    CheckpointError,
    ConfigError,
    DataError,
    LeanTrainError,
    MissingDependencyError,
    require_package,
)
from leantrain.core.lean_text import (
    contains_sorry,
    first_line,
    normalize_tactic,
    normalize_whitespace,
    premise_mentions,
    strip_marks,
)
from leantrain.core.manifest import RunManifest, package_versions
from leantrain.core.parser import parse_cli
from leantrain.core.registry import (
    ADVANTAGES,
    ALGORITHMS,
    ENCODERS,
    REWARDS,
    Registry,
    code_allowed,
    import_object,
)
from leantrain.core.sample import sample_data_dir, sample_repo_dirs
from leantrain.core.schemas import (
    CorpusFile,
    Premise,
    PremiseProvenance,
    ProgressRow,
    Theorem,
    TracedTactic,
    load_corpus,
    load_progress_rows,
    load_theorems,
)

try:
    __version__ = _version("leantrain-core")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "ADVANTAGES",
    "ALGORITHMS",
    "ENCODERS",
    "REWARDS",
    "CheckpointError",
    "Command",
    "ConfigError",
    "CorpusFile",
    "DataError",
    "LeanTrainError",
    "MissingDependencyError",
    "Premise",
    "PremiseProvenance",
    "ProgressRow",
    "Registry",
    "RunManifest",
    "Theorem",
    "TracedTactic",
    "atomic_directory",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_jsonl",
    "atomic_write_text",
    "code_allowed",
    "config_from_dict",
    "config_from_yaml",
    "config_to_dict",
    "contains_sorry",
    "first_line",
    "import_object",
    "load_corpus",
    "load_progress_rows",
    "load_theorems",
    "normalize_tactic",
    "normalize_whitespace",
    "package_versions",
    "parse_cli",
    "premise_mentions",
    "require_package",
    "sample_data_dir",
    "sample_repo_dirs",
    "strip_marks",
]
