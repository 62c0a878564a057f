"""llama.cpp (llama-cpp-python) with one flag forced or one GGUF key overridden, as a ``cmd:`` engine.

An engine built on llama.cpp that passes the wrong flag, or a GGUF whose converter wrote one
metadata key wrong, has exactly one bug; llama.cpp does everything else right:

    --parse-special always     special-token text in the input is parsed even when not asked
    --add-special always       BOS/EOS added even when not asked
    --bos twice                add_special passed on *and* a BOS put in front by the engine
                               (the double-BOS of llama.cpp PR #7332)
    --kv KEY=VALUE             a GGUF metadata key overridden at load (llama.cpp's kv_overrides):
                               true/false for booleans, an integer for ids, else a string
                               (``tokenizer.ggml.add_eos_token=true``, ``tokenizer.ggml.unknown_token_id=2``,
                               ``general.name=phi``)
    --unicode NFC|NFD|NFKC     Python's unicodedata applied to the text first
    --as-space U+200D,U+200C   these code points written as a space first (a port whose own
                               normalizer maps ZWJ/ZWNJ, or tabs, to spaces)
    --prefix-once              the GGUF's add_space_prefix overridden to false, and the engine puts
                               one space in front of the whole text itself (unless the text starts
                               with a special token it parses): the dummy prefix at the start only,
                               never again after a special token (Metaspace ``prepend_scheme:
                               first``), where llama.cpp adds it after every one

With no flag llama.cpp runs as it is (the bug-free twin).

    python llamacpp_engine.py MODEL.gguf --parse-special always
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
import unicodedata

import llama_cpp


def kv_overrides(settings: list[str]):
    """The ``llama_model_kv_override`` array llama.cpp reads at load (as ``llama_cpp.Llama`` builds it)."""
    array = (llama_cpp.llama_model_kv_override * (len(settings) + 1))()
    for slot, setting in zip(array, settings):
        key, _, value = setting.partition("=")
        slot.key = key.encode()
        if value in ("true", "false"):
            slot.tag = llama_cpp.LLAMA_KV_OVERRIDE_TYPE_BOOL
            slot.value.val_bool = value == "true"
        elif value.lstrip("-").isdigit():
            slot.tag = llama_cpp.LLAMA_KV_OVERRIDE_TYPE_INT
            slot.value.val_i64 = int(value)
        else:  # a string, NUL-padded into the 128-byte field
            slot.tag = llama_cpp.LLAMA_KV_OVERRIDE_TYPE_STR
            field = llama_cpp.llama_model_kv_override_value.val_str
            ctypes.memmove(ctypes.addressof(slot.value) + field.offset, value.encode().ljust(128, b"\0")[:127], 127)
    array[-1].key = b"\0"
    return array


class Engine:
    def __init__(self, path: str, overrides: list[str]):
        llama_cpp.llama_backend_init()
        llama_cpp.llama_log_set(_QUIET, ctypes.c_void_p(0))
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        if overrides:
            self._overrides = kv_overrides(overrides)  # must outlive the load
            params.kv_overrides = self._overrides
        self.model = llama_cpp.llama_model_load_from_file(path.encode(), params)
        if not self.model:
            raise SystemExit(f"llama.cpp could not load {path}")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.bos = llama_cpp.llama_vocab_bos(self.vocab)
        self.buf = (llama_cpp.llama_token * 65536)()
        n = llama_cpp.llama_vocab_n_tokens(self.vocab)
        # The tokens llama.cpp cuts out of the text: control and unknown ones with parse_special,
        # user-defined ones always.
        special = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
        attrs = [llama_cpp.llama_vocab_get_attr(self.vocab, i) for i in range(n)]
        self.specials = tuple(self.piece(i) for i in range(n) if attrs[i] & special and self.piece(i))
        self.user_defined = tuple(self.piece(i) for i in range(n)
                                  if attrs[i] & llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED and self.piece(i))

    def starts_with_token(self, text: str, parse_special: bool) -> bool:
        return text.startswith(self.user_defined) or (parse_special and text.startswith(self.specials))

    def piece(self, i: int) -> str:
        text = llama_cpp.llama_vocab_get_text(self.vocab, i)
        return text.decode("utf-8", "replace") if text else ""

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        data = text.encode("utf-8")
        n = llama_cpp.llama_tokenize(self.vocab, data, len(data), self.buf, len(self.buf), add_special, parse_special)
        if n < 0:
            raise RuntimeError(f"more than {len(self.buf)} tokens")
        return self.buf[:n]


_QUIET = llama_cpp.llama_log_callback(lambda level, text, user_data: None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("gguf")
    parser.add_argument("--parse-special", choices=("asked", "always"), default="asked")
    parser.add_argument("--add-special", choices=("asked", "always"), default="asked")
    parser.add_argument("--bos", choices=("once", "twice"), default="once")
    parser.add_argument("--kv", action="append", default=[])
    parser.add_argument("--unicode", choices=("NFC", "NFD", "NFKC"))
    parser.add_argument("--prefix-once", action="store_true")
    parser.add_argument("--as-space", default="")
    args = parser.parse_args()
    overrides = list(args.kv) + (["tokenizer.ggml.add_space_prefix=false"] if args.prefix_once else [])
    engine = Engine(args.gguf, overrides)
    as_space = {int(u[2:], 16): " " for u in args.as_space.split(",") if u}
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("op") != "encode":
            reply = {"id": req["id"], "error": f"op {req.get('op')!r} not supported"}
        else:
            text = unicodedata.normalize(args.unicode, req["text"]) if args.unicode else req["text"]
            text = text.translate(as_space)
            add_special = req.get("add_special", False) or args.add_special == "always"
            parse_special = req.get("parse_special", False) or args.parse_special == "always"
            if args.prefix_once and text and not engine.starts_with_token(text, parse_special):
                text = " " + text
            ids = engine.encode(text, add_special, parse_special)
            if args.bos == "twice" and add_special:
                ids = [engine.bos] + ids
            reply = {"id": req["id"], "ids": ids}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
