"""A hand-written Llama 3 pre-tokenizer in front of tokenizers' BPE model: a py: engine.

A helper trying the README as a newcomer wrote it, with a bug of its own choosing, before the
cause that names it existed (2026-12-04). Its split regex was typed from memory: the punctuation
alternative lacks its trailing [\r\n]*, so "Hello.\n" splits as "." + "\n", not ".\n".
``FixedEngine`` is its twin with the regex whole. Both run Python's ``regex`` module, whose
Unicode 17 tables differ from llama.cpp's on a few characters (unicode.tables).

    -b 'mine=py:tests/engines/blind/regex_part_port.py:Engine'
"""
import json

import regex
from tokenizers import Tokenizer

PAT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
       r"| ?[^\s\p{L}\p{N}]+"          # BUG: should be  ?[^\s\p{L}\p{N}]+[\r\n]*
       r"|\s*[\r\n]+|\s+(?!\S)|\s+")
FIXED = PAT.replace(r"| ?[^\s\p{L}\p{N}]+", r"| ?[^\s\p{L}\p{N}]+[\r\n]*")


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


class Engine:
    PATTERN = PAT

    def __init__(self, files):
        path = files["tokenizer_json"]
        self.model = Tokenizer.from_file(path).model
        data = json.load(open(path, encoding="utf-8"))
        self.specials = {t["content"]: t["id"] for t in data["added_tokens"] if t["special"]}
        self.special_re = regex.compile("|".join(regex.escape(s) for s in sorted(self.specials, key=len, reverse=True)))
        self.pat = regex.compile(self.PATTERN)
        self.b2u = bytes_to_unicode()
        self.bos = self.specials["<|begin_of_text|>"]

    def _plain(self, text):
        ids = []
        for piece in self.pat.findall(text):
            mapped = "".join(self.b2u[b] for b in piece.encode("utf-8"))
            ids.extend(t.id for t in self.model.tokenize(mapped))
        return ids

    def encode(self, text, add_special, parse_special):
        ids = [self.bos] if add_special else []
        if not parse_special:
            return ids + self._plain(text)
        pos = 0
        for m in self.special_re.finditer(text):
            ids += self._plain(text[pos:m.start()])
            ids.append(self.specials[m.group()])
            pos = m.end()
        return ids + self._plain(text[pos:])


class FixedEngine(Engine):
    PATTERN = FIXED
