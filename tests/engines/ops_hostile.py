"""A cmd: engine whose decoding ops misbehave on request (tests/run/test_ops.py), over the reference:

    python3 ops_hostile.py MODEL.gguf MODE

    no-ops          answers encode only: decode, stream and pieces get an error with no status
    stream-error    stream answers {"error", "status": "error"} on every request (a failure, not "no op")
    skip-leading    stream answers "status": "skipped" for a text that starts with a space
    long-table      pieces answers three times as many entries as the vocabulary has
    ahead           stream sends the whole text in the first delta (for information: not judged)
    surrogates      decode and stream write bytes that are not UTF-8 as lone surrogates (U+DC80..U+DCFF),
                    as Python's surrogateescape does
    panic           decode and stream exit (a crash) on ids whose bytes are not UTF-8
"""

from __future__ import annotations

import json
import sys

from tokparity.backends.registry import make_backend
from tokparity.zoo import resolve_model


def main() -> int:
    model = resolve_model(sys.argv[1])
    mode = sys.argv[2]
    ref = make_backend("ref", model)
    for line in sys.stdin:
        req = json.loads(line)
        op, reply = req["op"], {"id": req["id"]}
        if op == "encode":
            reply["ids"] = ref.encode(req["text"], req["add_special"], req["parse_special"])
        elif mode == "no-ops":
            reply["error"] = f"no op {op}"
        elif mode in ("surrogates", "panic") and op in ("decode", "stream"):
            raw = b"".join(ref.piece_bytes(req["ids"]))
            if mode == "panic":
                raw.decode("utf-8")  # a UnicodeDecodeError ends the engine: a panic
            text = raw.decode("utf-8", "surrogateescape")
            reply.update({"text": text} if op == "decode" else {"deltas": [text] + [""] * (len(req["ids"]) - 1)})
        elif op == "decode":
            reply["text"] = ref.decode(req["ids"])
        elif op == "stream" and mode == "stream-error":
            reply.update(error="the streamer broke", status="error")
        elif op == "stream" and mode == "skip-leading" and ref.decode(req["ids"]).startswith(" "):
            reply.update(error="no answer here", status="skipped")
        elif op == "stream":
            deltas = ref.stream(req["ids"], req["prompt"])
            reply["deltas"] = ["".join(deltas)] + [""] * (len(deltas) - 1) if mode == "ahead" else deltas
        elif op == "pieces":
            table = ref.piece_bytes(list(range(ref.vocab.size)))
            reply["pieces"] = [b.hex() for b in table] * (3 if mode == "long-table" else 1)
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
