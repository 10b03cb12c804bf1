"""The ``kimina`` backend: whole-proof checks, batched, through the Kimina Lean Server's HTTP API.

The Kimina Lean Server (project-numina/kimina-lean-server; read at v2.0.0, commit ``fb2393d``,
January 2026) runs pools of Lean REPLs behind two endpoints:

``POST /api/check`` (default)
    ``{"snippets": [{"id", "code"}], "timeout", "debug", "reuse"}`` →
    ``{"results": [{"id", "time", "error"?, "response"?}]}``
``POST /verify`` (the older one, kept by the server for backward compatibility)
    ``{"codes": [{"custom_id", "proof"}], "timeout", "disable_cache"}`` →
    ``{"results": [{"custom_id", "error"?, "response"?}]}``

``response`` is the REPL's own answer (``messages``, ``sorries``, ``env``), or
``{"message": …}`` when the REPL refused the command; ``error`` is a server-side error, one
holding "timed out" when the snippet ran past ``timeout``. The server splits a snippet's
imports off, elaborates them once per REPL and reuses it (``reuse``). An API key, where the
server has one, goes in the ``Authorization: Bearer`` header.

Each snippet is ``header + declaration + "#print axioms NAME"``. The server checks whole proofs
only: :meth:`KiminaBackend.start` is refused in one line (use ``repl`` or ``pantograph`` for a
proof search). Only the standard library is used (``urllib``).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any, Literal

from leantrain.core.errors import ConfigError
from leantrain.lean.contract import BackendError, CheckResult, LeanTheorem
from leantrain.lean.soundness import result_from_messages

Api = Literal["check", "verify"]


def snippet_code(theorem: LeanTheorem, proof: str) -> str:
    """The code checked for ``theorem`` with ``proof``: header, declaration, axiom report."""
    parts = [theorem.header.strip(), theorem.code(proof), f"#print axioms {theorem.name}"]
    return "\n\n".join(p for p in parts if p) + "\n"


class KiminaBackend:
    """Checks whole theorems on a Kimina Lean Server at ``url``.

    ``timeout``: seconds per snippet (the server's); ``http_timeout``: seconds to wait for a
    whole batch (default ``timeout`` × 2 + 60); ``api``: ``check`` (``/api/check``) or
    ``verify`` (``/verify``); ``batch_size``: snippets per request."""

    name = "kimina"
    metric = "proof rate"

    def __init__(
        self,
        url: str = "http://localhost:8000",
        *,
        timeout: float = 60.0,
        api: Api = "check",
        api_key: str | None = None,
        batch_size: int = 32,
        http_timeout: float | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ConfigError(
                f"--url: '{url}' is not an http(s) URL", hint="e.g. http://localhost:8000"
            )
        if api not in ("check", "verify"):
            raise ConfigError(f"kimina api must be 'check' or 'verify' (got '{api}')")
        if batch_size < 1:
            raise ConfigError(f"kimina batch_size must be >= 1 (got {batch_size})")
        self.url = url.rstrip("/")
        self.timeout = float(timeout)
        self.api: Api = api
        self.api_key = api_key
        self.batch_size = batch_size
        self.http_timeout = http_timeout if http_timeout is not None else 2 * self.timeout + 60

    def start(self, theorem: LeanTheorem) -> Any:
        """Refused: the server checks whole proofs only."""
        raise BackendError(
            "the kimina backend checks whole proofs only and cannot run a proof search",
            hint="use --backend repl or --backend pantograph to search, kimina to verify",
        )

    def check(self, theorem: LeanTheorem, proof: str) -> CheckResult:
        """One whole-theorem check (a batch of one)."""
        return self.check_many([(theorem, proof)])[0]

    def check_many(self, items: Sequence[tuple[LeanTheorem, str]]) -> list[CheckResult]:
        """Check every ``(theorem, proof)``, ``batch_size`` to a request, in order."""
        results: list[CheckResult] = []
        for i in range(0, len(items), self.batch_size):
            batch = items[i : i + self.batch_size]
            results.extend(self._batch(batch, first_id=i))
        return results

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
        )
        with urllib.request.urlopen(request, timeout=self.http_timeout) as reply:
            data = json.loads(reply.read().decode("utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise ValueError(f"unexpected reply: {str(data)[:200]}")
        return data

    def _batch(self, batch: Sequence[tuple[LeanTheorem, str]], first_id: int) -> list[CheckResult]:
        ids = [str(first_id + j) for j in range(len(batch))]
        codes = [snippet_code(t, p) for t, p in batch]
        if self.api == "check":
            path = "/api/check"
            body: dict[str, Any] = {
                "snippets": [{"id": i, "code": c} for i, c in zip(ids, codes)],
                "timeout": max(1, round(self.timeout)),  # an int in the server's model
                "debug": False,
                "reuse": True,
            }
            id_key = "id"
        else:
            path = "/verify"
            body = {
                "codes": [{"custom_id": i, "proof": c} for i, c in zip(ids, codes)],
                "timeout": max(1, round(self.timeout)),
                "disable_cache": False,
            }
            id_key = "custom_id"
        try:
            data = self._post(path, body)
        except urllib.error.HTTPError as e:
            detail = f"the Kimina Lean Server answered HTTP {e.code} ({e.reason})"
            return [CheckResult("error", detail=detail) for _ in batch]
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            if "timed out" in str(reason):
                return [
                    CheckResult("timeout", detail=f"{self.url}: no reply in time") for _ in batch
                ]
            raise BackendError(
                f"--url {self.url}: cannot reach the Kimina Lean Server ({reason})",
                hint="start it (see leantrain-lean's README) or fix --url",
            ) from None
        except ValueError as e:
            return [CheckResult("error", detail=f"the Kimina Lean Server: {e}") for _ in batch]
        by_id = {str(r.get(id_key)): r for r in data["results"] if isinstance(r, dict)}
        return [self._result(by_id.get(i), t) for i, (t, _) in zip(ids, batch)]

    def _result(self, row: dict[str, Any] | None, theorem: LeanTheorem) -> CheckResult:
        if row is None:
            return CheckResult("error", detail="the Kimina Lean Server returned no result for it")
        error = row.get("error")
        if error:
            status: Literal["timeout", "error"] = (
                "timeout" if "timed out" in str(error) else "error"
            )
            return CheckResult(status, detail=f"Kimina: {error}")
        response = row.get("response")
        if not isinstance(response, dict):
            return CheckResult("error", detail="the Kimina Lean Server returned no response")
        if "message" in response:
            return CheckResult(
                "error", detail=f"REPL: {' '.join(str(response['message']).split())}"
            )
        return result_from_messages(
            list(response.get("messages") or []), len(response.get("sorries") or []), theorem.name
        )

    def close(self) -> None:
        """Nothing to release (one HTTP request per batch)."""
