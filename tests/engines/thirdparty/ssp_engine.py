"""simple-sentencepiece 0.14 (PyPI, C++) as a tokparity cmd: engine, called as its README says:
``Ssentencepiece(vocab)``, ``.encode(text)``, ``.decode(ids)``. No fixes.

Its C++ processor reads a ``.vocab`` file, one ``piece<TAB>score`` a line, as SentencePiece's trainer
writes it beside the ``.model``. A zoo model keeps only the ``.model``, so the engine writes that
file from it first, with sentencepiece's own reading of the model.

    -b 'ssp=cmd:{python} tests/engines/thirdparty/ssp_engine.py {spm_model}'
"""
import json
import sys
import tempfile
from pathlib import Path

import sentencepiece
import ssentencepiece

model = sentencepiece.SentencePieceProcessor(model_file=sys.argv[1])
folder = tempfile.TemporaryDirectory()
vocab = Path(folder.name) / "model.vocab"
vocab.write_text("".join(f"{model.id_to_piece(i)}\t{model.get_score(i)}\n" for i in range(model.get_piece_size())),
                 "utf-8")
tok = ssentencepiece.Ssentencepiece(str(vocab), num_threads=1)

for line in sys.stdin:
    req = json.loads(line)
    reply = {"id": req["id"]}
    try:
        if req["op"] == "encode":
            reply["ids"] = tok.encode(req["text"])
        elif req["op"] == "decode" and not req.get("skip_special"):
            reply["text"] = tok.decode(req["ids"]) if req["ids"] else ""
        else:
            reply.update(error=f"{req['op']} as asked is not in the package", status="skipped")
    except Exception as e:
        reply.update(error=repr(e), status="error")
    print(json.dumps(reply), flush=True)
