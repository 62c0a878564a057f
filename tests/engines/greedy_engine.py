"""A deliberately wrong tokenizer: greedy longest-match over a SentencePiece-style vocabulary.

This is the bug of the Gemma 3 write-up: an engine that takes, at every position, the longest
vocabulary piece that matches, instead of SentencePiece's score-ordered merges. It produces
valid pieces that decode to the right text, and the wrong ids.

Importable (``GreedyEngine(vocab).encode(text)``) and runnable as a ``cmd:`` engine speaking
tokparity's JSON-lines protocol:  ``python greedy_engine.py MODEL_FILE [--file-space-prefix]``.

By default it always prepends ``▁`` (SentencePiece's dummy prefix), as the write-up's engine did
on Gemma 3, whose file says ``add_space_prefix=false``: a second bug on top of the greedy one.
``--file-space-prefix`` follows the file's flag instead, leaving only the greedy bug
(docs/gemma3.md runs both).
"""

from __future__ import annotations

import json
import sys

from tokparity.vocab import load_vocab
from tokparity.vocab.model import TokenType, Vocab


class GreedyEngine:
    def __init__(self, vocab: Vocab, file_space_prefix: bool = False):
        self.vocab = vocab
        self.space_prefix = vocab.flags.add_space_prefix is not False if file_space_prefix else True
        self.ids = {}
        for i, t in enumerate(vocab.tokens):
            if vocab.type_of(i) in (TokenType.NORMAL, TokenType.USER_DEFINED):
                self.ids.setdefault(t, i)
        self.max_len = max(len(t) for t in self.ids)
        self.byte_ids = {int(t[3:5], 16): i for i, t in enumerate(vocab.tokens)
                         if vocab.type_of(i) == TokenType.BYTE}
        self.unk = vocab.special_ids.get("unk", 0)

    def encode(self, text: str, add_special: bool = False) -> list[int]:
        s = ("\u2581" if self.space_prefix else "") + text.replace(" ", "\u2581") if text else ""
        out = [self.vocab.special_ids["bos"]] if add_special and "bos" in self.vocab.special_ids else []
        pos = 0
        while pos < len(s):
            for n in range(min(self.max_len, len(s) - pos), 0, -1):
                i = self.ids.get(s[pos:pos + n])
                if i is not None:
                    out.append(i)
                    pos += n
                    break
            else:  # no piece: byte fallback, or <unk>
                for byte in s[pos].encode("utf-8"):
                    out.append(self.byte_ids.get(byte, self.unk))
                pos += 1
        return out


def main() -> None:
    engine = GreedyEngine(load_vocab(sys.argv[1]), file_space_prefix="--file-space-prefix" in sys.argv[2:])
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("op") == "encode":
            reply = {"id": req["id"], "ids": engine.encode(req["text"], req.get("add_special", False))}
        else:
            reply = {"id": req["id"], "error": f"op {req.get('op')!r} not supported"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
