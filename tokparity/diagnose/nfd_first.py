"""llama.cpp's one-code-point NFD as a normalizer: what ``normalizer.nfd-first`` puts in place of a
model's NFC or NFD step.

llama.cpp's ``unicode_cpts_normalize_nfd`` (``src/unicode.cpp``) maps each code point to *one*:
its table (``unicode_ranges_nfd`` in ``unicode-data.cpp``, generated from the first code point of
each canonical decomposition) keeps only the first, so an accent is dropped, not split off, and a
Hangul syllable becomes its leading consonant. llama.cpp means it so for its WordPiece models
(``reference/wpm.py``); an engine that vendors llama.cpp's Unicode module and calls it for a
tokenizer.json's NFC or NFD loses every accent of precomposed text (a later source of
meta-pytorch/tokenizers runs its NFD and NFKD steps so; not tried here). The reference reads the
same table (``reference/unicode.py``, ``nfd_first``):

    >>> first_code_points("café 각")
    'cafe ᄀ'

pytorch-tokenizers 1.5.0 (Meta's C++ tokenizers for ExecuTorch) runs a tokenizer.json's NFC so:
its vendored copy of llama.cpp's module (``third-party/llama.cpp-unicode/src/unicode.cpp``, llama.cpp
commit 54ef9cfc, tables identical to the reference's) adds ``unicode_cpts_normalize_nfc``, which
is that NFD, then a canonical ordering with combining classes guessed from the ACCENT_MARK flag
(230 for most marks; 220, 30, 35 for a few Hebrew and Arabic ranges), then a composition table
rebuilt from the NFD table and a hand-written list of which mark each precomposed letter had
(``build_composition_table``: Latin-1's grave, acute, circumflex, tilde, diaeresis, ring and
cedilla letters, eight caron letters listed under the grave, and Latin Extended-A by an
even-code-point rule that gives U+0100, U+0102 and U+0104 all the macron, the last one set
winning). So a precomposed letter loses its accent, while the marks that follow a letter in the
text are composed where the list has them:

    >>> recomposed("é"), recomposed("e\\u0301"), recomposed("A\\u0304")
    ('e', 'é', 'Ą')
    >>> recomposed("か\\u3099") == "か\\u3099"      # not in the list: left apart (NFC: が)
    True

Checked against the package (its ``HFTokenizer`` on Qwen 3's tokenizer.json, 143,262 texts: every
code point Python's tables assign, between two letters; twenty ASCII letters with each mark
U+0300-U+036F; every letter of Latin Extended-A with the twelve marks its table names and
U+030B): the reference with ``recomposed`` in place of NFC gives its ids on every one, and with
``specials.parse`` too on the default corpora's 7,821 texts without a U+180E, which its split
reads otherwise. Python's ``unicodedata`` (Unicode 14.0) gives the same first code points as
llama.cpp's table on every code point.
"""

from __future__ import annotations

from functools import cache

from tokparity.reference.unicode import ACCENT_MARK, flags, nfd_first, nfd_ranges

__all__ = ["first_code_points", "recomposed"]


def first_code_points(text: str) -> str:
    """``unicode_cpts_normalize_nfd``: each code point replaced by the first code point of its
    canonical decomposition (llama.cpp's table)."""
    return "".join(chr(nfd_first(ord(ch))) for ch in text)


def _combining_class(cp: int) -> int:
    """``get_combining_class``: 0 for a code point llama.cpp does not flag as a mark (\\p{M}),
    else a guess by range (real classes differ: Hebrew points are 10-24, here 220)."""
    if not flags(cp) & ACCENT_MARK:
        return 0
    for first, last, value in ((0x0591, 0x05BD, 220), (0x05BF, 0x05C7, 230), (0x0610, 0x061A, 230),
                               (0x064B, 0x065F, 30), (0x0670, 0x0670, 35), (0x06D6, 0x06E4, 230),
                               (0x06E7, 0x06E8, 230), (0x06EA, 0x06ED, 220)):
        if first <= cp <= last:
            return value
    return 230


# ``build_composition_table``'s switch: the mark each listed precomposed letter is taken to hold.
_MARK_OF = {cp: mark for mark, letters in (
    (0x0300, (0xC0, 0xE0, 0xC8, 0xE8, 0xCC, 0xEC, 0xD2, 0xF2, 0xD9, 0xF9,
              0x1CD, 0x1CE, 0x1CF, 0x1D0, 0x1D1, 0x1D2, 0x1D3, 0x1D4)),  # (caron letters, listed as grave)
    (0x0301, (0xC1, 0xE1, 0xC9, 0xE9, 0xCD, 0xED, 0xD3, 0xF3, 0xDA, 0xFA, 0xDD, 0xFD)),
    (0x0302, (0xC2, 0xE2, 0xCA, 0xEA, 0xCE, 0xEE, 0xD4, 0xF4, 0xDB, 0xFB)),
    (0x0303, (0xC3, 0xE3, 0xD1, 0xF1, 0xD5, 0xF5)),
    (0x0308, (0xC4, 0xE4, 0xCB, 0xEB, 0xCF, 0xEF, 0xD6, 0xF6, 0xDC, 0xFC, 0xFF)),
    (0x030A, (0xC5, 0xE5)),
    (0x0327, (0xC7, 0xE7))) for cp in letters}

# Its rule for the even code points of Latin Extended-A: the first range that holds the letter.
_EXTENDED_A = ((0x0100, 0x0105, 0x0304), (0x0102, 0x0107, 0x0306), (0x0104, 0x0119, 0x0328), (0x0106, 0x010D, 0x0301),
               (0x0108, 0x010F, 0x0302), (0x010A, 0x0111, 0x0307), (0x010C, 0x0165, 0x030C))


def _mark_of(cp: int) -> int:
    if cp in _MARK_OF:
        return _MARK_OF[cp]
    if 0x0100 <= cp <= 0x017F and cp % 2 == 0:
        return next((mark for first, last, mark in _EXTENDED_A if first <= cp <= last), 0)
    return 0


@cache
def _composition() -> dict[tuple[int, int], int]:
    """{(base, mark): letter}, in the order the package fills it (a later letter takes a pair over)."""
    table = {}
    for first, last, base in nfd_ranges():
        for cp in range(first, last + 1):
            mark = _mark_of(cp)
            if mark:
                table[(base, mark)] = cp
    return table


def recomposed(text: str) -> str:
    """pytorch-tokenizers 1.5.0's ``unicode_cpts_normalize_nfc``: ``first_code_points``, the marks
    reordered by the guessed classes, then each starter composed with the marks after it that
    the table has."""
    cps = [nfd_first(ord(ch)) for ch in text]
    for i in range(1, len(cps)):  # (its insertion sort: a mark moves before a higher-class one)
        j = i
        while j > 0 and _combining_class(cps[j - 1]) > _combining_class(cps[j]) != 0:
            cps[j - 1], cps[j] = cps[j], cps[j - 1]
            j -= 1
    table = _composition()
    out: list[int] = []
    i = 0
    while i < len(cps):
        out.append(cps[i])
        i += 1
        if _combining_class(out[-1]):  # (a mark with no starter before it stays as it is)
            continue
        starter = len(out) - 1
        while i < len(cps) and _combining_class(cps[i]):
            composed = table.get((out[starter], cps[i]))
            if composed is None:
                out.append(cps[i])
            else:
                out[starter] = composed
            i += 1
    return "".join(map(chr, out))
