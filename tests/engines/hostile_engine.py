"""A cmd: engine that breaks the protocol in one chosen way, for tests/robustness/test_hostile_engines.py.

    python hostile_engine.py MODE [FILE]

Every mode answers a text with its UTF-8 bytes as ids unless it says otherwise; the modes that
test decoding (surrogates, bad-utf8, decode-hang) take a GGUF and encode as tokparity's reference
does, so that compare --ops encode,decode asks them to decode:

    echo          the well-behaved baseline (FILE, if given, must exist: the model path it was handed)
    never-read    never reads its input: every case is a hang
    hang          reads its input, never answers (its pid written to FILE first, if given)
    fork-exit     on the first request forks a child that sleeps (its pid written to FILE), then exits 7
    fork-crash    answers one request a start; at the next forks a child that sleeps in its group, appends
                  to FILE how many zombies its parent (tokparity) has, and exits 7 (so is restarted)
    daemon        on the first request forks a child that leaves its process group (setsid) and sleeps
                  (its pid written to FILE), then answers as echo does
    daemon-unmarked  as daemon, and the child also runs on with an environment without TOKPARITY_*
    not-json      answers the first request with a line that is not JSON, then waits
    surrogates    decode answers "\\udc80" (a lone surrogate), notes and errors hold one too
    bad-utf8      decode answers bytes that are not UTF-8 inside the JSON string
    decode-hang   encodes, but hangs on decode
    huge          answers every text with 2,000,000 ids
    error         answers every text with an error ("out of memory"): it fails on every text
"""

from __future__ import annotations

import json
import os
import sys
import time


def encoder(mode: str, arg: str | None):
    """How this engine turns a text into ids."""
    if mode in ("surrogates", "bad-utf8", "decode-hang") and arg:
        from tokparity.backends.registry import make_backend
        from tokparity.zoo import resolve_model
        return make_backend("ref", resolve_model(arg)).encode
    if mode == "huge":
        return lambda text, add_special, parse_special: [1] * 2_000_000
    return lambda text, add_special, parse_special: list(text.encode("utf-8"))


def zombies_of(parent: int) -> int:
    """How many children of ``parent`` have exited and wait to be reaped."""
    count = 0
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            count += fields[0] == b"Z" and int(fields[1]) == parent
        except (OSError, IndexError, ValueError):
            continue
    return count


def reply(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> int:
    mode = sys.argv[1]
    arg = sys.argv[2] if len(sys.argv) > 2 else None
    if mode == "echo" and arg is not None and not os.path.exists(arg):
        print(f"hostile_engine: no such file {arg!r}", file=sys.stderr)
        return 3
    if mode == "never-read":
        while True:
            time.sleep(3600)
    encode = encoder(mode, arg)
    answered = 0
    for line in sys.stdin:
        req = json.loads(line)
        rid, op = req["id"], req.get("op")
        if mode == "fork-crash" and answered:
            if os.fork() == 0:  # the child: in the engine's group, killed with it, then tokparity's to reap
                time.sleep(300)
                os._exit(0)
            with open(arg, "a") as f:
                f.write(f"{zombies_of(os.getppid())}\n")
            return 7
        answered += 1
        if mode == "hang":
            if arg:
                with open(arg, "w") as f:
                    f.write(str(os.getpid()))
            while True:
                time.sleep(3600)
        if mode == "fork-exit":
            pid = os.fork()
            if pid == 0:  # the child: outlives its parent unless its group is killed
                time.sleep(300)
                os._exit(0)
            with open(arg, "w") as f:
                f.write(str(pid))
            return 7
        if mode in ("daemon", "daemon-unmarked") and arg and not os.path.exists(arg):
            pid = os.fork()
            if pid == 0:  # the child: a session of its own, out of reach of the engine's group
                os.setsid()
                if mode == "daemon-unmarked":  # (and without the engine's mark: /proc/PID/environ is the new one)
                    clean = {k: v for k, v in os.environ.items() if not k.startswith("TOKPARITY")}
                    os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)"], clean)
                time.sleep(300)
                os._exit(0)
            with open(arg, "w") as f:
                f.write(str(pid))
        if mode == "not-json":
            sys.stdout.write(f"{{'id': {rid}, 'ids': [1, 2 <- not JSON\x1b[31m\n")
            sys.stdout.flush()
            while True:
                time.sleep(3600)
        if op == "decode":
            if mode == "decode-hang":
                while True:
                    time.sleep(3600)
            if mode == "surrogates":
                reply({"id": rid, "text": "\udc80", "notes": ["a note \udc81"]})
                continue
            if mode == "bad-utf8":
                sys.stdout.buffer.write(b'{"id": %d, "text": "\xff\xfe bad"}\n' % rid)
                sys.stdout.flush()
                continue
            reply({"id": rid, "text": bytes(req["ids"]).decode("utf-8", "replace")})
            continue
        if mode == "error":
            reply({"id": rid, "error": "out of memory"})
            continue
        if mode == "surrogates" and req["text"] == "ERR":
            reply({"id": rid, "error": "no \udc82 thanks"})
            continue
        out = {"id": rid, "ids": encode(req["text"], req["add_special"], req["parse_special"])}
        if mode == "surrogates":
            out["notes"] = ["note \udc83"]
        reply(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
