"""An encoder on Hugging Face `tokenizers` for SentencePiece-style BPE with byte fallback, with a bug on request.

It speaks tokparity's `cmd:` protocol (docs/contracts.md): one JSON request per line on stdin,
one reply per line on stdout, in order. It answers `encode` only; any other op gets an `error`
with no status (not tried).

    python astral_blind.py TOKENIZER_JSON [--bug utf16-index]

Without `--bug` the ids are the library's own (the bug-free twin).

`--bug utf16-index`: a port of a JavaScript tokenizer that builds its piece table keyed by code
points but walks the input by UTF-16 code units. A character above U+FFFF (most emoji, skin-tone
modifiers such as U+1F3FB, CJK extension characters such as U+20000) is two code units there, so
it is never found as a piece, even when the vocabulary has one for it: it is always written as its
UTF-8 bytes, one byte piece `<0xNN>` per byte (`🙂` -> `<0xF0><0x9F><0x99><0x82>`, never `🙂`).
Pieces made only of BMP characters are found and merged as usual; special tokens, normalization
and everything else are the library's.

How: the tokenizer is loaded with every vocabulary piece that holds a character above U+FFFF taken
out of the model, together with every merge that makes or uses such a piece (the other ids are
kept as they are). The library's byte fallback then writes those characters as bytes, and BPE
merges the text on either side of them exactly as the buggy port would, unable to merge across
them. Rewriting the library's output afterwards (each piece with an astral character replaced by
the byte pieces of its text) is the same thing only when every such piece is one astral character
and no merge uses one: true of Llama 2's vocabulary (59 such pieces, all single characters, no
merge with them), but a piece mixing characters (`▁😀`) would be wrong that way: its `▁` would
become the bytes of U+2581, and the neighbours might have merged differently without it.
"""

import json
import sys

from tokenizers import Tokenizer

BUGS = ("utf16-index",)


def astral(s):
    return any(ord(c) > 0xFFFF for c in s)


def without_astral_pieces(path):
    """The tokenizer.json at `path`, its model unable to find any piece with an astral character."""
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    model = j["model"]
    if model.get("type") != "BPE" or not model.get("byte_fallback"):
        sys.exit("utf16-index needs a BPE model with byte_fallback")
    model["vocab"] = {t: i for t, i in model["vocab"].items() if not astral(t)}
    model["merges"] = [m for m in model["merges"]
                       if not astral(m if isinstance(m, str) else "".join(m))]
    return Tokenizer.from_str(json.dumps(j))


class Engine:
    def __init__(self, path, bug=None):
        self.tok = without_astral_pieces(path) if bug == "utf16-index" else Tokenizer.from_file(path)

    def encode(self, text, add_special, parse_special):
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids


def answer(engine, req):
    op = req.get("op")
    if op == "encode":
        return {"ids": engine.encode(req["text"], bool(req.get("add_special", False)),
                                     bool(req.get("parse_special", False)))}
    return {"error": f"op {op!r} is not supported"}


def main(argv):
    args = list(argv[1:])
    bug = None
    if "--bug" in args:
        j = args.index("--bug")
        bug = args[j + 1] if j + 1 < len(args) else None
        del args[j:j + 2]
        if bug not in BUGS:
            sys.exit(f"unknown --bug {bug!r}; one of {', '.join(BUGS)}")
    if len(args) != 1:
        sys.exit("usage: astral_blind.py TOKENIZER_JSON [--bug utf16-index]")
    engine = Engine(args[0], bug)
    for line in sys.stdin:
        if not line.strip():
            continue
        rid = None
        try:
            req = json.loads(line)
            rid = req.get("id")
            reply = answer(engine, req)
        except Exception as e:  # one request's failure, never the engine's
            reply = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        sys.stdout.write(json.dumps({"id": rid, **reply}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
