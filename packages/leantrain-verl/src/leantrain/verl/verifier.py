"""The seed toolkit's ``verifier:`` YAML section: Lean's check, wired as VERL's reward.

The section names the Lean check of leantrain-lean (:class:`leantrain.lean.LeanArgs`) and
becomes one more reward of the run, leantrain's ``lean`` reward (the same reward and soundness
rules as ``leantrain grpo --reward lean``), scored by ``compute_score`` in VERL's workers::

    verifier:
      type: repl                 # backend: repl | kimina | pantograph | leandojo ("lean": repl)
      command: lake env repl     # repl: the REPL command (also repl_command)
      project: ../my-lean-repo   # the Lean project (also lean_project)
      url: http://localhost:8000 # kimina: the server
      timeout: 60                # seconds per tactic (also tactic_timeout); start_timeout
      level: tactic              # tactic | proof
      weight: 1.0                # its weight in the sum (reward_weight)

``memory_limit_mb``, ``allowed_axioms`` and ``enable`` (``false``: no verifier) are taken too.
The backend is built when the rewards are checked (construction, ``dry_run``): a REPL command
that is not installed, a missing package or project is one line there, before VERL starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from leantrain.core.errors import ConfigError

KEYS = {
    "type": "backend",
    "backend": "backend",
    "command": "repl_command",
    "repl_command": "repl_command",
    "project": "lean_project",
    "lean_project": "lean_project",
    "url": "url",
    "timeout": "tactic_timeout",
    "tactic_timeout": "tactic_timeout",
    "start_timeout": "start_timeout",
    "memory_limit_mb": "memory_limit_mb",
    "allowed_axioms": "allowed_axioms",
    "level": "level",
    "weight": "weight",
    "reward_weight": "weight",
    "enable": "enable",
}
"""The section's keys → the ``lean`` reward's options (:class:`leantrain.lean.LeanArgs`)."""


def verifier_reward(section: Any, source: str = "config") -> dict[str, Any] | None:
    """The ``lean`` reward spec of a ``verifier:`` section (``None`` for none / disabled); an
    unknown key is one line listing the valid ones."""
    if section is None:
        return None
    if not isinstance(section, Mapping):
        raise ConfigError(f"{source}: section 'verifier:' must be a mapping, got {section!r}")
    spec: dict[str, Any] = {"name": "lean"}
    for key, value in section.items():
        if key not in KEYS:
            raise ConfigError(
                f"{source}: unknown key 'verifier.{key}'",
                hint=f"valid keys of 'verifier': {', '.join(sorted(KEYS))}",
            )
        spec[KEYS[key]] = value
    if spec.pop("enable", True) is False:
        return None
    if spec.get("backend") == "lean":
        spec["backend"] = "repl"
    return spec
