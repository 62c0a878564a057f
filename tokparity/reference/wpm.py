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

from tokparity.reference import unicode as uc

SPACE_MARK = "\u2581"


def is_chinese_char(cp: int) -> bool:
    """BERT's "CJK ideograph" test, with llama.cpp's (and HF's) 0x2B920 lower bound."""
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B920 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def preprocess(text: str, lowercase: bool = True, strip_accents: bool = True) -> list[str]:
    """``"Hello, Wörld!" -> ["hello", ",", "world", "!"]``."""
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
