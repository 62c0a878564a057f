"""Hypothesis strategies for tokenizer parity tests (needs ``pip install hypothesis``).

    from hypothesis import given
    from tokparity.fuzz.strategies import vocab_texts, whitespace_texts
    from tokparity.vocab import load_vocab

    vocab = load_vocab("tokenizer.gguf")

    @given(vocab_texts(vocab))
    def test_my_engine_agrees(text):
        assert my_engine.encode(text) == reference.encode(text)

Every strategy is built so that Hypothesis's shrinking ends on a short, readable text: a text is
a list of parts (pieces, words, whitespace runs, special tokens) joined together, so shrinking
drops whole parts first; each part is drawn from a list ordered simplest first (shortest pieces,
ASCII before the rest, one space before other whitespace), so what remains shrinks towards the
simplest choice that still fails. ``"".join`` of such lists is what test-tokenizer-random does too.

    vocab_texts(vocab)        pieces of the model's own vocabulary, with whitespace between some
    whitespace_texts()        short words between runs of spaces, tabs, newlines, Unicode spaces
    script_texts(script)      words of one script (``SCRIPTS``: Latn, Cyrl, Arab, Deva, Hani, Emoji…)
    normalization_texts()     characters that NFC / NFKC / NFD change: ligatures, full-width,
                              fractions, combining marks, Hangul jamo, compatibility forms
    special_mixes(vocab)      the model's special / added token texts mixed with words and whitespace
    any_text(vocab)           one of all of the above, or any Unicode text
"""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache

from hypothesis import strategies as st

from tokparity.errors import TokparityError
from tokparity.fuzz.generators import SCRIPTS, WHITESPACE, piece_strings, simplicity, special_texts
from tokparity.vocab.model import Vocab

__all__ = ["SCRIPTS", "vocab_texts", "whitespace_texts", "script_texts", "normalization_texts",
           "special_mixes", "any_text"]

# Simplest first: shrinking of ``sampled_from`` moves towards the start of the list.
_WORDS = ("a", "b", "ab", "I", "the", "Hello", "world", "x1", "0", "é", "日本")
_SPACE_RUNS = (" ", "  ", "\n", "\t", "   ", "\n\n", " \n", "\r\n")


def _joined(parts: st.SearchStrategy[str], min_parts: int, max_parts: int) -> st.SearchStrategy[str]:
    return st.lists(parts, min_size=min_parts, max_size=max_parts).map("".join)


def _ordered(texts) -> list[str]:
    """Unique texts, simplest first: shorter first, and among texts of one or two characters the
    plainer first (``generators.simplicity``; longer ones by code point, which is much cheaper for
    a 250k vocabulary and matters little, since shrinking drops long pieces first)."""
    return sorted(set(texts), key=lambda t: simplicity(t) if len(t) <= 2 else (len(t), 0, t))


_VOCAB_PIECES: dict[int, tuple[Vocab, list[str]]] = {}


def _vocab_pieces(vocab: Vocab) -> list[str]:
    hit = _VOCAB_PIECES.get(id(vocab))
    if hit is None or hit[0] is not vocab:
        if len(_VOCAB_PIECES) >= 4:
            _VOCAB_PIECES.clear()
        hit = _VOCAB_PIECES[id(vocab)] = (vocab, _ordered(piece_strings(vocab)))
    return hit[1]


def whitespace_runs(max_len: int = 8) -> st.SearchStrategy[str]:
    """A run of whitespace: common runs first, then any mix of ``generators.WHITESPACE``."""
    return st.one_of(st.sampled_from(_SPACE_RUNS),
                     _joined(st.sampled_from(WHITESPACE), 1, max_len))


def vocab_texts(vocab: Vocab, max_pieces: int = 8) -> st.SearchStrategy[str]:
    """Concatenations of up to ``max_pieces`` pieces of ``vocab`` (decoded to text, at least one),
    with whitespace runs between some of them: the texts a tokenizer's merges and pre-tokenizer have
    most to say about. Shrinks to the one simplest piece that still fails."""
    pieces = _vocab_pieces(vocab)
    if not pieces:
        raise TokparityError(f"vocabulary {vocab.source or '?'} has no piece that stands for text")
    piece = st.sampled_from(pieces)
    part = st.one_of(piece, whitespace_runs(4))
    side = max(0, max_pieces // 2)
    return st.tuples(_joined(part, 0, side), piece, _joined(part, 0, side)).map("".join)


def whitespace_texts(max_parts: int = 10) -> st.SearchStrategy[str]:
    """Whitespace-heavy texts: short words between, before and after runs of whitespace."""
    return _joined(st.one_of(whitespace_runs(), st.sampled_from(_WORDS)), 1, max_parts)


@cache
def _script_alphabet(script: str) -> tuple[str, ...]:
    chars = []
    for a, b in SCRIPTS[script]:
        # Very large ranges (Han, Hangul) are sampled at a stride: shrinking needs no 20k choices.
        step = max(1, (b - a + 1) // 2000)
        chars += [chr(c) for c in range(a, b + 1, step) if unicodedata.category(chr(c)) not in ("Cn", "Co", "Cs")]
    return tuple(chars)


def script_texts(script: str, max_words: int = 6) -> st.SearchStrategy[str]:
    """Words of one script's letters (and marks), separated by spaces or punctuation."""
    if script not in SCRIPTS:
        raise TokparityError(f"unknown script {script!r}; known: {', '.join(sorted(SCRIPTS))}")
    word = st.text(alphabet=st.sampled_from(_script_alphabet(script)), min_size=1, max_size=8)
    sep = st.sampled_from((" ", ", ", ". ", "\n", "-", "'", ""))
    rest = st.lists(st.tuples(sep, word).map("".join), max_size=max(0, max_words - 1)).map("".join)
    return st.tuples(word, rest).map("".join)


@lru_cache(maxsize=1)
def normalization_chars() -> tuple[str, ...]:
    """Characters of the Basic Multilingual Plane (and a few beyond) that NFC, NFKC or NFD change,
    most familiar first: ``½``, ``ﬁ``, full-width ``Ａ``, ``é`` precomposed, Hangul syllables."""
    familiar = "½¼ﬁﬂＡａ１！　é…™①ⅷ㎏Å"
    found = []
    for cp in range(0xA0, 0x30000):
        c = chr(cp)
        if unicodedata.category(c) in ("Cn", "Co", "Cs"):
            continue
        if any(unicodedata.normalize(form, c) != c for form in ("NFKC", "NFD")):
            found.append(c)
    rest = [c for c in found if c not in familiar]
    return tuple(familiar) + tuple(rest[:: max(1, len(rest) // 3000)])


_COMBINING = ("\u0301", "\u0300", "\u0308", "\u0327", "\u0303", "\u030a", "\u0323", "\u093c", "\u3099")


def normalization_texts(max_parts: int = 8) -> st.SearchStrategy[str]:
    """Texts where normalization matters: compatibility characters, base letters followed by
    combining marks (NFC would compose them), decomposed Hangul jamo, next to plain ASCII."""
    base = st.sampled_from(("a", "e", "o", "A", "n", "c", "u", "カ", "\u1100\u1161", "\u1112\u1161\u11ab"))
    combined = st.tuples(base, st.lists(st.sampled_from(_COMBINING), min_size=1, max_size=3)).map(
        lambda t: t[0] + "".join(t[1]))
    part = st.one_of(st.sampled_from(normalization_chars()), combined, st.sampled_from(_WORDS),
                     st.sampled_from((" ", "  ", "\n")))
    return _joined(part, 1, max_parts)


def special_mixes(vocab: Vocab, max_parts: int = 8) -> st.SearchStrategy[str]:
    """The model's special and added token texts (``<s>``, ``<|eot_id|>``) with words and whitespace
    around them: for ``parse_special``, lstrip/rstrip and space-after-special bugs."""
    specials = _ordered(special_texts(vocab))
    if not specials:
        raise TokparityError(f"vocabulary {vocab.source or '?'} has no special or added token text")
    part = st.one_of(st.sampled_from(specials), st.sampled_from(_WORDS), whitespace_runs(3))
    return st.tuples(st.sampled_from(specials), _joined(part, 0, max_parts), _joined(part, 0, max_parts)).map(
        lambda t: t[1] + t[0] + t[2])


def any_text(vocab: Vocab | None = None) -> st.SearchStrategy[str]:
    """One of every strategy above (the vocabulary ones where ``vocab`` is given), or any text."""
    options = [whitespace_texts(), normalization_texts()]
    if vocab is not None:
        options.insert(0, vocab_texts(vocab))
        if special_texts(vocab):
            options.append(special_mixes(vocab))
    options.append(st.sampled_from(sorted(SCRIPTS)).flatmap(script_texts))
    options.append(st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=20))
    return st.one_of(options)
