"""A cmd: engine on llama-cpp-python that encodes, decodes and streams as llama.cpp's server does,
with one bug on request (tests/run/test_ops.py):

    --bug latin1    a piece's bytes sent as Latin-1 characters, not held back (mlx-examples #808)
    --bug replace   every piece sent at once, a split character as U+FFFD (llama.cpp #4036)
    --bug prompt    the first delta also holds the prompt's text (vLLM #48853)
    --bug specials  special tokens written as their text even when the request says "skip_special"
    --bug last-of-step  fed several ids a step ("step": k), sends the text of the step's last id only
    --bug hold-all  every delta "" but the last, which sends the whole text (decoded once, at the end)
    --bug keeps-bos decode ignores the request's "remove_special": the BOS llama.cpp would take off is kept

    --always-parse-special   special-token text parsed whatever the request says (several JavaScript
                             and wasm tokenizers have no switch); --declare says so in its replies
                             ("unsupported": ["parse_special=false"])

    python3 stream_engine.py MODEL.gguf [--bug NAME] [--always-parse-special [--declare]]
"""

from __future__ import annotations

import argparse
import codecs
import ctypes
import json
import sys

import llama_cpp


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("gguf")
    p.add_argument("--bug", choices=["latin1", "replace", "prompt", "specials", "last-of-step", "hold-all",
                                          "keeps-bos"])
    p.add_argument("--always-parse-special", action="store_true")
    p.add_argument("--declare", action="store_true")
    args = p.parse_args()
    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(args.gguf.encode(), params)
    vocab = llama_cpp.llama_model_get_vocab(model)
    buf = ctypes.create_string_buffer(1 << 16)

    def piece(i: int, special: bool = True) -> bytes:
        n = llama_cpp.llama_token_to_piece(vocab, i, buf, len(buf), 0, special)
        return buf.raw[:n]

    def encode(text: str, add_special: bool, parse_special: bool) -> list[int]:
        data = text.encode("utf-8")
        out = (llama_cpp.llama_token * (len(data) + 8))()
        n = llama_cpp.llama_tokenize(vocab, data, len(data), out, len(out), add_special, parse_special)
        return list(out[:n])

    def decode(ids: list[int], special: bool = True, remove_special: bool = False) -> str:
        out = ctypes.create_string_buffer(1 << 20)
        arr = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
        n = llama_cpp.llama_detokenize(vocab, arr, len(ids), out, len(out), remove_special, special)
        return out.raw[:n].decode("utf-8", "replace")

    def stream(ids: list[int], prompt: int, special: bool = True) -> list[str]:
        if args.bug == "latin1":
            return [piece(i, special).decode("latin-1") for i in ids[prompt:]]
        if args.bug == "replace":
            return [piece(i, special).decode("utf-8", "replace") for i in ids[prompt:]]
        held = codecs.getincrementaldecoder("utf-8")("replace")
        held.decode(b"".join(piece(i, special) for i in ids[:prompt]))  # a character the prompt began
        deltas = [held.decode(piece(i, special)) for i in ids[prompt:]]
        if args.bug == "prompt" and deltas:
            deltas[0] = decode(ids[:prompt], special) + deltas[0]
        if args.bug == "hold-all" and deltas:
            deltas = [""] * (len(deltas) - 1) + ["".join(deltas)]
        return deltas

    for line in sys.stdin:
        req = json.loads(line)
        op, reply = req.get("op"), {"id": req.get("id")}
        if op == "encode":
            reply["ids"] = encode(req["text"], req.get("add_special", False),
                                  req.get("parse_special", False) or args.always_parse_special)
            if args.declare:
                reply["unsupported"] = ["parse_special=false"]
        elif op in ("decode", "stream"):
            special = not req.get("skip_special") or args.bug == "specials"
            if op == "decode":
                reply["text"] = decode(req["ids"], special, bool(req.get("remove_special")) and args.bug != "keeps-bos")
            else:
                step = int(req.get("step", 1))
                deltas = stream(req["ids"], req["prompt"], special)
                steps = [deltas[k:k + step] for k in range(0, len(deltas), step)]
                reply["deltas"] = [part[-1] if args.bug == "last-of-step" else "".join(part) for part in steps]
        else:
            reply["error"] = f"no op {op!r}"
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
