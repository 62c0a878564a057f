"""tokenizers' normalizers, run on a plain string (tokparity needs no offsets).

Each typed component (tokparity.components.normalizers) becomes one step ``str -> str``.
Characters classes are Rust's: ``char::is_whitespace`` is Unicode's White_Space (Python's
``str.isspace`` also counts U+001C..U+001F), ``to_lowercase`` is per character (Python's
``str.lower`` turns a final Σ into ς; Rust does not).
"""

from __future__ import annotations

from collections.abc import Callable

import regex

from tokparity.components import normalizers as n
from tokparity.reference import hf_unicode
from tokparity.reference.charsmap import CharsMap
from tokparity.reference.hf_regex import TimedRegex
from tokparity.reference.pretokenize import bytes_to_gpt2

# A chain of steps may grow a text at most this many times over (see vocab.hf_json).
MAX_GROWTH = 64

WHITE_SPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                        "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def is_whitespace(ch: str) -> bool:
    """Rust's ``char::is_whitespace``."""
    return ch in WHITE_SPACE


def lowercase(text: str) -> str:
    """Rust's ``char::to_lowercase``, one character at a time (no final-sigma rule)."""
    return "".join(ch.lower() for ch in text)


def _strip(text: str, left: bool, right: bool) -> str:
    start, end = 0, len(text)
    while left and start < end and is_whitespace(text[start]):
        start += 1
    while right and end > start and is_whitespace(text[end - 1]):
        end -= 1
    return text[start:end]


def _is_chinese(cp: int) -> bool:
    """BertNormalizer's CJK ranges, as tokenizers lists them."""
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B920 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF
            or 0x2F800 <= cp <= 0x2FA1F)


def bert_normalize(c: n.BertNormalizer, text: str) -> str:
    if c.clean_text:  # drop NUL, U+FFFD and "other" characters (not \t\n\r); any whitespace -> " "
        # (unicode_categories' is_other: Cc, Cf, Co of Unicode 8.0; any other character is kept)
        text = "".join(" " if is_whitespace(ch) else ch for ch in text
                       if not (ch in "\x00\ufffd" or (ch not in "\t\n\r" and hf_unicode.is_other(ch))))
    if c.handle_chinese_chars:
        text = "".join(f" {ch} " if _is_chinese(ord(ch)) else ch for ch in text)
    if c.lowercase if c.strip_accents is None else c.strip_accents:
        text = "".join(ch for ch in hf_unicode.normalize("NFD", text) if not hf_unicode.is_mark_nonspacing(ch))
    if c.lowercase:
        text = lowercase(text)
    return text


_GRAPHEME = regex.compile(r"\X")


def apply_charsmap(cm: CharsMap, text: str) -> str:
    """tokenizers' ``Precompiled`` normalizer, which is not SentencePiece's: one grapheme at a
    time, a grapheme under 6 bytes wholly replaced by the replacement of the *shortest* key it
    starts with, else each of its characters replaced by its own key's (no key: kept). So
    "a" + 10 combining marks stays uncomposed where SentencePiece writes "à" and the rest."""
    out = []
    for grapheme in _GRAPHEME.findall(text):
        data = grapheme.encode("utf-8")
        if len(data) < 6:
            hit = cm.shortest_match(data)
            if hit is not None:
                out.append(hit.decode("utf-8", "replace"))
                continue
        for ch in grapheme:
            hit = cm.shortest_match(ch.encode("utf-8"))
            out.append(ch if hit is None else hit.decode("utf-8", "replace"))
    return "".join(out)


_NMT_DROP = {cp: None for cp in [*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F]}
_NMT_SPACE = {cp: " " for cp in [0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF,
                                 0xFFFD]}
_NMT = str.maketrans({**_NMT_DROP, **_NMT_SPACE})


def step_for(c, path: str) -> Callable[[str], str]:
    """One normalizer component as a function of the text."""
    if isinstance(c, (n.NFC, n.NFD, n.NFKC, n.NFKD)):
        form = c.kind
        return lambda s: hf_unicode.normalize(form, s)
    if isinstance(c, n.Lowercase):
        return lowercase
    if isinstance(c, n.Nmt):  # controls dropped, other spaces (and U+2581) turned into " "
        return lambda s: s.translate(_NMT)
    if isinstance(c, n.StripAccents):  # tokenizers drops every combining mark (Mn, Mc, Me of Unicode 9.0)
        return lambda s: "".join(ch for ch in s if not hf_unicode.is_combining_mark(ch))
    if isinstance(c, n.Strip):
        return lambda s: _strip(s, c.strip_left, c.strip_right)
    if isinstance(c, n.Replace):
        rx = TimedRegex(c.pattern, c.is_regex, "normalizer Replace", path)
        return lambda s: rx.sub(c.content, s)
    if isinstance(c, n.Prepend):
        return lambda s: c.prepend + s if s else s
    if isinstance(c, n.Precompiled):
        if not c.charsmap:
            return lambda s: s
        cm = CharsMap(c.charsmap, "tokenizer.json Precompiled")
        return lambda s: apply_charsmap(cm, s)
    if isinstance(c, n.BertNormalizer):
        return lambda s: bert_normalize(c, s)
    if isinstance(c, n.ByteLevel):
        return bytes_to_gpt2
    raise TypeError(f"not a normalizer step: {c!r}")


class Normalizer:
    """The normalizer's steps in order; ``configs`` holds the component each came from (a
    diagnosis drops, replaces or adds some: ``without``, ``replacing``, ``with_step``)."""

    def __init__(self, config: n.Normalizer | None, path: str = "tokenizer.json"):
        self.configs: list = n.flatten(config)
        self.steps: list[Callable[[str], str]] = [step_for(c, path) for c in self.configs]

    def __call__(self, text: str) -> str:
        # The loader refuses Replace chains that can grow a text over MAX_GROWTH-fold; this stops
        # any other chain (Precompiled charsmaps that expand, applied again and again) per text.
        limit = max(len(text) * MAX_GROWTH, 4096)
        for step, config in zip(self.steps, self.configs):
            text = step(text)
            if len(text) > limit:
                raise ValueError(f"normalizer {config.kind} step made the text {len(text)} characters long, "
                                 f"over {MAX_GROWTH} times the input; stopped")
        return text

    def without(self, drop) -> Normalizer:
        """A copy without the steps whose component ``drop(component)`` is true."""
        copy = Normalizer(None)
        for step, config in zip(self.steps, self.configs):
            if not drop(config):
                copy.steps.append(step)
                copy.configs.append(config)
        return copy

    def replacing(self, which, step: Callable[[str], str]) -> Normalizer:
        """A copy in which ``step`` runs in place of each step whose component ``which(component)``
        is true (the component stays, so the copy still says what it stands in for)."""
        copy = self.without(lambda c: False)
        copy.steps = [step if which(config) else old for old, config in zip(copy.steps, copy.configs)]
        return copy

    def with_step(self, step, config) -> Normalizer:
        """A copy with one more step at the end (``config``: the component it stands for)."""
        copy = self.without(lambda c: False)
        copy.steps.append(step)
        copy.configs.append(config)
        return copy

    def has(self, kind: str) -> bool:
        return any(c.kind == kind for c in self.configs)
