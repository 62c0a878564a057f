"""blind17 buffer engine: the real `tokenizers` library behind a fixed-size id buffer.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md). It answers `encode` and
nothing else (every other op gets an error with no status: not tried). Written on 2026-12-01 by a
helper from a bug description only, its author having read no tokparity diagnosis code.

Without `--bug` it is the bug-free twin: `tokenizers`' own `encode` on the model's
`tokenizer.json` (`encode_special_tokens = not parse_special`, `add_special_tokens = add_special`).

Each bug imitates a C binding that sizes its output id buffer from the input once. It never
grows the buffer. Ids that do not fit are dropped silently: no error, no warning. The capacity
counts every id given back, special tokens added by `add_special` included. A text whose ids fit
is unchanged; a longer encoding keeps only its first `capacity` ids.

`--bug chars-third`: the buffer holds (code points of the text) // 3 + 4 ids.
Text with few characters per token (digits, CJK, emoji, symbols) loses its tail.

`--bug bytes-quarter`: the buffer holds (UTF-8 bytes of the text) // 4 + 8 ids.
ASCII text with short tokens (digits, punctuation, spaces) loses its tail; multi-byte
text gets more room, so it loses less.

Run it:

    python tests/engines/blind/blind17_buffer.py tokenizer.json [--bug chars-third|bytes-quarter]

    tokparity compare llama-bpe -c edge -c multilingual \\
        -b "x=cmd:{python} tests/engines/blind/blind17_buffer.py {tokenizer_json} --bug chars-third"
"""
import argparse
import json
import sys

BUGS = ["chars-third", "bytes-quarter"]


def capacity(text, bug):
    """How many ids the binding's buffer holds for ``text`` (None: no limit, the twin)."""
    if bug == "chars-third":
        return len(text) // 3 + 4
    if bug == "bytes-quarter":
        return len(text.encode("utf-8", "surrogatepass")) // 4 + 8
    return None


class Engine:
    def __init__(self, path, bug):
        from tokenizers import Tokenizer
        self.bug = bug
        self.tok = Tokenizer.from_file(path)

    def encode(self, text, add_special, parse_special):
        # tokenizers matches special added tokens in the text unless told to encode them as text
        self.tok.encode_special_tokens = not parse_special
        ids = self.tok.encode(text, add_special_tokens=add_special).ids
        cap = capacity(text, self.bug)
        if cap is not None and len(ids) > cap:
            ids = ids[:cap]  # the C side wrote what fit and said nothing
        return ids

    def handle(self, req):
        op = req.get("op")
        if op == "encode":
            return {"ids": self.encode(req["text"], req.get("add_special", False), req.get("parse_special", False))}
        return {"error": f"op {op} not supported"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tokenizer_json")
    ap.add_argument("--bug", choices=BUGS)
    args = ap.parse_args()
    eng = Engine(args.tokenizer_json, args.bug)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            rep = eng.handle(req)
        except Exception as e:
            rep = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        rep["id"] = req.get("id")
        sys.stdout.write(json.dumps(rep) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
