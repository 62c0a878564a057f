"""Third-party PyPI tokenizers as tokparity ``cmd:`` engines, one per first argument:

    tokparity compare llama-bpe -b 'tokie=cmd:{python} tests/engines/thirdparty/pypi_engines.py tokie {tokenizer_json}'
    tokparity compare cl100k-tiktoken -b 'rs-bpe=cmd:{python} tests/engines/thirdparty/pypi_engines.py rs-bpe cl100k_base'
    tokparity compare mistral-v1 -b 'onmt=cmd:{python} tests/engines/thirdparty/pypi_engines.py pyonmttok {spm_model}'

- ``tokie`` (tokie 0.1.4, a Rust reimplementation of Hugging Face tokenizers' pipeline):
  ``Tokenizer.from_json(tokenizer.json)``, ``encode(text, add_special_tokens=add_special).ids``.
  It has no switch for special-token text (added tokens are always matched, as ``tokenizers``
  does by default); parse_special is ignored.
- ``rs-bpe`` (rs_bpe 0.1.0, Rust BPE with OpenAI's cl100k_base / o200k_base ranks built in):
  ``rs_bpe.bpe.openai.cl100k_base().encode(text)``; no special tokens at all, both flags ignored.
- ``pyonmttok`` (pyonmttok 1.38.1, OpenNMT Tokenizer, which runs SentencePiece models through its
  own copy of SentencePiece): ``Tokenizer("none", sp_model_path=MODEL)``; ``tokenize`` gives
  pieces, which are mapped to ids with the model's own vocabulary (pyonmttok has no id output):
  the ids come from the ``sentencepiece`` package's ``piece_to_id`` on the same file, an unknown
  piece is ``unk_id``. pyonmttok's SentencePiece is run as the OpenNMT docs show, with no
  further options; both flags are ignored.

It does not import tokparity.
"""

from __future__ import annotations

import json
import sys


def load(kind: str, arg: str):
    if kind == "tokie":
        import tokie

        tok = tokie.Tokenizer.from_json(arg)
        return (lambda text, add, _ps: tok.encode(text, add_special_tokens=add).ids), (lambda ids: tok.decode(ids))
    if kind == "rs-bpe":
        from rs_bpe.bpe import openai

        tok = getattr(openai, arg)()
        return (lambda text, _add, _ps: tok.encode(text)), (lambda ids: tok.decode(ids))
    if kind == "pyonmttok":
        import pyonmttok
        import sentencepiece

        tok = pyonmttok.Tokenizer("none", sp_model_path=arg)
        sp = sentencepiece.SentencePieceProcessor(model_file=arg)

        def encode(text, _add, _ps):
            pieces, _features = tok.tokenize(text)
            return [sp.piece_to_id(p) for p in pieces]

        return encode, (lambda ids: tok.detokenize([sp.id_to_piece(i) for i in ids]))
    sys.exit(f"pypi_engines: unknown engine {kind!r} (tokie, rs-bpe, pyonmttok)")


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: pypi_engines.py ENGINE ARG")
    encode, decode = load(sys.argv[1], sys.argv[2])
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            if req["op"] == "encode":
                reply = {"id": req["id"], "ids": list(encode(req["text"], bool(req.get("add_special")), bool(req.get("parse_special"))))}
            elif req["op"] == "decode":
                reply = {"id": req["id"], "text": decode(req["ids"])}
            else:
                reply = {"id": req["id"], "error": f"unsupported op {req['op']!r}"}
        except Exception as e:  # report it for this request and keep serving
            reply = {"id": req.get("id"), "error": f"{type(e).__name__}: {e}"}
        sys.stdout.buffer.write(json.dumps(reply).encode() + b"\n")
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
