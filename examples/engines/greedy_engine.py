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

Two more switches, for the mutation suite (tests/diagnose):

* ``--no-escape``: spaces are never written as ``▁`` (the dummy prefix, where one is added, is a
  space too), so each space falls back to the byte piece ``<0x20>``: the write-up's engine, whose
  ids for Gemma 3 are full of ``270 '<0x20>'``.
* ``--segment merges``: SentencePiece's merges by piece score (llama.cpp's ``llm_tokenizer_spm``)
  instead of the longest match: with ``--file-space-prefix`` and without ``--no-escape`` this is
  the engine with its bugs switched off, the twin the mutation suite expects to agree.
* ``--ties rightmost`` (with ``--segment merges``): of the adjacent pairs whose pieces have equal
  score (the same pair twice, as in "..." with the piece ".."), merge the rightmost first where
  SentencePiece and llama.cpp merge the leftmost. Not a bug but a tie: the pieces differ, their
  priorities under the model are the same (tests/diagnose/test_ties.py). Hand-written like the
  rest of this engine; no library breaks ties this way.
"""

from __future__ import annotations

import heapq
import json
import sys

from tokparity.vocab import load_vocab
from tokparity.vocab.model import TokenType, Vocab


class GreedyEngine:
    def __init__(self, vocab: Vocab, file_space_prefix: bool = False, escape: bool = True, segment: str = "greedy",
                 ties: str = "leftmost"):
        self.vocab = vocab
        self.side = -1 if ties == "rightmost" else 1  # the heap pops the smallest (score, side * position)
        self.space_prefix = vocab.flags.add_space_prefix is not False if file_space_prefix else True
        self.space = "\u2581" if escape else " "
        self.segment = segment
        self.ids = {}
        for i, t in enumerate(vocab.tokens):
            if vocab.type_of(i) in (TokenType.NORMAL, TokenType.USER_DEFINED):
                self.ids.setdefault(t, i)
        self.max_len = max(len(t) for t in self.ids)
        self.byte_ids = {int(t[3:5], 16): i for i, t in enumerate(vocab.tokens)
                         if vocab.type_of(i) == TokenType.BYTE}
        self.unk = vocab.special_ids.get("unk", 0)
        scores = vocab.scores or [0.0] * vocab.size
        self.scores = {t: scores[i] for t, i in self.ids.items()}

    def encode(self, text: str, add_special: bool = False) -> list[int]:
        s = ((self.space if self.space_prefix else "") + text.replace(" ", self.space)) if text else ""
        out = [self.vocab.special_ids["bos"]] if add_special and "bos" in self.vocab.special_ids else []
        for piece in (self.longest_match(s) if self.segment == "greedy" else self.merges(s)):
            i = self.ids.get(piece)
            if i is not None:
                out.append(i)
            else:  # no piece: byte fallback, or <unk>
                for byte in piece.encode("utf-8"):
                    out.append(self.byte_ids.get(byte, self.unk))
        return out

    def longest_match(self, s: str) -> list[str]:
        pieces, pos = [], 0
        while pos < len(s):
            for n in range(min(self.max_len, len(s) - pos), 0, -1):
                if s[pos:pos + n] in self.ids:
                    break
            else:
                n = 1  # one character no piece starts with
            pieces.append(s[pos:pos + n])
            pos += n
        return pieces

    def merges(self, s: str) -> list[str]:
        """SentencePiece BPE: start from characters and merge, again and again, the adjacent pair
        whose concatenation is the piece of highest score (the leftmost pair on a tie, or the
        rightmost with ``--ties rightmost``)."""
        pieces = list(s)
        right = list(range(1, len(s) + 1))  # index of the next live piece (len(s): none)
        left = list(range(-1, len(s) - 1))
        heap = []

        def push(i: int) -> None:
            j = right[i]
            if j < len(pieces):
                score = self.scores.get(pieces[i] + pieces[j])
                if score is not None:
                    heapq.heappush(heap, (-score, self.side * i, i, pieces[i], pieces[j]))

        for i in range(len(pieces) - 1):
            push(i)
        while heap:
            _, _, i, a, b = heapq.heappop(heap)
            j = right[i]
            if pieces[i] != a or j >= len(pieces) or pieces[j] != b:
                continue  # stale: one side has been merged since
            pieces[i], pieces[j] = a + b, ""
            right[i] = right[j]
            if right[j] < len(pieces):
                left[right[j]] = i
            if left[i] >= 0:
                push(left[i])
            push(i)
        return [p for p in pieces if p]


def main() -> None:
    args = sys.argv[2:]
    segment = args[args.index("--segment") + 1] if "--segment" in args else "greedy"
    if segment not in ("greedy", "merges"):
        raise SystemExit(f"--segment {segment!r}: greedy or merges")
    ties = args[args.index("--ties") + 1] if "--ties" in args else "leftmost"
    if ties not in ("leftmost", "rightmost"):
        raise SystemExit(f"--ties {ties!r}: leftmost or rightmost")
    engine = GreedyEngine(load_vocab(sys.argv[1]), file_space_prefix="--file-space-prefix" in args,
                          escape="--no-escape" not in args, segment=segment, ties=ties)
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
