"""llguidance's token table (PyPI ``llguidance``, the grammar engine behind constrained decoding in
vLLM, SGLang and llama.cpp) as a tokparity ``cmd:`` engine: the bytes it believes each id stands
for, which it matches grammars against.

    tokparity compare lenml-llama2 --ops pieces -b 'llg=cmd:{python} tests/engines/thirdparty/llguidance_engine.py {tokenizer_json}'

``LLTokenizer`` is built from the model's tokenizer.json text, as ``llguidance.hf.from_tokenizer``
builds it from a fast tokenizer's ``to_str()``. ``pieces`` answers ``decode_bytes([id])`` for every
id of ``vocab_size``; ``encode`` is its ``tokenize_str`` (special-token text stays text). No
``decode``: its ``decode_str`` joins the bytes of the ids, a grammar engine's view, and keeps the
leading space a text decoder drops (it is not meant as one).
"""

from __future__ import annotations

import json
import sys

from llguidance import LLTokenizer


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        tokenizer = LLTokenizer(f.read())
    for line in sys.stdin:
        req = json.loads(line)
        reply: dict = {"id": req.get("id")}
        try:
            if req["op"] == "encode":
                reply["ids"] = tokenizer.tokenize_str(req["text"], parse_special=req["parse_special"])
            elif req["op"] == "pieces":
                reply["pieces"] = [tokenizer.decode_bytes([i]).hex() for i in range(tokenizer.vocab_size)]
            else:
                reply["error"] = f"no op {req['op']!r}"
        except Exception as e:  # one bad request is its error, not the end of the engine
            reply["error"] = f"{type(e).__name__}: {e}"
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
