"""leantrain's YAML reading: PyYAML's safe loader with YAML 1.2 floats (``1e-5``), duplicate keys
refused, and size and alias-bomb guards; every error is one :class:`ConfigError` naming the file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from leantrain.core.errors import ConfigError

MAX_YAML_BYTES = 10 * 2**20
"""The largest config file :func:`load_yaml` reads (configs are a few kB)."""

MAX_YAML_NODES = 100_000
"""The most values a YAML config may hold once its aliases are expanded: a "billion laughs"
alias bomb fails fast, before anything is built from it."""


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2's floats (``1e-5``, ``1E-5``, ``5e3``, ``.5``: PyYAML
    alone reads the first three as strings) and duplicate keys refused (naming ``where``)."""

    where = "config"

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = self.construct_object(key_node)
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise ConfigError(
                        f"{self.where}: key {key!r} is given twice (lines {seen[key]} and {line})",
                        hint="give each key once",
                    )
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


# a copy of every resolver list: PyYAML's add_implicit_resolver copies the table but appends to
# the lists it shares with SafeLoader, which would change every safe_load in the process
_Loader.yaml_implicit_resolvers = {
    first: list(resolvers) for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+|\.[0-9_]+)$"),
    list("-+0123456789."),
)


def _expanded_size(root: yaml.Node, where: str) -> int:
    """The number of nodes of ``root`` with every alias expanded, counted once per shared node
    (so in time linear in the file); over :data:`MAX_YAML_NODES` or recursive is an error."""
    sizes: dict[yaml.Node, int] = {}  # nodes hash by identity
    open_nodes: set[yaml.Node] = set()

    def size(node: yaml.Node) -> int:
        if node in sizes:
            return sizes[node]
        if node in open_nodes:
            raise ConfigError(f"{where}: a YAML alias refers to itself (a recursive structure)")
        open_nodes.add(node)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        open_nodes.discard(node)
        if total > MAX_YAML_NODES:
            raise ConfigError(
                f"{where}: the YAML expands to more than {MAX_YAML_NODES:,} values "
                "(aliases repeated into an 'alias bomb'?)",
                hint="a config file is a small mapping of keys; write it without nested aliases",
            )
        sizes[node] = total
        return total

    return size(root)


def parse_yaml(text: str, *, where: str = "config") -> Any:
    """``text`` read by leantrain's YAML loader (safe, YAML 1.2 floats, duplicate keys and alias
    bombs refused); every error is one :class:`ConfigError` naming ``where``."""
    loader = None
    try:
        loader = _Loader(text)  # its reader refuses control characters here
        loader.where = where
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, where)
        return loader.construct_document(node)
    except yaml.YAMLError as e:
        detail = " ".join(str(e).split())
        raise ConfigError(f"{where}: malformed YAML: {detail}") from None
    except RecursionError:
        raise ConfigError(f"{where}: the YAML is nested too deeply") from None
    except ValueError as e:  # a value YAML's constructors refuse: a date 2025-13-45
        raise ConfigError(f"{where}: malformed YAML value: {e}") from None
    finally:
        if loader is not None:
            loader.dispose()


def read_yaml_file(path: str | Path) -> Any:
    """The document of a YAML file (any value, ``None`` when empty); an unreadable, oversized,
    non-UTF-8 or malformed file is one :class:`ConfigError` naming it."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}", hint="check the --config path")
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_YAML_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the config file: {e.strerror or e}") from None
    if len(raw) > MAX_YAML_BYTES:
        raise ConfigError(
            f"{path}: a config file of more than {MAX_YAML_BYTES // 2**20} MiB",
            hint="is this the right file? configs are small YAML mappings",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(
            f"{path}: not a UTF-8 text file (byte {e.start}); is it a YAML config?",
            hint="save it as UTF-8 YAML",
        ) from None
    return parse_yaml(text, where=str(path))


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping of config keys (:func:`read_yaml_file`); also an error: an empty or
    ``null`` file (a config file without keys is a mistake), or one that is not a mapping of
    names."""
    data = read_yaml_file(path)
    if data is None or data == {}:
        raise ConfigError(
            f"{path}: the config file is empty (no keys)",
            hint="add the config's keys to it (a config file without any is a mistake)",
        )
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys, got {type(data).__name__}")
    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise ConfigError(
            f"{path}: config key {bad[0]!r} is not a name ({type(bad[0]).__name__})",
            hint="config keys are names such as max_steps",
        )
    return data
