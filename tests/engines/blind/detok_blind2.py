"""A ``cmd:`` engine on Hugging Face ``tokenizers`` that encodes, decodes, streams and lists its
pieces, with at most one detokenization bug on request. Written from the protocol and bug
descriptions only.

    python3 detok_blind2.py TOKENIZER_JSON [--bug NAME]

Ops (one JSON request per line on stdin, one reply per line on stdout, in order):
``encode`` (``add_special`` -> ``add_special_tokens``, ``encode_special_tokens = not
parse_special``), ``decode`` (``skip_special`` -> ``skip_special_tokens``; ``clean_up_spaces``,
``spaces_between_specials`` or ``remove_special`` asked ``true``: an error with no ``status``, as
``tokenizers`` has none of them; asked ``false``: the plain decode), ``stream`` (one delta per id
after the ``prompt`` ids, or per ``step`` ids, ``""`` while the text ends in an unfinished
character) and ``pieces`` (every id's bytes inside a text, in hex: what it adds after the token
for ``a``; special tokens as their text; ``null`` for an id with no token). ``chat`` and any other
op get an error with no ``status`` (not answered here). A bad request gets an error reply and
never ends the engine.

The right decode is ``Tokenizer.decode``. The right stream decodes all the ids up to the end of
each step and sends what that text adds to what was already sent (the prompt's text counts as
sent, less an unfinished character at its end, which the first ids that finish it send). The
right pieces are the anchor difference, ``decode([a, id]) - decode([a])``; where that is only an
unfinished character (U+FFFD from a byte token, ``<0xE7>`` or the byte-level ``ç``) the token's
own bytes are read from its spelling instead.

The bugs (each alone; with no ``--bug`` every op is meant to be right):

``long-token-dropped``  decode: each token's bytes go through a fixed 32-byte buffer, so a token
                        whose bytes (its piece) are longer than 32 bytes comes out empty; every
                        other token, the spaces the decoder strips, U+FFFD for invalid bytes and
                        special tokens (as their text unless ``skip_special``) are as the right
                        decode has them (the model's own decoder is run with that token's string
                        made ``""``).
``added-raw``           pieces: each added token that is not special (``special: false`` in
                        tokenizer.json) is listed as the UTF-8 bytes of its ``content`` spelling,
                        the decoder never run on it (Gemma's ``▁▁`` gives ``e29681e29681``, not two
                        spaces); every other id's bytes are right.
``long-token-cut``      pieces: every id's right bytes cut to their first 16 bytes (a 16-byte field
                        per table entry).
``tail-never-flushed``  stream: a word-buffering streamer: it sends the right stream's text only up
                        to and including its last space (U+0020), holding back the word being
                        written, and never flushes the rest when the ids run out: the text after
                        the stream's last space is never sent (with no space, nothing is sent);
                        what it does send is the right text, in order.
``latin1-decode``       decode: the ids' bytes (their pieces) are joined and read as Latin-1, one
                        character per byte, instead of UTF-8 ("é" -> "Ã©"); special tokens written
                        as their text (left out with ``skip_special``), and the leading spaces the
                        model's decoder strips (a Strip decoder's first space) stripped as well.
``pieces-text``         pieces: each id's right bytes are kept as a string (read as UTF-8, invalid
                        bytes as U+FFFD) and sent as that string's UTF-8 bytes: a token that is
                        only part of a multi-byte character is listed as ``efbfbd`` (one U+FFFD
                        per invalid byte sequence); whole-character tokens are right.
``pieces-no-specials``  pieces: every special token's entry is empty (``""``); every other id's
                        bytes are right.
``stream-prompt-offset`` stream: the first delta sent (the first step whose text does not end in
                        an unfinished character) is the text of the ids so far from offset
                        ``len(decode(prompt ids))`` on, U+FFFD of an unfinished character at the
                        prompt's end counted: the characters those U+FFFD stood for (the one the
                        first ids finish, or more) are never sent; later deltas are right.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from tokenizers import Tokenizer

BUGS = ("long-token-dropped", "added-raw", "long-token-cut", "tail-never-flushed", "latin1-decode",
        "pieces-text", "pieces-no-specials", "stream-prompt-offset")
BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
REPLACEMENT = "\ufffd"
LONG_TOKEN = 32        # long-token-dropped: the decoder's per-token buffer
CUT = 16               # long-token-cut: the table's per-entry field


class BadRequest(Exception):
    """A request this engine cannot read."""


class Unsupported(Exception):
    """A setting this engine does not have (an error reply with no status: not tried)."""


def byte_level_chars() -> dict[str, int]:
    """GPT-2's printable spelling of the 256 bytes ('Ġ' = 0x20), as character -> byte."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    extra = (b for b in range(256) if b not in printable)
    spelled = {b: chr(b) for b in printable} | {b: chr(256 + n) for n, b in enumerate(extra)}
    return {c: b for b, c in spelled.items()}


def decoder_kinds(config: dict | None) -> set[str]:
    if not isinstance(config, dict):
        return set()
    if config.get("type") == "Sequence":
        return {k for d in config.get("decoders", []) for k in decoder_kinds(d)}
    return {config.get("type")}


def after(sent: str, text: str) -> str:
    """What ``text`` adds to ``sent``; where a decoder rewrote what was already sent, only what
    follows their common start can still go out (sent text cannot be taken back)."""
    if text.startswith(sent):
        return text[len(sent):]
    k = 0
    while k < min(len(sent), len(text)) and sent[k] == text[k]:
        k += 1
    return text[k:]


def leading_spaces(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def flag(req: dict, key: str, default: bool = False) -> bool:
    value = req.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise BadRequest(f"{key} must be true or false, not {value!r}")
    return value


def integer(req: dict, key: str, default: int) -> int:
    value = req.get(key)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadRequest(f"{key} must be an integer, not {value!r}")
    return value


def id_list(req: dict) -> list[int]:
    ids = req.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise BadRequest(f"ids must be a list of integers, not {ids!r}")
    if any(i < 0 or i >= 2**32 for i in ids):
        raise BadRequest(f"an id out of the range of a token id in {ids!r}")
    return ids


class Engine:
    def __init__(self, path: str, bug: str | None):
        self.bug = bug
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
        self.kinds = decoder_kinds(config.get("decoder"))
        self.size = max(self.tok.get_vocab(with_added_tokens=True).values(), default=-1) + 1
        self.added = self.tok.get_added_tokens_decoder()
        self.specials = {i: t.content for i, t in self.added.items() if t.special}
        # added-raw: each non-special added token as tokenizer.json spells it.
        self.raw_added = {t["id"]: t["content"] for t in config.get("added_tokens") or []
                          if isinstance(t, dict) and not t.get("special") and isinstance(t.get("id"), int)}
        self.byte_chars = byte_level_chars() if "ByteLevel" in self.kinds else None
        self.anchor: int | None = None
        self.anchor_text = ""
        self.cache: dict[int, bytes | None] = {}
        self.table: list[bytes | None] | None = None

    # --- what one id stands for inside a text -------------------------------------------------
    def set_anchor(self) -> int:
        if self.anchor is None:
            self.anchor = self.tok.encode("a", add_special_tokens=False).ids[-1]
            self.anchor_text = self.tok.decode([self.anchor], skip_special_tokens=False)
        return self.anchor

    def right_bytes(self, i: int, text: str) -> bytes | None:
        """The bytes of id ``i`` given what it adds after the anchor (``text``)."""
        token = self.tok.id_to_token(i)
        if token is None:
            return None
        if i in self.specials:
            return self.specials[i].encode("utf-8", "surrogatepass")
        if REPLACEMENT in text and REPLACEMENT not in token:
            # The decode could only show an unfinished character: read the bytes off the token.
            if self.byte_chars is not None and all(c in self.byte_chars for c in token):
                return bytes(self.byte_chars[c] for c in token)
            if "ByteFallback" in self.kinds and (m := BYTE_TOKEN.fullmatch(token)):
                return bytes([int(m[1], 16)])
        return text.encode("utf-8", "surrogatepass")

    def piece(self, i: int) -> bytes | None:
        """The right bytes of one id (cached; for the decoding bugs)."""
        if self.table is not None:
            return self.table[i] if i < self.size else None
        if i not in self.cache:
            if self.tok.id_to_token(i) is None:
                self.cache[i] = None
            else:
                anchor = self.set_anchor()
                both = self.tok.decode([anchor, i], skip_special_tokens=False)
                self.cache[i] = self.right_bytes(i, after(self.anchor_text, both))
        return self.cache[i]

    def right_table(self) -> list[bytes | None]:
        if self.table is None:
            anchor = self.set_anchor()
            ids = range(self.size)
            both = self.tok.decode_batch([[anchor, i] for i in ids], skip_special_tokens=False)
            self.table = [self.right_bytes(i, after(self.anchor_text, t)) for i, t in zip(ids, both)]
        return self.table

    def pieces(self) -> list[str | None]:
        table = list(self.right_table())
        if self.bug == "added-raw":
            for i, content in self.raw_added.items():
                if 0 <= i < len(table) and table[i] is not None:
                    table[i] = content.encode("utf-8", "surrogatepass")
        elif self.bug == "long-token-cut":
            table = [None if p is None else p[:CUT] for p in table]
        elif self.bug == "pieces-text":
            table = [None if p is None else p.decode("utf-8", "replace").encode("utf-8", "surrogatepass") for p in table]
        elif self.bug == "pieces-no-specials":
            table = [b"" if i in self.specials and p is not None else p for i, p in enumerate(table)]
        return [None if p is None else p.hex() for p in table]

    # --- the ops ------------------------------------------------------------------------------
    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def visible(self, ids: list[int], skip_special: bool) -> list[int]:
        """The ids the decoder writes: known ids, less special tokens with ``skip_special``."""
        return [i for i in ids if self.tok.id_to_token(i) is not None and not (skip_special and i in self.specials)]

    def decode(self, ids: list[int], skip_special: bool) -> str:
        right = self.tok.decode(ids, skip_special_tokens=skip_special)
        if self.bug == "long-token-dropped":
            shown = self.visible(ids, skip_special)
            tokens = ["" if len(self.piece(i) or b"") > LONG_TOKEN else self.tok.id_to_token(i) for i in shown]
            if self.tok.decoder is None:
                return " ".join(t for t in tokens if t)
            return self.tok.decoder.decode(tokens)
        if self.bug == "latin1-decode":
            shown = self.visible(ids, skip_special)
            utf8 = b"".join(self.piece(i) or b"" for i in shown).decode("utf-8", "replace")
            text, run = [], b""
            for i in shown:
                if i in self.specials:
                    text.append(run.decode("latin-1"))
                    text.append(self.specials[i])
                    run = b""
                else:
                    run += self.piece(i) or b""
            text.append(run.decode("latin-1"))
            latin1 = "".join(text)
            # The spaces the model's decoder strips from the start (a Strip decoder's first one).
            strip = max(0, leading_spaces(utf8) - leading_spaces(right))
            return latin1[min(strip, leading_spaces(latin1)):]
        return right

    def stream(self, ids: list[int], prompt: int, skip_special: bool, step: int) -> list[str]:
        prompt = max(0, min(prompt, len(ids)))
        # What is already known: the prompt's text, less an unfinished character at its end.
        prompt_text = self.tok.decode(ids[:prompt], skip_special_tokens=skip_special)
        sent = prompt_text.rstrip(REPLACEMENT)
        offset = len(prompt_text) if self.bug == "stream-prompt-offset" else None  # bug: stream-prompt-offset
        deltas = []
        for end in range(prompt + step, len(ids) + step, step):
            text = self.tok.decode(ids[:min(end, len(ids))], skip_special_tokens=skip_special)
            if text.endswith(REPLACEMENT):
                deltas.append("")               # hold back the start of a character
                continue
            if offset is not None:              # bug: the first delta from the prompt text's length on
                deltas.append(text[offset:])
                offset = None
            else:
                deltas.append(after(sent, text))
            sent = text
        if self.bug == "tail-never-flushed":
            # Send only up to and including the last space of what the right stream has sent so
            # far; whatever follows the stream's last space is never flushed.
            buffered, out, total = "", [], 0
            for delta in deltas:
                buffered += delta
                cut = buffered.rfind(" ") + 1
                out.append(buffered[total:cut] if cut > total else "")
                total = max(total, cut)
            deltas = out
        return deltas

    def handle(self, req: dict) -> dict:
        op = req.get("op")
        if op == "encode":
            text = req.get("text")
            if not isinstance(text, str):
                raise BadRequest(f"text must be a string, not {text!r}")
            return {"ids": self.encode(text, flag(req, "add_special"), flag(req, "parse_special"))}
        if op == "decode":
            for key in ("clean_up_spaces", "spaces_between_specials", "remove_special"):
                if flag(req, key):
                    raise Unsupported(f"{key} is not a setting of this engine")
            return {"text": self.decode(id_list(req), flag(req, "skip_special"))}
        if op == "stream":
            step = integer(req, "step", 1)
            if step < 1:
                raise BadRequest(f"step must be at least 1, not {step}")
            prompt = integer(req, "prompt", 0)
            return {"deltas": self.stream(id_list(req), prompt, flag(req, "skip_special"), step)}
        if op == "pieces":
            return {"pieces": self.pieces()}
        raise Unsupported(f"op {op!r} is not answered by this engine")


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
            reply = {"id": req.get("id") if isinstance(req, dict) else None,
                     "error": f"{type(exc).__name__}: {exc}"}
        try:
            out = json.dumps(reply)
        except Exception as exc:               # never leave a request without a reply
            out = json.dumps({"id": req.get("id") if isinstance(req, dict) else None,
                              "error": f"{type(exc).__name__}: {exc}"})
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
