"""A hand-written Llama 3 byte-level BPE encoder, as a newcomer wrote it on 2026-11-29 (#55's third
trial) from the README and docs only, with one bug of their choice kept from tokparity: the split
regex spells the contractions as GPT-2 does, in lower case only ('s|'t|…), where Llama 3's has
(?i:'s|'t|…). So "I'Ms" splits as "I", "'", "Ms" where Llama 3 gives "I", "'M", "s". No corpus
text shows it (an upper-case contraction followed by a letter); fuzz does.

    py:tests/engines/blind/newcomer3_port.py:Engine     the engine as written
    py:tests/engines/blind/newcomer3_port.py:Twin       the same, with Llama 3's own contractions

Its regex module's Unicode tables are newer than llama.cpp's: a second, real difference.
"""
import json

import regex


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


# Llama 3 pre-tokenizer pattern
PAT = regex.compile(
    r"'s|'t|'re|'ve|'m|'ll|'d|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# (the twin's: Llama 3's own, added by the test's author)
LLAMA3 = regex.compile(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


class Llama3Tokenizer:
    BOS = 128000

    def __init__(self, path, pattern=PAT):
        self.pattern = pattern
        d = json.load(open(path, encoding="utf-8"))
        self.vocab = d["model"]["vocab"]
        merges = d["model"]["merges"]
        self.ranks = {}
        for i, m in enumerate(merges):
            a, b = m.split(" ") if isinstance(m, str) else m
            self.ranks[(a, b)] = i
        self.specials = {t["content"]: t["id"] for t in d["added_tokens"]}
        self.special_re = regex.compile("|".join(regex.escape(s) for s in sorted(self.specials, key=len, reverse=True)))
        self.b2u = bytes_to_unicode()
        self.cache = {}

    def _bpe(self, word):
        if word in self.vocab:  # ignore_merges
            return [self.vocab[word]]
        if word in self.cache:
            return self.cache[word]
        parts = list(word)
        while len(parts) > 1:
            best = None
            for i in range(len(parts) - 1):
                r = self.ranks.get((parts[i], parts[i + 1]))
                if r is not None and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            i = best[1]
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        ids = [self.vocab[p] for p in parts]
        self.cache[word] = ids
        return ids

    def _encode_plain(self, text):
        out = []
        for piece in self.pattern.findall(text):
            word = "".join(self.b2u[b] for b in piece.encode("utf-8"))
            out.extend(self._bpe(word))
        return out

    def encode(self, text, add_bos=False, parse_special=True):
        ids = [self.BOS] if add_bos else []
        if not parse_special:
            return ids + self._encode_plain(text)
        pos = 0
        for m in self.special_re.finditer(text):
            ids += self._encode_plain(text[pos:m.start()])
            ids.append(self.specials[m.group()])
            pos = m.end()
        ids += self._encode_plain(text[pos:])
        return ids


class Engine:
    def __init__(self, files):
        self.tok = Llama3Tokenizer(files["tokenizer_json"])

    def encode(self, text, add_special, parse_special):
        return self.tok.encode(text, add_bos=add_special, parse_special=parse_special)


class Twin(Engine):
    def __init__(self, files):
        self.tok = Llama3Tokenizer(files["tokenizer_json"], LLAMA3)
