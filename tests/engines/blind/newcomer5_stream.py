"""A byte-level streaming detokenizer over a tokenizer.json: a py: engine.

A helper trying the README as a newcomer wrote it on 2026-12-04, with a bug of its own choosing.
``Engine`` starts a fresh incremental UTF-8 decoder on the generated ids alone, as a server that
streams "just the completion" does: a character the prompt began comes out as U+FFFD. ``compare``
named it ``stream.prompt-dropped``, proven; ``fuzz --ops stream`` named it
``stream.restart-after-newline``, under nine names. ``FixedEngine`` feeds the prompt's bytes first.

    -b 'mine=py:tests/engines/blind/newcomer5_stream.py:Engine'
"""
import codecs
import json


def unicode_to_bytes():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


class Engine:
    PRIME = False

    def __init__(self, files):
        data = json.load(open(files["tokenizer_json"], encoding="utf-8"))
        u2b = unicode_to_bytes()
        self.piece = {i: bytes(u2b[c] for c in tok) for tok, i in data["model"]["vocab"].items()}
        for t in data.get("added_tokens", []):
            self.piece[t["id"]] = t["content"].encode("utf-8")

    def encode(self, text, add_special, parse_special):
        raise NotImplementedError

    def stream(self, ids, prompt):
        dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        if self.PRIME:  # (a character the prompt began is finished by the generated ids)
            dec.decode(b"".join(self.piece[i] for i in ids[:prompt]))
        return [dec.decode(self.piece[i]) for i in ids[prompt:]]


class FixedEngine(Engine):
    PRIME = True
