"""A byte-level streaming detokenizer over a tokenizer.json: a py: engine.

A helper trying the README as a newcomer wrote it on 2026-12-05, with a bug of its own choosing
(docs/guides/first-check.md's streaming recipe). ``Engine`` holds back only a last byte that begins
a character (0xC0 and up). A character with some of its other bytes is sent at once, with
``errors="replace"``. A prompt that ends inside a character opens the buffer only with such a last
byte, and a lead byte held at the end is never sent. ``compare`` named it
``stream.split-character-sent``, not proven; ``fuzz --ops stream`` named it
``stream.flushed-at-n-bytes``, not proven, under eight names. ``FixedEngine`` holds back every byte
of an unfinished character and sends what it holds at the end.

    -b 'mine=py:tests/engines/blind/newcomer7_stream.py:Engine'
"""
import json


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def split_incomplete(buf):
    """Hold back a trailing UTF-8 lead byte still waiting for its continuation bytes."""
    if buf and buf[-1] >= 0xC0:
        return buf[:-1], buf[-1:]
    return buf, b""


def split_unfinished(buf):
    """The twin's: hold back every byte of a character the buffer leaves unfinished."""
    for back in range(1, min(4, len(buf)) + 1):
        byte = buf[-back]
        if byte & 0xC0 == 0x80:
            continue  # (a continuation byte: look further back for its lead)
        need = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4 if byte & 0xF8 == 0xF0 else 1
        return (buf[:-back], buf[-back:]) if need > back else (buf, b"")
    return buf, b""


class Engine:
    SPLIT = staticmethod(split_incomplete)
    FLUSH = False

    def __init__(self, files):
        d = json.load(open(files["tokenizer_json"], encoding="utf-8"))
        u2b = {c: b for b, c in bytes_to_unicode().items()}
        self.piece = {}
        for tok, i in d["model"]["vocab"].items():
            self.piece[i] = bytes(u2b[c] for c in tok)
        for t in d["added_tokens"]:
            self.piece[t["id"]] = t["content"].encode("utf-8")

    def encode(self, text, add_special, parse_special):
        raise NotImplementedError

    def stream(self, ids, prompt):
        _, pending = self.SPLIT(b"".join(self.piece[i] for i in ids[:prompt]))
        out = []
        for i in ids[prompt:]:
            pending += self.piece[i]
            ready, pending = self.SPLIT(pending)
            out.append(ready.decode("utf-8", errors="replace"))
        if self.FLUSH and pending and out:
            out[-1] += pending.decode("utf-8", errors="replace")
        return out


class FixedEngine(Engine):
    SPLIT = staticmethod(split_unfinished)
    FLUSH = True
