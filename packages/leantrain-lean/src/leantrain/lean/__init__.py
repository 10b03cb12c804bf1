"""leantrain.lean: one contract between leantrain and Lean, over the Lean REPL, the Kimina
Lean Server, Pantograph and LeanDojo, with sound whole-theorem checks. No torch.

``backend.start(theorem)`` → a session with an initial state; ``session.run(state, tactic)``
→ a new state / ``proved`` / ``error`` / ``timeout``; ``backend.check(theorem, proof)`` →
Lean's errors, sorries and axioms; :func:`check_proof` → ``proved`` or ``rejected`` with the
reason; :func:`verify` re-checks a ``proofs.json``.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from leantrain.lean.args import (
    CHECK_BACKENDS,
    LEAN_BACKENDS,
    SEARCH_BACKENDS,
    LeanArgs,
    build_backend,
    lean_args,
)
from leantrain.lean.contract import (
    NO_GOALS,
    Backend,
    BackendError,
    CheckResult,
    LeanTheorem,
    Outcome,
    Session,
    SessionCrashed,
    State,
    split_header,
)
from leantrain.lean.kimina import KiminaBackend
from leantrain.lean.leandojo import LeanDojoBackend
from leantrain.lean.pantograph import PantographBackend
from leantrain.lean.repl import ReplBackend
from leantrain.lean.soundness import (
    DEFAULT_ALLOWED_AXIOMS,
    DENY_LIST,
    Verdict,
    check_proof,
    judge,
    parse_axioms,
    screen_proof,
)
from leantrain.lean.theorems import ProjectSources, load_theorems, theorem_from_source
from leantrain.lean.toolchain import SUPPORT, check_toolchain
from leantrain.lean.verify import load_proofs, summarize, verify

try:
    __version__ = _version("leantrain-lean")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "CHECK_BACKENDS",
    "DEFAULT_ALLOWED_AXIOMS",
    "DENY_LIST",
    "LEAN_BACKENDS",
    "NO_GOALS",
    "SEARCH_BACKENDS",
    "SUPPORT",
    "Backend",
    "BackendError",
    "CheckResult",
    "KiminaBackend",
    "LeanArgs",
    "LeanDojoBackend",
    "LeanTheorem",
    "Outcome",
    "PantographBackend",
    "ProjectSources",
    "ReplBackend",
    "Session",
    "SessionCrashed",
    "State",
    "Verdict",
    "build_backend",
    "check_proof",
    "check_toolchain",
    "judge",
    "lean_args",
    "load_proofs",
    "load_theorems",
    "parse_axioms",
    "screen_proof",
    "split_header",
    "summarize",
    "theorem_from_source",
    "verify",
]
