"""A cmd: engine that misbehaves on purpose, for the crash and timeout tests.

It answers every text with its UTF-8 bytes as ids, except:

    "SEGV"       kills itself with SIGSEGV (a crash)
    "HANG"       sleeps forever (a timeout)
    "ERROR"      answers with an "error" reply (an error, the engine lives on)
    "NOISE"      prints a line that is not JSON before answering (kept as a note)
    "PID"        answers with its process id (to see restarts)
    "CHATTY"     writes 256 KB to stderr first (more than a pipe holds)
    "BYE"        answers, then exits with status 0 (gone between two requests)

Run as ``python flaky_engine.py [--die-at-start]``; with the flag it exits at once (a program
that cannot start).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def main() -> None:
    if "--die-at-start" in sys.argv:
        print("flaky_engine: told to die at start", file=sys.stderr)
        sys.exit(3)
    for line in sys.stdin:
        req = json.loads(line)
        text = req.get("text", "")
        if req.get("op") == "decode":
            reply = {"id": req["id"], "text": bytes(req["ids"]).decode("utf-8", "replace")}
        elif text == "SEGV":
            print("flaky_engine: about to segfault", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
            time.sleep(60)
        elif text == "HANG":
            while True:
                time.sleep(3600)
        elif text == "ERROR":
            reply = {"id": req["id"], "error": "ERROR is not a text this engine likes"}
        elif text == "CHATTY":
            sys.stderr.write("chatter " * 32768)
            sys.stderr.flush()
            reply = {"id": req["id"], "ids": [0]}
        elif text == "PID":
            reply = {"id": req["id"], "ids": [os.getpid()]}
        else:
            if text == "NOISE":
                sys.stdout.write("this is not JSON\n")
            ids = list(text.encode("utf-8"))
            if req.get("add_special"):
                ids = [1] + ids
            reply = {"id": req["id"], "ids": ids}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if text == "BYE":
            return


if __name__ == "__main__":
    main()
