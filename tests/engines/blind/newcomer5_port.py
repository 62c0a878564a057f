"""A GPT-2 byte-level BPE port over the model's GGUF: a py: engine.

A helper trying the README as a newcomer wrote it on 2026-12-04, with a bug of its own choosing,
before the cause that names it existed. It ported OpenAI's split regex to an engine without
look-ahead by dropping ``\\s+(?!\\S)`` and keeping ``\\s+``. So "hello  world" splits as
"hello", "  ", "world", not "hello", " ", " world". llama.cpp's GPT-2 split has no ``|\\s+``, so
leaving that alternative out of llama.cpp's regex does not give these ids. At first sight:
``pretokenizer.regex-engine``, 41 of 66, not proven. ``FixedEngine`` is its twin with the
look-ahead. Read with ``tokparity.vocab`` here; the newcomer read the GGUF with ``gguf``.

    -b 'mine=py:tests/engines/blind/newcomer5_port.py:Engine'
"""
import regex

from tokparity.vocab import load_vocab

PAT_BUGGY = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+"""
PAT_GOOD = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


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
    PATTERN = PAT_BUGGY

    def __init__(self, files):
        vocab = load_vocab(files["gguf"])
        self.vocab = {t: i for i, t in enumerate(vocab.tokens)}
        self.ranks = {tuple(m): i for i, m in enumerate(vocab.merges)}
        self.pat = regex.compile(self.PATTERN)
        self.b2u = bytes_to_unicode()
        self.eot = "<|endoftext|>"
        self.cache = {}

    def bpe(self, word):
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
            a, b = parts[best[1]], parts[best[1] + 1]
            out, i = [], 0
            while i < len(parts):
                if i < len(parts) - 1 and parts[i] == a and parts[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(parts[i])
                    i += 1
            parts = out
        ids = [self.vocab[p] for p in parts]
        self.cache[word] = ids
        return ids

    def _plain(self, text):
        ids = []
        for w in self.pat.findall(text):
            ids += self.bpe("".join(self.b2u[b] for b in w.encode("utf-8")))
        return ids

    def encode(self, text, add_special, parse_special):  # (GPT-2 adds no BOS)
        if not parse_special:
            return self._plain(text)
        ids = []
        for k, chunk in enumerate(text.split(self.eot)):
            if k:
                ids.append(self.vocab[self.eot])
            ids += self._plain(chunk)
        return ids


class FixedEngine(Engine):
    PATTERN = PAT_GOOD
