"""A cmd: engine whose answers to one op break in one chosen way, for
tests/robustness/test_broken_answers.py.

    python broken_answers.py OP HOW TOKENIZER_JSON [TOKENIZER_CONFIG]

OP is decode, stream, pieces or chat. Every third request of that op breaks (pieces, asked once,
breaks at once). All other answers
are those of the bug-free twins of tests/engines/blind/blind22_decode.py (decode, stream, pieces,
encode) and blind22_chat.py (chat, with TOKENIZER_CONFIG). HOW says how the answer breaks:

    surrogate   a lone surrogate in the answer: the text, each delta, a piece, the chat text
    bad-utf8    the answer's line holds bytes that are not UTF-8
    wrong-type  the answer's field has the wrong JSON type: a number, a string, a list of numbers
    panic       a Rust-style panic on stderr, then exit 101, as a native engine that panics does
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "blind"))

import blind22_chat  # noqa: E402 (beside this file, found through the path above)
import blind22_decode  # noqa: E402

WRONG_TYPES = {"decode": {"text": 7}, "stream": {"deltas": "not a list"}, "pieces": {"pieces": [1, 2]},
               "chat": {"text": ["a", "list"], "ids": "12"}}


def broken(op: str, how: str, good: dict) -> dict | bytes:
    """The answer ``good`` broken in the way ``how`` says (bytes: a raw line to write as it is)."""
    if how == "wrong-type":
        return WRONG_TYPES[op]
    if how == "bad-utf8":
        return b'{"text": "\xff\xfe", "deltas": ["\xc3"], "pieces": ["\xff"], "ids": []}'
    if op == "decode":
        return {"text": good["text"] + "\udc80"}
    if op == "stream":
        return {"deltas": [d + "\udc81" for d in good["deltas"]]}
    if op == "pieces":
        return {"pieces": ["\udc82" if p is None else p for p in good["pieces"]][:-1] + ["\udc83"]}
    return {"text": "\udc84" + good.get("text", "")}  # (no ids: the ids decide where both sides give them)


def main() -> int:
    op, how, tokenizer_json = sys.argv[1:4]
    config = sys.argv[4] if len(sys.argv) > 4 else None
    decoder = blind22_decode.Engine(tokenizer_json, set(), 4)
    chat = blind22_chat.Engine(tokenizer_json, config, None, set()) if op == "chat" else None
    asked = 0
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("op") == "chat" and chat is not None:
            good = chat.chat(req)
        else:
            good = blind22_decode.answer(decoder, req)
        if req.get("op") == op:
            asked += 1
            if asked % 3 == 0 or op == "pieces":  # (pieces is asked once a run)
                if how == "panic":
                    sys.stderr.write("thread 'main' panicked at src/decode.rs:42:9:\nindex out of bounds\n")
                    return 101
                answer = broken(op, how, good)
                if isinstance(answer, bytes):
                    sys.stdout.buffer.write(answer[:1] + b'"id": %d, ' % req["id"] + answer[1:] + b"\n")
                    sys.stdout.flush()
                    continue
                good = answer
        sys.stdout.write(json.dumps({"id": req["id"], **good}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
