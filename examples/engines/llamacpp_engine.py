"""A tokparity engine around llama-cpp-python: the JSON-lines protocol in ~60 lines.

    tokparity encode llama-spm "Hello world" -b llama.cpp -b 'cmd:python3 examples/engines/llamacpp_engine.py {gguf}'

It reads one JSON request per line on stdin and writes one reply per line on stdout (flushed):

    -> {"id": 1, "op": "encode", "text": "Hello world", "add_special": false, "parse_special": false}
    <- {"id": 1, "ids": [15043, 3186]}
    -> {"id": 2, "op": "decode", "ids": [15043, 3186]}
    <- {"id": 2, "text": "Hello world"}

Anything it cannot answer gets ``{"id": ..., "error": "..."}``. Logs go to stderr, never stdout.
Copy it and put your own engine where llama.cpp is. With ``--timing`` each reply also carries
``engine_seconds``, the time spent in the tokenizer call itself (benchmarks/bench_backends.py
counts everything else, JSON included, as the protocol's cost).
It does not import tokparity.
"""

from __future__ import annotations

import ctypes
import json
import sys
import time

import llama_cpp

_silence = llama_cpp.llama_log_callback(lambda level, text, user_data: None)  # keep a reference


class Engine:
    def __init__(self, gguf_path: str):
        llama_cpp.llama_log_set(_silence, ctypes.c_void_p(0))
        llama_cpp.llama_backend_init()
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self.model = llama_cpp.llama_model_load_from_file(gguf_path.encode(), params)
        if not self.model:
            sys.exit(f"llamacpp_engine: llama.cpp could not load {gguf_path}")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.tokens = (llama_cpp.llama_token * 4096)()
        self.text = ctypes.create_string_buffer(4096)

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        data = text.encode("utf-8")
        while True:  # a negative count is the buffer size llama.cpp needs
            n = llama_cpp.llama_tokenize(self.vocab, data, len(data), self.tokens, len(self.tokens),
                                         add_special, parse_special)
            if n >= 0:
                return self.tokens[:n]
            self.tokens = (llama_cpp.llama_token * -n)()

    def decode(self, ids: list[int]) -> str:
        arr = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
        while True:
            n = llama_cpp.llama_detokenize(self.vocab, arr, len(ids), self.text, len(self.text), False, True)
            if n >= 0:
                return self.text.raw[:n].decode("utf-8", "replace")
            self.text = ctypes.create_string_buffer(-n)


def main() -> None:
    timing = "--timing" in sys.argv
    paths = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(paths) != 1:
        sys.exit("usage: llamacpp_engine.py MODEL.gguf [--timing]")
    engine = Engine(paths[0])
    for line in sys.stdin.buffer:  # bytes: json.loads takes UTF-8 as it comes, no text layer
        req = json.loads(line)
        start = time.perf_counter()
        try:
            if req["op"] == "encode":
                reply = {"id": req["id"], "ids": engine.encode(req["text"], req["add_special"], req["parse_special"])}
            elif req["op"] == "decode":
                reply = {"id": req["id"], "text": engine.decode(req["ids"])}
            else:
                reply = {"id": req["id"], "error": f"unsupported op {req['op']!r}"}
        except Exception as e:  # report it for this request and keep serving
            reply = {"id": req.get("id"), "error": f"{type(e).__name__}: {e}"}
        if timing:
            reply["engine_seconds"] = time.perf_counter() - start
        sys.stdout.buffer.write(json.dumps(reply).encode() + b"\n")
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
