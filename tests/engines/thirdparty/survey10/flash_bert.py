"""flash-tokenizer 1.2.0 (PyPI; FlashBertTokenizer, a C++ BERT tokenizer: its own basic tokenizer,
accent table and WordPiece) as a tokparity cmd: engine. No fixes.

    -b 'flash=cmd:VENV/bin/python tests/engines/thirdparty/survey10/flash_bert.py core {gguf}'
    -b 'flash-call=cmd:VENV/bin/python tests/engines/thirdparty/survey10/flash_bert.py call {gguf}'

The package reads a BERT ``vocab.txt``. A zoo WPM model (bert-bge) keeps its vocabulary in a GGUF,
spelt as llama.cpp's converter spells it: a word-initial piece with a leading ``▁``, a
continuation piece without its ``##``, ``[...]`` specials as they are. The engine writes the
``vocab.txt`` back from it (``▁x`` -> ``x``, ``x`` -> ``##x``), with the ``gguf`` package.
``BertTokenizerFlash(vocab, do_lower_case=True, model_max_length=-1)`` (bge is uncased).

- ``core``: ``tok.tokenizer.encode(text, "longest", 2**31 - 1)`` (the C++ ``encode``: ``[CLS]`` ids
  ``[SEP]``, no truncation at that length); with add_special off, ``[CLS]``/``[SEP]`` are cut off
  as the package's own ``tokenize()`` cuts them (``bert_tokenizer.h``, ids 1..n-1).
- ``call``: ``tok(text, padding="longest", max_length=2**31 - 1, add_special_tokens=add_special)``
  ``.input_ids[0]``, the README's call.
parse_special is ignored (the package has no switch).
"""
import json
import os
import sys
import tempfile

from flash_tokenizer import BertTokenizerFlash
from gguf import GGUFReader

mode, path = sys.argv[1], sys.argv[2]
reader = GGUFReader(path)
f = reader.fields["tokenizer.ggml.tokens"]
tokens = [bytes(f.parts[i]).decode("utf-8") for i in f.data]


def bert_spelling(t):
    if t.startswith("[") and t.endswith("]"):
        return t
    return t[1:] if t.startswith("\u2581") else "##" + t


folder = tempfile.mkdtemp()
vocab = os.path.join(folder, "vocab.txt")
with open(vocab, "w", encoding="utf-8") as out:
    out.write("".join(bert_spelling(t) + "\n" for t in tokens))
tok = BertTokenizerFlash(vocab, do_lower_case=True, model_max_length=-1)
BIG = 2**31 - 1

for line in sys.stdin:
    req = json.loads(line)
    reply = {"id": req["id"]}
    try:
        if req["op"] == "encode":
            if mode == "call":
                reply["ids"] = [int(i) for i in tok(req["text"], padding="longest", max_length=BIG,
                                                    add_special_tokens=req["add_special"]).input_ids[0]]
            else:
                ids = list(tok.tokenizer.encode(req["text"], "longest", BIG))
                reply["ids"] = ids if req["add_special"] else ids[1:-1]
        else:
            reply.update(error=f"{req['op']} is not in the package", status="skipped")
    except Exception as e:
        reply.update(error=repr(e), status="error")
    print(json.dumps(reply), flush=True)
