"""A fake Lean REPL process that answers exactly as the REPL's recorded transcripts say.

Run as a subprocess by the tests (``python fake_repl.py --use readme …``). It speaks the
REPL's protocol — JSON commands separated by blank lines on stdin, each answered with the
recorded JSON text and a blank line on stdout — and finds the answer by the command itself
(its JSON, keys sorted). The transcripts are leanprover-community/repl's ``test/*.in`` and
``*.expected.out`` (see ``transcripts/README.md``); ``transcripts/composed.json`` adds the
few answers the REPL's suite does not hold, each with its source.

A command with no recorded answer ends the process with exit code 3 (a test that sends
something unexpected fails loudly). Faults for the crash tests: ``--fault KIND:TEXT`` on the
first command whose text contains TEXT — ``hang`` (never answers), ``die`` (writes half the
answer, exits), ``stall`` (writes half the answer, then nothing), ``garbage`` (answers
non-JSON), ``slow:SECONDS`` (answers late); with
``--once FILE`` the fault fires only while FILE does not exist (it is created when it fires),
so the restarted process answers normally. ``--child-pid-file`` starts a child process in the
same process group and writes its pid (to test that a kill reaches the group). ``--log FILE``
appends each command received; ``--allocate-mb N`` holds N MB (the memory-cap test).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent / "transcripts"


def blocks(text: str) -> list[str]:
    """The blank-line separated blocks of a transcript file."""
    out, cur = [], []
    for line in text.splitlines():
        if line.strip():
            cur.append(line)
        elif cur:
            out.append("\n".join(cur))
            cur = []
    if cur:
        out.append("\n".join(cur))
    return out


def key(command: dict) -> str:
    return json.dumps(command, sort_keys=True, ensure_ascii=False)


def load(names: list[str], composed: bool) -> dict[str, str]:
    table: dict[str, str] = {}
    for name in names:
        if not (HERE / f"{name}.in").exists():
            continue  # a name of composed.json only
        ins = blocks((HERE / f"{name}.in").read_text(encoding="utf-8"))
        outs = blocks((HERE / f"{name}.expected.out").read_text(encoding="utf-8"))
        assert len(ins) == len(outs), name
        for i, o in zip(ins, outs):
            table.setdefault(key(json.loads(i)), o)
    if composed:
        for entry in json.loads((HERE / "composed.json").read_text(encoding="utf-8")):
            if entry["use"] in names:
                table.setdefault(key(entry["in"]), json.dumps(entry["out"], ensure_ascii=False))
    return table


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--use", action="append", default=[])
    p.add_argument("--no-composed", action="store_true")
    p.add_argument("--fault", default=None)
    p.add_argument("--once", default=None)
    p.add_argument("--log", default=None)
    p.add_argument("--child-pid-file", default=None)
    p.add_argument("--allocate-mb", type=int, default=0)
    args = p.parse_args()
    table = load(args.use, not args.no_composed)
    _ballast = bytearray(args.allocate_mb * 1024 * 1024)  # for the memory-cap test
    if args.child_pid_file:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        Path(args.child_pid_file).write_text(str(child.pid))
    kind, _, rest = (args.fault or "").partition(":")
    seconds = 0.0
    if kind == "slow":
        s, _, rest = rest.partition(":")
        seconds = float(s)
    buf: list[str] = []

    def answer(raw: str) -> None:
        if args.log:
            with open(args.log, "a", encoding="utf-8") as f:
                f.write(raw.replace("\n", " ") + "\n")
        reply = table.get(key(json.loads(raw)))
        if reply is None:
            sys.stderr.write(f"fake repl: no recorded answer for {raw!r}\n")
            sys.exit(3)
        fire = kind and rest in raw and not (args.once and os.path.exists(args.once))
        if fire and args.once:
            Path(args.once).write_text("fired")
        if fire and kind == "hang":
            time.sleep(600)
        if fire and kind == "die":
            sys.stdout.write(reply[: len(reply) // 2])
            sys.stdout.flush()
            os._exit(1)
        if fire and kind == "stall":
            sys.stdout.write(reply[: len(reply) // 2])
            sys.stdout.flush()
            time.sleep(600)
        if fire and kind == "garbage":
            reply = "uncaught exception: this is not JSON"
        if fire and kind == "slow":
            time.sleep(seconds)
        sys.stdout.write(reply + "\n\n")
        sys.stdout.flush()

    for line in sys.stdin:
        if line.strip():
            buf.append(line)
        elif buf:
            answer("".join(buf))
            buf = []
    if buf:
        answer("".join(buf))


if __name__ == "__main__":
    main()
