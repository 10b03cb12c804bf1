"""The ``kimina`` backend against a local HTTP server speaking the Kimina Lean Server's format.

The server is the standard library's, on 127.0.0.1, answering ``/api/check`` and ``/verify``
as kimina-lean-server v2.0.0 does (``server/routers/check.py``, ``backward.py``): results by
id, each the REPL's answer in ``response`` or a server ``error``. The REPL answers inside are
the recorded ones of the REPL's test suite (``tests/transcripts``) where they exist.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from leantrain.lean import BackendError, KiminaBackend, LeanTheorem, check_proof, verify
from leantrain.lean.kimina import snippet_code

TRANSCRIPTS = Path(__file__).parent / "transcripts"


def recorded(name: str, index: int) -> dict[str, Any]:
    """The ``index``-th recorded REPL answer of a transcript."""
    blocks = [
        b
        for b in TRANSCRIPTS.joinpath(f"{name}.expected.out").read_text().split("\n\n")
        if b.strip()
    ]
    return json.loads(blocks[index])


def composed(cmd: str) -> dict[str, Any]:
    for e in json.loads(TRANSCRIPTS.joinpath("composed.json").read_text()):
        if e["in"]["cmd"] == cmd:
            return e["out"]
    raise KeyError(cmd)


class Server:
    """Answers each snippet by its code: ``answers[code] = response dict | ("error", text)``."""

    def __init__(self) -> None:
        self.answers: dict[str, Any] = {}
        self.requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append((self.path, body, dict(self.headers)))
                if self.path == "/api/check":
                    items = [(s["id"], s["code"]) for s in body["snippets"]]
                    key = "id"
                elif self.path == "/verify":
                    items = [(c["custom_id"], c["proof"]) for c in body["codes"]]
                    key = "custom_id"
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                results = []
                for ident, code in items:
                    answer = owner.answers.get(code)
                    row: dict[str, Any] = {key: ident}
                    if answer is None:
                        row["error"] = "No available REPLs"
                    elif isinstance(answer, tuple):
                        row["error"] = answer[1]
                    else:
                        row["response"] = answer
                        row["time"] = 0.1
                    results.append(row)
                data = json.dumps({"results": results}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


NATIVE = LeanTheorem.parse("theorem ex1 : True")
F = LeanTheorem.parse("def f : Nat")


def _merge(*answers: dict[str, Any]) -> dict[str, Any]:
    """The one REPL answer of a snippet holding several commands: messages and sorries of all."""
    out: dict[str, Any] = {"env": 0}
    for a in answers:
        out.setdefault("messages", []).extend(a.get("messages", []))
        if a.get("sorries"):
            out.setdefault("sorries", []).extend(a["sorries"])
    return out


def test_snippet_holds_header_declaration_and_axiom_report():
    t = LeanTheorem.parse("theorem t : 1 = 1", "import Mathlib\nopen Nat")
    assert (
        snippet_code(t, "rfl")
        == "import Mathlib\nopen Nat\n\ntheorem t : 1 = 1 := by rfl\n\n#print axioms t\n"
    )


@pytest.mark.parametrize("api", ["check", "verify"])
def test_a_batch_is_checked_and_judged(server, api):
    server.answers[snippet_code(NATIVE, "trivial")] = _merge(
        {
            "messages": [
                {
                    "severity": "info",
                    "pos": {"line": 3, "column": 0},
                    "data": "'ex1' does not depend on any axioms",
                }
            ]
        }
    )
    server.answers[snippet_code(NATIVE, "native_decide")] = _merge(composed("#print axioms ex1"))
    # tactic_sorry.expected.out: the recorded answer to 'def f : Nat := by sorry'
    server.answers[snippet_code(F, "sorry")] = _merge(
        recorded("tactic_sorry", 0), composed("#print axioms f")
    )
    b = KiminaBackend(server.url, api=api, timeout=20)
    results = b.check_many([(NATIVE, "trivial"), (NATIVE, "native_decide"), (F, "sorry")])
    assert [r.status for r in results] == ["ok", "ok", "ok"]
    assert results[0].ok and results[0].axioms == ()
    assert results[1].axioms == ("Lean.ofReduceBool",)
    assert results[2].sorries == 1
    path, body, _ = server.requests[-1]
    if api == "check":
        assert path == "/api/check" and len(body["snippets"]) == 3
        assert body["timeout"] == 20 and isinstance(body["timeout"], int)
        assert set(body["snippets"][0]) == {"id", "code"}
    else:
        assert path == "/verify" and body["timeout"] == 20 and len(body["codes"]) == 3
        assert set(body["codes"][0]) == {"custom_id", "proof"}


def test_batches_are_split_and_keep_their_order(server):
    for i in range(5):
        t = LeanTheorem.parse(f"theorem t{i} : True")
        server.answers[snippet_code(t, "trivial")] = {
            "messages": [{"severity": "info", "data": f"'t{i}' does not depend on any axioms"}],
            "env": 0,
        }
    b = KiminaBackend(server.url, batch_size=2)
    items = [(LeanTheorem.parse(f"theorem t{i} : True"), "trivial") for i in range(5)]
    results = b.check_many(items)
    assert all(r.ok and r.axioms == () for r in results)
    assert len(server.requests) == 3


def test_server_errors_and_timeouts_are_statuses(server):
    server.answers[snippet_code(NATIVE, "trivial")] = (
        "error",
        "Lean REPL command timed out in 5.0 seconds",
    )
    server.answers[snippet_code(NATIVE, "decide")] = {
        "message": "Lean error:\n<input>:1:1: unknown tactic"
    }
    b = KiminaBackend(server.url)
    timed, repl_err, missing = b.check_many(
        [(NATIVE, "trivial"), (NATIVE, "decide"), (NATIVE, "rfl")]
    )
    assert timed.status == "timeout"
    assert repl_err.status == "error" and "unknown tactic" in repl_err.detail
    assert missing.status == "error" and "No available REPLs" in missing.detail


def test_check_proof_through_kimina_rejects_native_decide_and_sorry(server):
    server.answers[snippet_code(NATIVE, "native_decide")] = _merge(composed("#print axioms ex1"))
    b = KiminaBackend(server.url)
    v = check_proof(b, NATIVE, "native_decide")
    assert v.status == "rejected" and "Lean.ofReduceBool" in v.reason
    assert check_proof(b, F, "sorry").status == "rejected"


def test_verify_sends_one_batch(server):
    server.answers[snippet_code(NATIVE, "trivial")] = {
        "messages": [{"severity": "info", "data": "'ex1' does not depend on any axioms"}],
        "env": 0,
    }
    rows = verify(
        [
            {"name": "ex1", "formal_statement": "theorem ex1 : True := by", "proof": "trivial"},
            {"name": "bad", "formal_statement": "theorem bad : False := by", "proof": "sorry"},
        ],
        KiminaBackend(server.url),
    )
    assert [r["status"] for r in rows] == ["proved", "rejected"]
    assert len(server.requests) == 1  # the screened-out proof never reaches the server


def test_api_key_goes_in_the_authorization_header(server):
    server.answers[snippet_code(NATIVE, "trivial")] = {"env": 0}
    KiminaBackend(server.url, api_key="s3cret").check(NATIVE, "trivial")
    assert server.requests[-1][2]["Authorization"] == "Bearer s3cret"


def test_an_unreachable_server_is_one_line(server):
    url = server.url
    server.close()
    with pytest.raises(BackendError, match="cannot reach the Kimina Lean Server") as e:
        KiminaBackend(url).check(NATIVE, "trivial")
    assert "\n" not in e.value.one_line()


def test_kimina_refuses_a_search():
    with pytest.raises(BackendError, match="checks whole proofs only"):
        KiminaBackend("http://127.0.0.1:1").start(NATIVE)
