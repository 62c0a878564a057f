"""A ``cmd:`` engine on Hugging Face ``tokenizers`` that encodes, decodes, streams and lists its
pieces, with at most one detokenization bug on request. Written from the protocol and bug
descriptions only.

    python3 detok_blind.py TOKENIZER_JSON [--bug NAME]

Ops (one JSON request per line on stdin, one reply per line on stdout, in order):
``encode`` (``add_special`` -> ``add_special_tokens``, ``encode_special_tokens = not
parse_special``), ``decode`` (``skip_special`` -> ``skip_special_tokens``; ``clean_up_spaces`` or
``spaces_between_specials`` in the request: an error with no ``status``, this engine has neither),
``stream`` (one delta per id after the ``prompt`` ids, ``""`` while the text ends in an unfinished
character; a ``step`` other than 1: an error with no ``status``) and ``pieces`` (every id's bytes
inside a text, in hex: what it adds after the token for ``a``; special tokens as their text;
``null`` for an id with no token). Any other request gets an error reply; a bad request never
ends the engine.

The right stream decodes all the ids so far at every step and sends what that text adds to the
prompt's text and to what was already sent (a Metaspace/Strip decoder drops the first space of
a text, so the new ids are never decoded alone). The right pieces take the anchor difference;
where that difference is only an unfinished character (U+FFFD: a byte token, ``<0xE7>`` or the
byte-level ``ç§``) the token's own bytes are read from its spelling instead.

The bugs (each alone; with no ``--bug`` every op is meant to be right):

``metaspace-stream``  stream: the tokenizer's decoder ignored, as a SentencePiece streamer: each
                      generated id's delta is its raw vocabulary string with ``▁`` made a space,
                      sent at once (byte-level ``Ġ``/``Ċ`` sent as they are: mlx-lm #1041,
                      "Hello!ĠHowĠcan"; ``<0x0A>`` as six characters).
``lstrip-pieces``     decode: the text is each id's piece (what ``pieces`` gives for it) with its
                      leading space stripped (as ``token_to_piece(..., lstrip=1)``: one space at
                      most), joined ("Hello world" -> "Helloworld").
``pieces-alone``      pieces: each id's bytes decoded alone (``tok.decode([id])``) rather than after
                      an anchor, so a Metaspace/Strip vocabulary's tokens lose their leading space
                      (``▁world`` -> "world"); on a byte-level vocabulary nothing changes.
``decode-alone``      decode: each id decoded alone (``tok.decode([id])``) and the texts joined: a
                      character split across ids comes out as U+FFFD pieces ("😀 world" ->
                      "��� world"), a Metaspace token loses its leading space.
``stop-at-invalid``   decode: the text stops where the ids' bytes (their pieces) stop being valid
                      UTF-8: everything from the first invalid byte on is dropped ("a" + half an
                      emoji + "b" -> "a"); with valid bytes the right text.
``lstrip-deltas``     stream: each delta of the right stream sent with its leading spaces taken off
                      (``delta.lstrip(" ")``: " world" -> "world"); what is held back, and when,
                      as the right stream.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from tokenizers import Tokenizer

BUGS = ("metaspace-stream", "lstrip-pieces", "pieces-alone", "decode-alone", "stop-at-invalid", "lstrip-deltas")
BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
REPLACEMENT = "\ufffd"


class BadRequest(Exception):
    """A request this engine cannot read or cannot answer as asked."""


def byte_level_chars() -> dict[str, int]:
    """GPT-2's printable spelling of the 256 bytes ('Ġ' = 0x20), as character -> byte."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    extra = (b for b in range(256) if b not in printable)
    spelled = {b: chr(b) for b in printable} | {b: chr(256 + n) for n, b in enumerate(extra)}
    return {c: b for b, c in spelled.items()}


def decoder_kinds(config: dict | None) -> set[str]:
    if not config:
        return set()
    if config.get("type") == "Sequence":
        return {k for d in config.get("decoders", []) for k in decoder_kinds(d)}
    return {config.get("type")}


def after(sent: str, text: str) -> str:
    """What ``text`` adds to ``sent``. If a decoder rewrote what was already sent, only the part
    after the common start can still go out (sent text cannot be taken back)."""
    if text.startswith(sent):
        return text[len(sent):]
    k = 0
    while k < min(len(sent), len(text)) and sent[k] == text[k]:
        k += 1
    return text[k:]


def flag(req: dict, key: str, default: bool = False) -> bool:
    value = req.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise BadRequest(f"{key} must be true or false, not {value!r}")
    return value


def id_list(req: dict) -> list[int]:
    ids = req.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise BadRequest(f"ids must be a list of integers, not {ids!r}")
    if any(i < 0 for i in ids):
        raise BadRequest(f"negative id in {ids!r}")
    return ids


class Engine:
    def __init__(self, path: str, bug: str | None):
        self.bug = bug
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            self.kinds = decoder_kinds(json.load(f).get("decoder"))
        self.size = self.tok.get_vocab_size(with_added_tokens=True)
        added = self.tok.get_added_tokens_decoder()
        self.specials = {i: t.content for i, t in added.items() if t.special}
        self.byte_chars = byte_level_chars() if "ByteLevel" in self.kinds else None
        self.table: list[bytes | None] | None = None

    # --- what one id stands for inside a text -------------------------------------------------
    def piece_table(self) -> list[bytes | None]:
        """Every id's bytes inside a text (the right ones, or decoded alone with pieces-alone)."""
        if self.table is None:
            ids = range(self.size)
            if self.bug == "pieces-alone":
                texts = self.tok.decode_batch([[i] for i in ids], skip_special_tokens=False)
            else:
                anchor = self.tok.encode("a", add_special_tokens=False).ids[-1]
                alone = self.tok.decode([anchor], skip_special_tokens=False)
                both = self.tok.decode_batch([[anchor, i] for i in ids], skip_special_tokens=False)
                texts = [after(alone, t) for t in both]
            self.table = [self.piece_bytes(i, t) for i, t in zip(ids, texts)]
        return self.table

    def piece_bytes(self, i: int, text: str) -> bytes | None:
        token = self.tok.id_to_token(i)
        if token is None:
            return None
        if i in self.specials:
            return self.specials[i].encode()
        if REPLACEMENT in text and REPLACEMENT not in token:
            # The decode could only show an unfinished character: read the bytes off the token.
            if self.byte_chars is not None and all(c in self.byte_chars for c in token):
                return bytes(self.byte_chars[c] for c in token)
            if "ByteFallback" in self.kinds and (m := BYTE_TOKEN.fullmatch(token)):
                return bytes([int(m[1], 16)])
        return text.encode("utf-8", "surrogatepass")

    # --- the ops ------------------------------------------------------------------------------
    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def decode(self, ids: list[int], skip_special: bool) -> str:
        if self.bug == "lstrip-pieces":
            table = self.piece_table()
            out = b""
            for i in ids:
                if i >= self.size or table[i] is None or (skip_special and i in self.specials):
                    continue
                piece = table[i]
                out += piece[1:] if piece.startswith(b" ") else piece     # lstrip=1
            return out.decode("utf-8", "replace")
        if self.bug == "decode-alone":
            return "".join(self.tok.decode([i], skip_special_tokens=skip_special) for i in ids)
        text = self.tok.decode(ids, skip_special_tokens=skip_special)
        if self.bug == "stop-at-invalid":
            return self.up_to_invalid(ids, skip_special, text)
        return text

    def up_to_invalid(self, ids: list[int], skip_special: bool, text: str) -> str:
        """``text`` (the right decode of ``ids``) cut where the ids' bytes stop being valid UTF-8."""
        table = self.piece_table()
        pieces = [b"" if i >= self.size or table[i] is None or (skip_special and i in self.specials)
                  else table[i] for i in ids]
        data = b"".join(pieces)
        try:
            data.decode("utf-8")
            return text
        except UnicodeDecodeError as exc:
            bad = exc.start
        # The most whole ids whose bytes end on a character boundary at or before ``bad`` are
        # decoded by the tokenizer (its decoder's spaces); the bytes after them up to ``bad`` (the
        # valid start of a byte-level token) are added as they are.
        k = start = offset = 0
        for n, piece in enumerate(pieces):
            if offset > bad:
                break
            if offset == bad or data[offset] & 0xC0 != 0x80:
                k, start = n, offset
            offset += len(piece)
        head = self.tok.decode(ids[:k], skip_special_tokens=skip_special)
        return head + data[start:bad].decode("utf-8")

    def stream(self, ids: list[int], prompt: int, skip_special: bool) -> list[str]:
        prompt = max(0, min(prompt, len(ids)))
        if self.bug == "metaspace-stream":
            deltas = []
            for i in ids[prompt:]:
                token = self.tok.id_to_token(i)
                skipped = token is None or (skip_special and i in self.specials)
                deltas.append("" if skipped else token.replace("\u2581", " "))
            return deltas
        # What is already known: the prompt's text, less an unfinished character at its end.
        sent = self.tok.decode(ids[:prompt], skip_special_tokens=skip_special).rstrip(REPLACEMENT)
        deltas = []
        for k in range(prompt + 1, len(ids) + 1):
            text = self.tok.decode(ids[:k], skip_special_tokens=skip_special)
            if text.endswith(REPLACEMENT):
                deltas.append("")               # hold back the start of a character
                continue
            delta = after(sent, text)
            deltas.append(delta.lstrip(" ") if self.bug == "lstrip-deltas" else delta)
            sent = text
        return deltas

    def pieces(self) -> list[str | None]:
        return [None if p is None else p.hex() for p in self.piece_table()]

    def handle(self, req: dict) -> dict:
        op = req.get("op")
        if op == "encode":
            text = req.get("text")
            if not isinstance(text, str):
                raise BadRequest(f"text must be a string, not {text!r}")
            return {"ids": self.encode(text, flag(req, "add_special"), flag(req, "parse_special"))}
        if op == "decode":
            for key in ("clean_up_spaces", "spaces_between_specials"):
                if key in req:
                    return {"error": f"{key} is not a setting of this engine"}
            return {"text": self.decode(id_list(req), flag(req, "skip_special"))}
        if op == "stream":
            if req.get("step") not in (None, 1):
                return {"error": "step is not a setting of this engine (one delta per id)"}
            prompt = req.get("prompt", 0)
            if not isinstance(prompt, int) or isinstance(prompt, bool):
                raise BadRequest(f"prompt must be an integer, not {prompt!r}")
            return {"deltas": self.stream(id_list(req), prompt, flag(req, "skip_special"))}
        if op == "pieces":
            return {"pieces": self.pieces()}
        return {"error": f"unknown op {op!r}"}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tokenizer_json")
    parser.add_argument("--bug", choices=BUGS)
    args = parser.parse_args()
    engine = Engine(args.tokenizer_json, args.bug)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = None
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise BadRequest(f"a request must be a JSON object, not {line.strip()[:80]!r}")
            reply = {"id": req.get("id"), **engine.handle(req)}
        except Exception as exc:               # one bad request must not end the engine
            reply = {"id": req.get("id") if isinstance(req, dict) else None, "error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
