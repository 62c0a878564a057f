"""A deliberately buggy SentencePiece-style engine: greedy longest match over a GGUF vocabulary.

Written for tokparity's test suite from bug descriptions only (see README.md beside it).

    python spm_greedy.py MODEL.gguf [--no-escape] [--no-prefix] [--ignore-user-defined]

It speaks tokparity's ``cmd:`` protocol: one JSON request per line on stdin, one JSON reply per
line on stdout, in order, flushed after each.

The base bug, always on
-----------------------
SentencePiece's BPE model (and llama.cpp's ``llm_tokenizer_spm``) starts from single characters
and merges adjacent pairs in order of the merged piece's score. This engine instead walks the
text left to right and takes, at each position, the *longest* vocabulary piece that starts
there. It is the first thing a writer who sees "a vocabulary of pieces" tends to write, and it
looks right: every piece exists and the pieces concatenate back to the text. Only the ids differ,
wherever the highest-scoring segmentation is not the greedy one (``▁▁!`` → ``▁▁`` ``!`` instead of
``▁`` ``▁!``).

Everything else follows the file, unless a flag switches it off:

* spaces are escaped to ``▁`` (U+2581) and, when the file's ``add_space_prefix`` is true or
  absent (SentencePiece's default), one is put in front of the text (the "dummy prefix");
* only NORMAL pieces take part in the longest match; USER_DEFINED pieces are cut out of the
  normalized text first (the longest at each position), as SentencePiece and Hugging Face
  match them whole; their own spaces are escaped like the text's, so Gemma 3's piece of two
  spaces matches both ``"  "`` and ``"▁▁"`` (as Hugging Face's normalized added tokens do);
* a character no piece starts with becomes the ``<0xNN>`` byte pieces of its UTF-8 bytes, or
  ``<unk>`` when the vocabulary has no byte pieces;
* control tokens (``<s>``, ``<start_of_turn>``) are never parsed from the text, whatever
  ``parse_special`` says: their text is tokenized like any other text;
* ``add_special`` adds BOS when the file says ``add_bos`` (and EOS when it says ``add_eos``).

The flags (each one a bug of its own, on top of the greedy one)
----------------------------------------------------------------
``--no-escape``
    Spaces are never replaced by ``▁``. A writer who reads "pieces start with ▁" as a display
    convention, or who forgets the normalizer step, feeds raw spaces to the model; no NORMAL
    piece holds a plain space, so each one falls back to the byte piece ``<0x20>`` (the dummy
    prefix, being a space, too). Gemma 3's user-defined runs of two or more plain spaces still
    match whole.
``--no-prefix``
    The dummy prefix is never added, whatever the file says. The leading ``▁`` is easy to miss:
    it is an option of the normalizer (``add_dummy_prefix``), not something visible in the text.
``--ignore-user-defined``
    USER_DEFINED pieces are dropped when the vocabulary is loaded, as if they were not in it. A
    writer who keeps only "normal" pieces (and filters out every other type as special) loses
    them: Gemma 3's ``\\n``, ``\\n\\n`` … then come out as byte pieces, its runs of plain
    spaces as ``▁`` pieces, its ``<table>`` / ``<h1>`` … user pieces as several small pieces.
"""

from __future__ import annotations

import argparse
import json
import sys

from tokparity.vocab import load_vocab
from tokparity.vocab.model import TokenType

SPACE_SYMBOL = "\u2581"


class SpmGreedy:
    def __init__(self, path: str, escape: bool = True, prefix: bool = True, user_defined: bool = True):
        vocab = load_vocab(path)
        self.vocab = vocab
        self.escape = escape
        # SentencePiece adds the dummy prefix unless the model says not to; a file that does not
        # say (llama-spm's GGUF) gets SentencePiece's default, true.
        self.prefix = prefix and vocab.flags.add_space_prefix is not False

        self.normal: dict[str, int] = {}        # piece -> id (the first id of a duplicated piece)
        self.user: dict[str, int] = {}
        self.byte_ids: dict[int, int] = {}
        for i, piece in enumerate(vocab.tokens):
            kind = vocab.type_of(i)
            if kind == TokenType.NORMAL:
                self.normal.setdefault(piece, i)
            elif kind == TokenType.USER_DEFINED and user_defined:
                # Matched in the normalized text, so spelled as the normalizer spells text:
                # Gemma 3's user piece of two spaces matches "  " and "▁▁" alike.
                self.user.setdefault(piece.replace(" ", SPACE_SYMBOL) if escape else piece, i)
            elif kind == TokenType.BYTE and len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
                self.byte_ids[int(piece[3:5], 16)] = i
        # For each first character, the longest piece starting with it: bounds the search.
        self.normal_max = self._max_len_by_first_char(self.normal)
        self.user_max = self._max_len_by_first_char(self.user)
        self.unk = vocab.special_ids.get("unk", 0)
        self.id_to_piece = vocab.tokens

    @staticmethod
    def _max_len_by_first_char(pieces: dict[str, int]) -> dict[str, int]:
        longest: dict[str, int] = {}
        for piece in pieces:
            if piece and len(piece) > longest.get(piece[0], 0):
                longest[piece[0]] = len(piece)
        return longest

    # -- encoding --------------------------------------------------------------------------------

    def encode(self, text: str, add_special: bool) -> list[int]:
        ids: list[int] = []
        if add_special and self.vocab.flags.add_bos and "bos" in self.vocab.special_ids:
            ids.append(self.vocab.special_ids["bos"])
        if text:
            if self.prefix:
                text = " " + text
            if self.escape:
                text = text.replace(" ", SPACE_SYMBOL)
            for chunk, piece_id in self._split_user_defined(text):
                if piece_id is not None:
                    ids.append(piece_id)
                else:
                    ids.extend(self._greedy(chunk))
        if add_special and self.vocab.flags.add_eos and "eos" in self.vocab.special_ids:
            ids.append(self.vocab.special_ids["eos"])
        return ids

    def _split_user_defined(self, text: str):
        """Yield (text, None) chunks and (piece, id) for each USER_DEFINED piece, longest first."""
        if not self.user:
            if text:
                yield text, None
            return
        start = pos = 0
        while pos < len(text):
            longest = self.user_max.get(text[pos], 0)
            for n in range(min(longest, len(text) - pos), 0, -1):
                piece_id = self.user.get(text[pos:pos + n])
                if piece_id is not None:
                    if start < pos:
                        yield text[start:pos], None
                    yield text[pos:pos + n], piece_id
                    pos += n
                    start = pos
                    break
            else:
                pos += 1
        if start < len(text):
            yield text[start:], None

    def _greedy(self, text: str) -> list[int]:
        """The base bug: the longest NORMAL piece at each position, left to right."""
        ids: list[int] = []
        pos = 0
        while pos < len(text):
            longest = self.normal_max.get(text[pos], 0)
            for n in range(min(longest, len(text) - pos), 0, -1):
                piece_id = self.normal.get(text[pos:pos + n])
                if piece_id is not None:
                    ids.append(piece_id)
                    pos += n
                    break
            else:  # no piece starts with this character: its bytes, or <unk>
                ids.extend(self._fallback(text[pos]))
                pos += 1
        return ids

    def _fallback(self, char: str) -> list[int]:
        if not self.byte_ids:
            return [self.unk]
        return [self.byte_ids.get(b, self.unk) for b in char.encode("utf-8", "surrogatepass")]

    # -- decoding --------------------------------------------------------------------------------

    def decode(self, ids: list[int]) -> str:
        out = bytearray()
        for i in ids:
            if not 0 <= i < len(self.id_to_piece):
                raise ValueError(f"id {i} is outside the vocabulary")
            kind = self.vocab.type_of(i)
            piece = self.id_to_piece[i]
            if kind == TokenType.BYTE:
                out.append(int(piece[3:5], 16))
            elif kind in (TokenType.CONTROL, TokenType.UNKNOWN, TokenType.UNUSED):
                continue
            else:
                out += piece.replace(SPACE_SYMBOL, " ").encode("utf-8", "surrogatepass")
        text = out.decode("utf-8", "replace")
        if self.prefix and text.startswith(" "):
            text = text[1:]
        return text


def serve(engine: SpmGreedy) -> None:
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            reply = {"id": None, "error": f"not JSON: {e}"}
        else:
            rid = req.get("id") if isinstance(req, dict) else None
            try:
                op = req.get("op")
                if op == "encode":
                    reply = {"id": rid, "ids": engine.encode(req["text"], bool(req.get("add_special")))}
                elif op == "decode":
                    reply = {"id": rid, "text": engine.decode([int(i) for i in req["ids"]])}
                else:
                    reply = {"id": rid, "error": f"unknown op {op!r}"}
            except Exception as e:  # one bad request must not end the engine
                reply = {"id": rid, "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gguf")
    ap.add_argument("--no-escape", action="store_true", help="never write spaces as U+2581")
    ap.add_argument("--no-prefix", action="store_true", help="never add the dummy prefix")
    ap.add_argument("--ignore-user-defined", action="store_true", help="drop USER_DEFINED pieces")
    args = ap.parse_args(argv)
    engine = SpmGreedy(args.gguf, escape=not args.no_escape, prefix=not args.no_prefix,
                       user_defined=not args.ignore_user_defined)
    serve(engine)


if __name__ == "__main__":
    main()
