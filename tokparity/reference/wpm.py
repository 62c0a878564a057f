"""WordPiece ("WPM", BERT) as llama.cpp runs it (``llm_tokenizer_wpm_session``).

1. **Normalize and split** (``preprocess``): optionally strip accents (each code point is
   replaced by the first code point of its NFD decomposition, and combining marks are
   dropped), lower-case, drop NUL, U+FFFD and control characters, split on whitespace, and
   make every punctuation character, ASCII symbol and CJK ideograph a word of its own.
2. **Greedy longest match** per word: starting at the word's beginning take the longest
   vocabulary token that matches, then continue after it. If some position has no match at
   all, the whole word becomes one ``[UNK]``.

llama.cpp's GGUF spells BERT's vocabulary differently from ``vocab.txt``: a token that starts
a word carries a ``▁`` (``▁hello``) and a continuation has no ``##`` (``llo``), so matching
runs over ``"▁" + word``.

Worked example, vocabulary ``▁un aff able ▁a``::

    "unaffable" -> "▁unaffable" -> ▁un | aff | able
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from tokparity.reference import unicode as uc

SPACE_MARK = "\u2581"


def is_chinese_char(cp: int) -> bool:
    """BERT's "CJK ideograph" test, with llama.cpp's (and HF's) 0x2B920 lower bound."""
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B920 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


# How a character is read, where an engine's own table says otherwise (``classes``): a space that
# splits words, dropped, a word of its own, or kept in its word as it is (lower-cased, not stripped).
CLASSES = ("space", "dropped", "alone", "as-is")


def preprocess(text: str, lowercase: bool = True, strip_accents: bool = True,
               classes: Mapping[str, str] | None = None, empty_words: bool = False) -> list[str]:
    """``"Hello, Wörld!" -> ["hello", ",", "world", "!"]``. ``classes`` reads some characters
    otherwise (see CLASSES): a hand-written table in place of Unicode's categories.
    ``empty_words``: each space ends a word, so a run of spaces, a space at either end or an
    empty text makes an empty word (a port that splits on ``' '``)."""
    if classes or empty_words:
        return _read_by_classes(text, lowercase, strip_accents, classes or {}, empty_words)
    words = [""]
    table = uc.flag_table()
    for ch in text:
        cp = ord(ch)
        if strip_accents:
            cp = uc.nfd_first(cp)
        flags = table[cp]
        if flags & uc.WHITESPACE:
            if words[-1]:
                words.append("")
            continue
        if cp == 0 or cp == 0xFFFD or flags & uc.CONTROL:
            continue
        if strip_accents and flags & uc.ACCENT_MARK:
            continue
        s = chr(uc.to_lower(cp) if lowercase else cp)
        if flags & uc.PUNCTUATION or (cp < 0x7F and flags & uc.SYMBOL) or is_chinese_char(cp):
            if words[-1]:
                words.append("")
            words[-1] = s
            words.append("")
        else:
            words[-1] += s
    if not words[-1]:
        words.pop()
    return words


def _read_by_classes(text: str, lowercase: bool, strip_accents: bool, classes: Mapping[str, str],
                     empty_words: bool) -> list[str]:
    """``preprocess`` one character's reading at a time (the plain loop is the fast path)."""
    words = [""]
    closed = False  # the last word was ended by punctuation, not by a space
    for ch in text:
        how = classes.get(ch) or read_as(ch, lowercase, strip_accents)
        if how == "space":
            if words[-1] or empty_words and not closed:
                words.append("")
            closed = False
        elif how == "alone":
            if words[-1]:
                words.append("")
            words[-1] = _mapped(ch, lowercase, strip_accents)
            words.append("")
            closed = True
        elif how != "dropped":
            words[-1] += how[1:] if how.startswith("=") else \
                _mapped(ch, lowercase, strip_accents and how == "word")
            closed = False
    if not words[-1] and (closed or not empty_words):
        words.pop()
    return words


def _mapped(ch: str, lowercase: bool, strip_accents: bool) -> str:
    cp = uc.nfd_first(ord(ch)) if strip_accents else ord(ch)
    return chr(uc.to_lower(cp) if lowercase else cp)


def read_as(ch: str, lowercase: bool = True, strip_accents: bool = True) -> str:
    """How ``preprocess`` reads ``ch`` by Unicode's categories: one of CLASSES, or ``"word"``
    (kept in its word, mapped as the normalizer says)."""
    cp = uc.nfd_first(ord(ch)) if strip_accents else ord(ch)
    flags = uc.flag_table()[cp]
    if flags & uc.WHITESPACE:
        return "space"
    if cp == 0 or cp == 0xFFFD or flags & uc.CONTROL or strip_accents and flags & uc.ACCENT_MARK:
        return "dropped"
    if flags & uc.PUNCTUATION or (cp < 0x7F and flags & uc.SYMBOL) or is_chinese_char(cp):
        return "alone"
    mapped = chr(uc.to_lower(cp) if lowercase else cp)
    return "as-is" if mapped == (chr(uc.to_lower(ord(ch))) if lowercase else ch) else "word"


@lru_cache(maxsize=65536)
def bert_reading(ch: str, lowercase: bool = True, strip_accents: bool = True) -> str | None:
    """How BERT's own tokenizer reads ``ch`` (tokenizers' BertNormalizer and BertPreTokenizer, as
    transformers' BertTokenizer), where llama.cpp reads it otherwise: one of CLASSES, or ``"=X"``
    (kept in its word, written as X). None where both read it alike. Examples: U+0085 is a control
    character to BERT, dropped, and a space to llama.cpp; "각" is "=각" to BERT (NFD: three jamo),
    its first jamo alone to llama.cpp."""
    from tokparity.components.normalizers import BertNormalizer
    from tokparity.reference.hf_normalizers import bert_normalize, is_whitespace
    from tokparity.reference.hf_pretokenizers import is_punctuation

    text = bert_normalize(BertNormalizer(lowercase=lowercase, strip_accents=strip_accents), ch)
    core = text.strip()
    if not text:
        how = "dropped"
    elif all(map(is_whitespace, text)):
        how = "space"
    elif len(core) == 1 and (core != text or is_punctuation(core)):  # (CJK padded with spaces, or punctuation)
        how = "alone"
    elif any(map(is_whitespace, text)) or any(map(is_punctuation, text)):
        return None  # (more than one word: no reading of one character says it)
    else:
        how = "=" + text
    own = read_as(ch, lowercase, strip_accents)
    if own == how or own in ("word", "as-is") and how == "=" + "".join(preprocess(ch, lowercase, strip_accents)):
        return None
    return how


def wordpiece(word: str, token_to_id: dict[str, int], max_len: int, unk_id: int) -> list[int]:
    """Greedy longest-match-first over ``"▁" + word``; one unknown position -> ``[unk_id]``."""
    if not word:
        return []
    text = SPACE_MARK + word
    out = []
    i = 0
    while i < len(text):
        for j in range(min(len(text), i + max_len), i, -1):
            token_id = token_to_id.get(text[i:j])
            if token_id is not None:
                out.append(token_id)
                i = j
                break
        else:
            return [unk_id]
    return out
