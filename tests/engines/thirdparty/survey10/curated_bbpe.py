"""curated-tokenizers 2.0.1 (PyPI; Explosion's C++/Cython piece tokenizers) ``ByteBPEProcessor`` as a
tokparity cmd: engine, called as its README and tests do: ``ByteBPEProcessor(vocab, merges)``,
``encode_as_ids(text)``, ``decode_from_ids(ids)``. No fixes.

The processor takes a ``vocab`` dict and a ``merges`` list (what ``load_from_files`` reads from a
GPT-2 ``vocab.json`` / ``merges.txt``). A zoo model such as gpt-2 keeps them in its GGUF
(``tokenizer.ggml.tokens`` / ``tokenizer.ggml.merges``), read here with the ``gguf`` package.
The package has no special-token handling and no BOS: both flags are ignored.

    -b 'curated=cmd:VENV/bin/python tests/engines/thirdparty/survey10/curated_bbpe.py {gguf}'
"""
import json
import sys

from curated_tokenizers import ByteBPEProcessor
from gguf import GGUFReader


def field_strings(reader, key):
    f = reader.fields[key]
    return [bytes(f.parts[i]).decode("utf-8") for i in f.data]


reader = GGUFReader(sys.argv[1])
tokens = field_strings(reader, "tokenizer.ggml.tokens")
merges = [m.split(" ", 1) for m in field_strings(reader, "tokenizer.ggml.merges")]
vocab = {t: i for i, t in enumerate(tokens)}
tok = ByteBPEProcessor(vocab, merges)

for line in sys.stdin:
    req = json.loads(line)
    reply = {"id": req["id"]}
    try:
        if req["op"] == "encode":
            reply["ids"] = tok.encode_as_ids(req["text"])
        elif req["op"] == "decode" and not req.get("skip_special"):
            reply["text"] = tok.decode_from_ids(req["ids"])
        else:
            reply.update(error=f"{req['op']} as asked is not in the package", status="skipped")
    except Exception as e:
        reply.update(error=repr(e), status="error")
    print(json.dumps(reply), flush=True)
