"""A ``cmd:`` engine on Hugging Face ``tokenizers`` that encodes, decodes, streams and lists its
pieces, with at most one bug on request. Written from the protocol and bug descriptions only.

    python3 stream_blind.py TOKENIZER_JSON [--bug NAME]

Ops (one JSON request per line on stdin, one reply per line on stdout, in order):
``encode`` (``add_special`` -> ``add_special_tokens``, ``encode_special_tokens = not
parse_special``), ``decode`` (``skip_special_tokens=False``), ``stream`` (one delta per id after
the ``prompt`` ids, ``""`` while a character is unfinished) and ``pieces`` (every id's bytes after
an ordinary token, in hex; ``null`` for an id with no token).

The bugs (each alone; with no ``--bug`` every op is meant to be right):

``latin1``          stream: each id's bytes turned into text as Latin-1, one character per byte,
                    sent at once (the MLX bug: "ç§\\x81..." for "私...").
``eager``           stream: each id's bytes decoded alone as UTF-8 with replacement, sent at once
                    (a character split over two ids becomes U+FFFD mid-stream).
``skip-prompt``     stream: the prompt's ids are dropped and the generation decoded as if it
                    started the text (a character begun in the prompt loses its first bytes, a
                    Metaspace/Strip decoder eats the first generated token's space).
``resend-prompt``   stream: nothing is taken off for the prompt, so the first delta also carries
                    the prompt's text.
``skip-special``    decode: special tokens left out (``skip_special_tokens=True``).
``special-spaces``  decode: a space between every special token and the text beside it, as
                    vLLM's ``spaces_between_special_tokens`` (none at the very start or end).
``raw-pieces``      pieces: the UTF-8 of the raw vocabulary string (``Ġworld``, ``▁world``, and
                    ``<0x0A>`` as six characters).
"""

from __future__ import annotations

import argparse
import codecs
import json
import re
import sys

from tokenizers import Tokenizer

BUGS = ("latin1", "eager", "skip-prompt", "resend-prompt", "skip-special", "special-spaces", "raw-pieces")
BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def byte_level_chars() -> dict[str, int]:
    """GPT-2's printable spelling of the 256 bytes ('Ġ' = 0x20), as character -> byte."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    extra = (b for b in range(256) if b not in printable)
    spelled = {b: chr(b) for b in printable} | {b: chr(256 + n) for n, b in enumerate(extra)}
    return {c: b for b, c in spelled.items()}


def decoder_steps(config: dict | None) -> list[dict]:
    if not config:
        return []
    if config.get("type") == "Sequence":
        return [s for d in config["decoders"] for s in decoder_steps(d)]
    return [config]


class Engine:
    def __init__(self, path: str, bug: str | None):
        self.bug = bug
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            steps = decoder_steps(json.load(f).get("decoder"))
        self.size = self.tok.get_vocab_size(with_added_tokens=True)
        self.specials = {i for i, t in self.tok.get_added_tokens_decoder().items() if t.special}
        self.piece_of = self.piece_rule(steps)
        self.cache: dict[int, bytes | None] = {}

    # --- what one id adds to a text ----------------------------------------------------------
    def piece_rule(self, steps: list[dict]):
        """How a token's string becomes the bytes it adds after an ordinary token. The library
        runs every token, added ones included, through the decoder, so the same rule serves all."""
        kinds = {s["type"] for s in steps}
        if "ByteLevel" in kinds:
            chars = byte_level_chars()
            # The ByteLevel decoder keeps a token whole as UTF-8 when a character is not a byte's.
            return lambda t: bytes(chars[c] for c in t) if all(c in chars for c in t) else t.encode()
        if steps and kinds <= {"Replace", "ByteFallback", "Fuse", "Strip", "Metaspace"}:
            # SentencePiece style. Strip and Metaspace's own stripping act only at the start of
            # the text, never after another token, so they are left out here.
            swaps = [(s["pattern"]["String"], s["content"]) for s in steps
                     if s["type"] == "Replace" and "String" in s["pattern"]]
            swaps += [(s["replacement"], " ") for s in steps if s["type"] == "Metaspace"]
            fallback = "ByteFallback" in kinds

            def sentencepiece(t: str) -> bytes:
                if fallback and (m := BYTE_TOKEN.fullmatch(t)):
                    return bytes([int(m[1], 16)])
                for old, new in swaps:
                    t = t.replace(old, new)
                return t.encode()
            return sentencepiece
        # Any other decoder (WordPiece, none …): ask the library what the token adds after an
        # ordinary one. Such vocabularies have no byte tokens, so the text is the whole story.
        added = self.tok.get_added_tokens_decoder()
        anchor = next(i for i in range(self.size) if i not in added and self.tok.id_to_token(i) is not None)
        alone = self.tok.decode([anchor], skip_special_tokens=False)

        def after_anchor(t: str) -> bytes:
            both = self.tok.decode([anchor, self.tok.token_to_id(t)], skip_special_tokens=False)
            return after(alone, both).encode()
        return after_anchor

    def piece(self, i: int) -> bytes | None:
        if i not in self.cache:
            token = self.tok.id_to_token(i)
            self.cache[i] = None if token is None else self.piece_of(token)
        return self.cache[i]

    # --- the ops ------------------------------------------------------------------------------
    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def decode(self, ids: list[int]) -> str:
        if self.bug == "skip-special":
            return self.tok.decode(ids, skip_special_tokens=True)
        if self.bug == "special-spaces" and any(i in self.specials for i in ids):
            return self.spaced(ids)
        return self.tok.decode(ids, skip_special_tokens=False)

    def spaced(self, ids: list[int]) -> str:
        """The right text cut into runs (each special token alone, the ordinary ids between),
        joined with one space, as vLLM joins its sub-texts; each run's text is taken from the
        whole decode so that nothing but the spaces changes."""
        cuts = [0] + [k for k in range(1, len(ids)) if ids[k] in self.specials or ids[k - 1] in self.specials]
        prefixes = [self.tok.decode(ids[:k], skip_special_tokens=False) for k in cuts[1:]]
        prefixes = [""] + prefixes + [self.tok.decode(ids, skip_special_tokens=False)]
        runs = [after(a, b) for a, b in zip(prefixes, prefixes[1:])]
        return " ".join(r for r in runs if r)

    def stream(self, ids: list[int], prompt: int) -> list[str]:
        prompt = max(0, min(prompt, len(ids)))
        if self.bug in ("latin1", "eager"):
            own = [self.own_bytes(ids, k) for k in range(prompt, len(ids))]
            if self.bug == "latin1":
                return [b.decode("latin-1") for b in own]
            return [b.decode("utf-8", "replace") for b in own]
        if self.bug == "skip-prompt":
            ids, prompt = ids[prompt:], 0
        texts = self.texts_so_far(ids, prompt)
        sent = "" if self.bug == "resend-prompt" else texts[0]
        deltas = []
        for text in texts[1:]:
            deltas.append(after(sent, text))
            sent = text
        return deltas

    def own_bytes(self, ids: list[int], k: int) -> bytes:
        """The bytes of ids[k] alone, for the two bugs that send them at once. An id that starts
        the text adds what the decoder makes of it there (Metaspace/Strip drop its space), so
        that these bugs differ from the right stream only in how they treat split characters."""
        piece = self.piece(ids[k]) or b""
        if k == 0:
            try:
                piece.decode("utf-8")
            except UnicodeDecodeError:
                return piece                    # a character's first bytes: nothing to strip
            return self.tok.decode(ids[:1], skip_special_tokens=False).encode()
        return piece

    def texts_so_far(self, ids: list[int], prompt: int) -> list[str]:
        """The text that can be shown after each of ids[:prompt], ids[:prompt+1] … ids[:len]:
        everything but an unfinished character at the end.

        Where the ids end on a character boundary the library's own decode of all of them is
        the text (the decoder sees the whole context: Metaspace keeps " Hello" after other
        text, ByteFallback turns bad byte runs into its own U+FFFD count). Where they end inside
        a character, it is the decode up to the last boundary plus the complete characters the
        ids since then spell (a byte-level token can hold ' ' or 'の' and then a character's
        first bytes); the unfinished bytes stay held back until an id completes them."""
        utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        boundary, since, decoded = 0, "", {0: ""}
        texts = [""] if prompt == 0 else []
        for n, i in enumerate(ids, 1):
            since += utf8.decode(self.piece(i) or b"")
            if not utf8.getstate()[0]:         # nothing buffered: a character boundary
                boundary, since = n, ""
            if n >= prompt:
                if boundary not in decoded:
                    decoded = {boundary: self.tok.decode(ids[:boundary], skip_special_tokens=False)}
                texts.append(decoded[boundary] + since)
        return texts

    def pieces(self) -> list[str | None]:
        if self.bug == "raw-pieces":               # the vocabulary listing's spelling, markers and all
            raw = (self.tok.id_to_token(i) for i in range(self.size))
            return [None if t is None else t.encode().hex() for t in raw]
        return [None if (p := self.piece(i)) is None else p.hex() for i in range(self.size)]

    def handle(self, req: dict) -> dict:
        op = req.get("op")
        if op == "encode":
            return {"ids": self.encode(req["text"], bool(req.get("add_special")), bool(req.get("parse_special")))}
        if op == "decode":
            return {"text": self.decode(list(req["ids"]))}
        if op == "stream":
            return {"deltas": self.stream(list(req["ids"]), int(req.get("prompt", 0)))}
        if op == "pieces":
            return {"pieces": self.pieces()}
        return {"error": f"unknown op {op!r}"}


def after(sent: str, text: str) -> str:
    """What ``text`` adds to ``sent``. If a decoder rewrote what was already sent, only the part
    after the common start can still go out (sent text cannot be taken back)."""
    if text.startswith(sent):
        return text[len(sent):]
    k = 0
    while k < min(len(sent), len(text)) and sent[k] == text[k]:
        k += 1
    return text[k:]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tokenizer_json")
    parser.add_argument("--bug", choices=BUGS)
    args = parser.parse_args()
    engine = Engine(args.tokenizer_json, args.bug)
    for line in sys.stdin:
        if not line.strip():
            continue
        req: dict = {}
        try:
            req = json.loads(line)
            reply = {"id": req.get("id"), **engine.handle(req)}
        except Exception as exc:               # one bad request must not end the engine
            reply = {"id": req.get("id") if isinstance(req, dict) else None, "error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
