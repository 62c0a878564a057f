"""tokenizers' pre-tokenizers, run on plain strings.

A piece is ``(text, at_start)``: ``at_start`` says the piece begins where the original text
begins, which is all Metaspace's ``prepend_scheme: "first"`` asks of tokenizers' offsets
(``offsets_original().0 == 0``): a piece after an added token, or after an earlier split, is
not first. Every split goes through ``split_spans``, tokenizers' ``NormalizedString::split``:
the pattern cuts the text into (span, is_match) runs and the behaviour decides what is kept:

    "the-final--countdown", pattern "-":
      Removed            the | final | countdown
      Isolated           the | - | final | - | - | countdown
      MergedWithPrevious the- | final- | - | countdown
      MergedWithNext     the | -final | - | -countdown
      Contiguous         the | - | final | -- | countdown
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import regex

from tokparity.components import pre_tokenizers as pt
from tokparity.reference import hf_unicode
from tokparity.reference.hf_normalizers import is_whitespace
from tokparity.reference.hf_regex import TimedRegex
from tokparity.reference.pretokenize import bytes_to_gpt2

GPT2_HF = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
_GPT2 = regex.compile(GPT2_HF)
_WORDS = hf_unicode.RUST_WORDS  # Whitespace's \w+|[^\w\s]+, with the Rust regex crate's classes

Piece = tuple[str, bool]
Span = tuple[int, int, bool]  # start, end, is_match


def regex_spans(rx, text: str) -> list[Span]:
    """A regex's (non-empty) matches and the gaps between them."""
    spans, pos = [], 0
    for m in rx.finditer(text):
        if m.start() == m.end():
            continue
        if m.start() > pos:
            spans.append((pos, m.start(), False))
        spans.append((m.start(), m.end(), True))
        pos = m.end()
    if pos < len(text):
        spans.append((pos, len(text), False))
    return spans


def char_spans(is_delimiter: Callable[[str], bool], text: str) -> list[Span]:
    """Each character for which ``is_delimiter`` holds is one match on its own."""
    spans, pos = [], 0
    for i, ch in enumerate(text):
        if is_delimiter(ch):
            if pos < i:
                spans.append((pos, i, False))
            spans.append((i, i + 1, True))
            pos = i + 1
    if pos < len(text):
        spans.append((pos, len(text), False))
    return spans


def split_spans(spans: list[Span], behavior: str) -> list[tuple[int, int]]:
    """The kept (start, end) ranges, as tokenizers' ``split`` folds them."""
    if behavior == "Removed":
        return [(a, b) for a, b, is_match in spans if not is_match]
    if behavior == "Isolated":
        return [(a, b) for a, b, _ in spans]
    out: list[list[int]] = []
    previous = False
    if behavior == "Contiguous":  # runs of the same kind become one
        for a, b, is_match in spans:
            if out and is_match == previous:
                out[-1][1] = b
            else:
                out.append([a, b])
            previous = is_match
    elif behavior == "MergedWithPrevious":  # a match joins the piece before it (one match only)
        for a, b, is_match in spans:
            if is_match and not previous and out:
                out[-1][1] = b
            else:
                out.append([a, b])
            previous = is_match
    else:  # MergedWithNext, the mirror image
        for a, b, is_match in reversed(spans):
            if is_match and not previous and out:
                out[-1][0] = a
            else:
                out.append([a, b])
            previous = is_match
        out.reverse()
    return [(a, b) for a, b in out]


def _split(pieces: Iterable[Piece], spans_of: Callable[[str], list[Span]], behavior: str) -> list[Piece]:
    out = []
    for text, at_start in pieces:
        for a, b in split_spans(spans_of(text), behavior):
            if b > a:
                out.append((text[a:b], at_start and a == 0))
    return out


def _inverted(spans: list[Span]) -> list[Span]:
    return [(a, b, not is_match) for a, b, is_match in spans]


def is_punctuation(ch: str) -> bool:
    """Rust's ``is_ascii_punctuation`` or unicode_categories' ``is_punctuation`` (Unicode 8.0)."""
    return (ch.isascii() and not ch.isalnum() and 0x21 <= ord(ch) <= 0x7E) or hf_unicode.is_punctuation(ch)


def _gpt2_spans(text: str) -> list[Span]:
    """ByteLevel's own regex, run by Oniguruma (Unicode 16.0) in tokenizers."""
    return regex_spans(_GPT2, hf_unicode.onig_view(text))


def _byte_level(c: pt.ByteLevel, pieces: list[Piece]) -> list[Piece]:
    out: list[Piece] = []
    for text, at_start in pieces:
        if c.add_prefix_space and not text.startswith(" "):
            text = " " + text
        out += _split([(text, at_start)], _gpt2_spans, "Isolated") if c.use_regex else [(text, at_start)]
    return [(bytes_to_gpt2(t), s) for t, s in out]


def _metaspace(c: pt.Metaspace, pieces: list[Piece]) -> list[Piece]:
    out: list[Piece] = []
    for text, at_start in pieces:
        text = text.replace(" ", c.replacement)
        if not text.startswith(c.replacement) and (c.prepend_scheme == "always"
                                                   or (c.prepend_scheme == "first" and at_start)):
            text = c.replacement + text
        if c.split:
            out += _split([(text, at_start)], lambda s: char_spans(lambda ch: ch == c.replacement, s),
                          "MergedWithNext")
        else:
            out.append((text, at_start))
    return out


def _fixed_length(c: pt.FixedLength, pieces: list[Piece]) -> list[Piece]:
    return [(t[i:i + c.length], s and i == 0) for t, s in pieces for i in range(0, len(t), c.length)]


def step_for(c, path: str) -> Callable[[list[Piece]], list[Piece]]:
    if isinstance(c, pt.ByteLevel):
        return lambda ps: _byte_level(c, ps)
    if isinstance(c, pt.Metaspace):
        return lambda ps: _metaspace(c, ps)
    if isinstance(c, pt.Split):
        rx = TimedRegex(c.pattern, c.is_regex, "pre_tokenizer Split", path)
        spans = (lambda s: _inverted(regex_spans(rx, s))) if c.invert else (lambda s: regex_spans(rx, s))
        return lambda ps: _split(ps, spans, c.behavior)
    if isinstance(c, pt.Whitespace):
        return lambda ps: _split(ps, lambda s: _inverted(regex_spans(_WORDS, s)), "Removed")
    if isinstance(c, pt.WhitespaceSplit):
        return lambda ps: _split(ps, lambda s: char_spans(is_whitespace, s), "Removed")
    if isinstance(c, pt.BertPreTokenizer):
        return lambda ps: _split(_split(ps, lambda s: char_spans(is_whitespace, s), "Removed"),
                                 lambda s: char_spans(is_punctuation, s), "Isolated")
    if isinstance(c, pt.Punctuation):
        return lambda ps: _split(ps, lambda s: char_spans(is_punctuation, s), c.behavior)
    if isinstance(c, pt.Digits):
        return lambda ps: _split(ps, lambda s: char_spans(hf_unicode.is_numeric, s),
                                 "Isolated" if c.individual_digits else "Contiguous")
    if isinstance(c, pt.CharDelimiterSplit):
        return lambda ps: _split(ps, lambda s: char_spans(lambda ch: ch == c.delimiter, s), "Removed")
    if isinstance(c, pt.FixedLength):
        return lambda ps: _fixed_length(c, ps)
    if isinstance(c, pt.UnicodeScripts):
        from tokparity.reference.hf_scripts import split_scripts
        return lambda ps: [(t, s and i == 0) for text, s in ps for i, t in split_scripts(text)]
    raise TypeError(f"not a pre-tokenizer step: {c!r}")


class PreTokenizer:
    def __init__(self, config: pt.PreTokenizer | None, path: str = "tokenizer.json"):
        self.configs = pt.flatten(config)
        self.steps = [step_for(c, path) for c in self.configs]
        self.byte_level = any(isinstance(c, pt.ByteLevel) for c in self.configs)

    def __call__(self, text: str, at_start: bool = True) -> list[str]:
        """The pieces of one fragment; ``at_start``: it begins the original text."""
        pieces: list[Piece] = [(text, at_start)] if text else []
        for step in self.steps:
            pieces = step(pieces)
        return [t for t, _ in pieces if t]
