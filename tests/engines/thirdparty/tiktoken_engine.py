"""OpenAI's ``tiktoken`` (PyPI) as a tokparity ``cmd:`` engine, on a byte-level BPE GGUF of the zoo.

    tokparity compare gpt-2 -b 'cmd:{python} tests/engines/thirdparty/tiktoken_engine.py {gguf}'

tiktoken ships no vocabulary of its own here (its encodings download their ranks), so the engine
builds an ``Encoding`` from explicit ``mergeable_ranks``, the way tiktoken's own loaders do: each
normal token's bytes (GPT-2's byte-to-unicode map undone) with its id as its rank. That is exact
for vocabularies whose ids are their merge order (GPT-2; Llama 3 and Qwen were tiktoken
vocabularies to begin with). The split pattern is tiktoken's for the model's ``tokenizer.ggml.pre``
(r50k_base for gpt-2, Meta's Llama 3 pattern for llama-bpe), run by tiktoken's Rust regex engine.
Control tokens are tiktoken special tokens, parsed only when ``parse_special`` asks. ``decode`` is
tiktoken's ``decode``, ``pieces`` its ``decode_single_token_bytes`` for every id.

The GGUF is read with a few lines of struct (gguf-py takes ~10 s on a 128k vocabulary). It does
not import tokparity.
"""

from __future__ import annotations

import json
import struct
import sys

import tiktoken

PATTERNS = {
    # tiktoken_ext/openai_public.py, r50k_base
    "gpt-2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    # meta-llama/llama3 tokenizer.py
    "llama-bpe": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
}

_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def read_gguf_metadata(path: str, wanted: set[str]) -> dict:
    """The ``wanted`` key/value pairs of a GGUF's header (version 2 or 3, little-endian)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"GGUF":
        raise SystemExit(f"tiktoken_engine: {path} is not a GGUF file")
    pos = 8
    _tensors, kv_count = struct.unpack_from("<QQ", data, pos)
    pos += 16

    def string() -> str:
        nonlocal pos
        (n,) = struct.unpack_from("<Q", data, pos)
        pos += 8
        s = data[pos:pos + n].decode("utf-8", "surrogateescape")
        pos += n
        return s

    def value(kind: int):
        nonlocal pos
        if kind == 8:
            return string()
        if kind == 9:
            item, count = struct.unpack_from("<IQ", data, pos)
            pos += 12
            return [value(item) for _ in range(count)]
        fmt = "<" + _SCALARS[kind]
        (v,) = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return v

    out = {}
    for _ in range(kv_count):
        key = string()
        (kind,) = struct.unpack_from("<I", data, pos)
        pos += 4
        v = value(kind)
        if key in wanted:
            out[key] = v
    return out


def gpt2_byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-in for each byte, reversed (bytes_to_unicode of encoder.py)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def build_encoding(gguf_path: str) -> tiktoken.Encoding:
    meta = read_gguf_metadata(gguf_path, {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.pre"})
    pre = meta.get("tokenizer.ggml.pre", "gpt-2")
    if pre not in PATTERNS:
        raise SystemExit(f"tiktoken_engine: no tiktoken pattern for tokenizer.ggml.pre {pre!r} (known: {', '.join(PATTERNS)})")
    decoder = gpt2_byte_decoder()
    ranks: dict[bytes, int] = {}
    specials: dict[str, int] = {}
    for i, (token, kind) in enumerate(zip(meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"])):
        if kind == 1:  # normal
            ranks[bytes(decoder[c] for c in token)] = i
        elif kind in (3, 4):  # control, user-defined: tiktoken's special tokens
            specials[token] = i
    return tiktoken.Encoding(name=f"tokparity-{pre}", pat_str=PATTERNS[pre], mergeable_ranks=ranks,
                             special_tokens=specials)


def _token_hex(enc: tiktoken.Encoding, token: int) -> str | None:
    try:
        return enc.decode_single_token_bytes(token).hex()
    except KeyError:
        return None


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: tiktoken_engine.py MODEL.gguf")
    enc = build_encoding(sys.argv[1])
    for line in sys.stdin.buffer:
        req = json.loads(line)
        try:
            if req["op"] == "encode":
                allowed = "all" if req.get("parse_special") else set()
                ids = enc.encode(req["text"], allowed_special=allowed, disallowed_special=())
                reply = {"id": req["id"], "ids": ids}
            elif req["op"] == "decode":
                reply = {"id": req["id"], "text": enc.decode(req["ids"])}
            elif req["op"] == "pieces":  # tiktoken's own bytes of each id (None: an id it does not hold)
                reply = {"id": req["id"], "pieces": [_token_hex(enc, i) for i in range(enc.n_vocab)]}
            else:
                reply = {"id": req["id"], "error": f"unsupported op {req['op']!r}"}
        except Exception as e:  # report it for this request and keep serving
            reply = {"id": req.get("id"), "error": f"{type(e).__name__}: {e}"}
        sys.stdout.buffer.write(json.dumps(reply).encode() + b"\n")
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
