"""The child process of an ``IsolatedBackend`` (isolated.py): ``python -m
tokparity.backends.isolated_child SPEC`` makes the backend SPEC names, announces itself and serves
it over JSON lines on stdin / stdout until EOF.
"""

from __future__ import annotations

import json
import os
import sys

from tokparity.backends.base import Backend
from tokparity.backends.isolated import model_from_json
from tokparity.backends.registry import make_backend
from tokparity.child_python import die_with_parent
from tokparity.errors import CaseFailure, TokparityError
from tokparity.reference.decode import DecodeSettings
from tokparity.textview import message_of


def handle(backend: Backend, req: dict) -> dict:
    """One request -> one reply (without its id)."""
    op = req.get("op")
    try:
        if op == "encode":
            result = backend.encode_with_notes(req["text"], bool(req.get("add_special")),
                                               bool(req.get("parse_special")))
            reply: dict[str, object] = {"ids": [int(i) for i in result.ids]}
            if backend.unsupported:
                reply["unsupported"] = sorted(backend.unsupported)
            if result.notes:
                reply["notes"] = list(result.notes)
            return reply
        if op == "decode":
            settings = DecodeSettings(bool(req.get("skip_special")), req.get("clean_up_spaces"),
                                      bool(req.get("spaces_between_specials")), bool(req.get("remove_special")))
            if not backend.gives(settings):
                raise NotImplementedError(f"{backend.name} cannot decode with {settings.described()}")
            return {"text": backend.decode(req["ids"], settings)}
        if op == "stream":
            return {"deltas": backend.stream(req["ids"], int(req["prompt"]), DecodeSettings(bool(req.get("skip_special"))),
                                             int(req.get("step", 1)))}
        if op == "pieces":  # the public protocol's: every id's bytes, in hex
            size = getattr(backend, "n_vocab", None)
            if size is None:
                raise NotImplementedError(f"{backend.name} does not say its vocabulary's size")
            ids = list(range(size))
            return {"pieces": [None if b is None else b.hex() for b in backend.piece_bytes(ids)]}
        if op == "chat":
            from tokparity.chat.conversation import Conversation

            answer = backend.chat(Conversation.from_record(req, "the chat request"))
            if answer.raised:
                return {"raised": answer.raised}
            return {k: v for k, v in (("text", answer.text), ("ids", answer.ids)) if v is not None}
        if op == "tokens":  # each id's token text, as the vocabulary stores it
            return {"pieces": backend.pieces(req["ids"])}
        if op == "normalize":
            return {"text": backend.normalize(req["text"])}
        if op == "pre_tokenize":
            return {"pieces": backend.pre_tokenize(req["text"])}
        if op == "generation_marks":  # llama.cpp's: the ids a generation ends at, those a server hides
            marks = getattr(backend, "generation_marks", None)
            if marks is None:
                raise NotImplementedError(f"{backend.name} does not say where a generation ends")
            ends, hidden = marks()
            return {"ends": sorted(ends), "hidden": sorted(hidden)}
        if op == "version":
            return {"version": backend.version}
        return {"error": f"unknown op {op!r}", "status": "unsupported"}
    except CaseFailure as e:
        return {"error": e.detail, "status": e.status}
    except NotImplementedError as e:
        return {"error": message_of(e) or "NotImplementedError", "status": "unsupported"}
    except Exception as e:  # the backend's own error on this input: reported, the child lives on
        return {"error": f"{type(e).__name__}: {message_of(e)}", "status": "error"}


def serve(backend: Backend, requests, replies) -> None:
    """Answer JSON lines from ``requests`` (a binary file) on ``replies`` until EOF."""
    for line in requests:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            replies.write(json.dumps({"id": None, "error": f"not JSON: {e}"}).encode() + b"\n")
            replies.flush()
            continue
        reply = {"id": req.get("id"), **handle(backend, req)}
        replies.write(json.dumps(reply).encode() + b"\n")
        replies.flush()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    replies = os.fdopen(os.dup(1), "wb")  # the protocol's own stdout ...
    os.dup2(2, 1)  # ... and fd 1 now goes to stderr, for anything a library prints
    sys.stdout = sys.stderr
    try:
        spec = json.loads(argv[0])
        backend = make_backend(spec["backend"], model_from_json(spec["model"]), isolate=False, **spec["opts"])
    except TokparityError as e:
        replies.write(json.dumps({"id": 0, "error": str(e)}).encode() + b"\n")
        replies.flush()
        return 2
    stages = [s for s in ("normalize", "pre_tokenize", "stream", "piece_bytes", "chat") if backend.supports(s)]
    replies.write(json.dumps({"id": 0, "ready": True, "version": backend.version, "stages": stages,
                              "decode_switches": sorted(backend.decode_switches),
                              "loads_on_first_use": sorted(backend.loads_on_first_use)}).encode() + b"\n")
    replies.flush()
    try:
        serve(backend, sys.stdin.buffer, replies)
    finally:
        backend.close()
    return 0


if __name__ == "__main__":
    die_with_parent(os.getppid())  # (however tokparity ends, SIGKILL too, its backends' children end with it)
    sys.exit(main())
