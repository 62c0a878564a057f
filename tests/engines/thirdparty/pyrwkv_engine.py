"""pyrwkv-tokenizer 0.9.1 (PyPI, Rust) as a tokparity cmd: engine, called as its README says:
``RWKVTokenizer(vocab_filepath=…)``, ``.encode(text)``, ``.decode(ids)``. No fixes: a panic of the
package (pyo3's PanicException, a BaseException) is that case's failure.

    -b 'pyrwkv=cmd:{python} tests/engines/thirdparty/pyrwkv_engine.py {rwkv_vocab}'
"""
import json
import sys

import pyrwkv_tokenizer

tok = pyrwkv_tokenizer.RWKVTokenizer(vocab_filepath=sys.argv[1])

for line in sys.stdin:
    req = json.loads(line)
    reply = {"id": req["id"]}
    try:
        if req["op"] == "encode":
            reply["ids"] = tok.encode(req["text"])
        elif req["op"] == "decode" and not req.get("skip_special"):
            reply["text"] = tok.decode(req["ids"])
        else:
            reply["error"] = f"{req['op']} as asked is not in the package"  # (not tried)
    except BaseException as e:  # (a pyo3 panic is a BaseException)
        reply.update(error=repr(e), status="error")
    print(json.dumps(reply), flush=True)
