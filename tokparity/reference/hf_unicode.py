"""tokenizers' own answers about characters, from the tables its crates carry (``_hf_unicode_data``).

Which table answers which question, as in tokenizers 0.23.3:
  - BertNormalizer (strip accents: ``is_mark_nonspacing``; clean text: ``is_other``), BertPreTokenizer
    and Punctuation (``is_punctuation``): crate unicode_categories 0.1.1, Unicode 8.0;
  - StripAccents (``is_combining_mark``) and NFD/NFKD/NFC/NFKC: unicode-normalization-alignments
    0.1.12, Unicode 9.0;
  - UnicodeScripts: tokenizers' own script table (``get_script``);
  - the file's regexes (Split, Replace) and ByteLevel's: Oniguruma 6.9.10, Unicode 16.0;
  - Whitespace's ``\\w+|[^\\w\\s]+``: the Rust ``regex`` crate (regex-syntax 0.8.11), Unicode 16.0;
  - Digits (``char::is_numeric``): Rust's standard library; the wheel was built by rustc 1.99.0,
    whose tables are Unicode 17.0, as are the ``regex`` module's (2026.11.15), so ``\\p{N}`` serves.
A character a table does not list is, for that question, what an unassigned one is. Regenerate
the tables with ``python -m tools.hf_unicode_gen`` (see there for the sources).
"""

from __future__ import annotations

import bisect
import functools
import unicodedata

import regex

from tokparity.reference import _hf_unicode_data as data


class RangeSet:
    """Inclusive code-point ranges, parsed from the generated ``first-last`` words."""

    def __init__(self, text: str):
        pairs = [word.split("-") if "-" in word else (word, word) for word in text.split()]
        self.firsts = [int(a, 16) for a, _ in pairs]
        self.lasts = [int(b, 16) for _, b in pairs]

    def index(self, ch: str) -> int:
        """The position of the range that holds ``ch``, or -1."""
        cp = ord(ch)
        i = bisect.bisect_right(self.firsts, cp) - 1
        return i if i >= 0 and cp <= self.lasts[i] else -1

    def __contains__(self, ch: str) -> bool:
        return self.index(ch) >= 0

    def class_body(self) -> str:
        """The set as the inside of a ``regex`` character class."""
        return "".join(f"\\U{a:08x}-\\U{b:08x}" if a != b else f"\\U{a:08x}" for a, b in zip(self.firsts, self.lasts))

    def regex_class(self, negate: bool = False) -> str:
        """The set as a ``regex`` character class."""
        return f"[{'^' if negate else ''}{self.class_body()}]"


CATEGORIES_MN = RangeSet(data.CATEGORIES_MN)
CATEGORIES_OTHER = RangeSet(data.CATEGORIES_OTHER)
CATEGORIES_PUNCTUATION = RangeSet(data.CATEGORIES_PUNCTUATION)
NORMALIZATION_MARK = RangeSet(data.NORMALIZATION_MARK)
NORMALIZATION_ASSIGNED = RangeSet(data.NORMALIZATION_ASSIGNED)
ONIG_ASSIGNED = RangeSet(data.ONIG_ASSIGNED)
RUST_REGEX_WORD = RangeSet(data.RUST_REGEX_WORD)
RUST_REGEX_SPACE = RangeSet(data.RUST_REGEX_SPACE)


def is_mark_nonspacing(ch: str) -> bool:
    """unicode_categories' ``is_mark_nonspacing`` (Mn, Unicode 8.0)."""
    return ch in CATEGORIES_MN


def is_other(ch: str) -> bool:
    """unicode_categories' ``is_other``: Cc, Cf, Co (Unicode 8.0); never Cn."""
    return ch in CATEGORIES_OTHER


def is_punctuation(ch: str) -> bool:
    """unicode_categories' ``is_punctuation`` (P*, Unicode 8.0)."""
    return ch in CATEGORIES_PUNCTUATION


def is_combining_mark(ch: str) -> bool:
    """unicode-normalization-alignments' ``is_combining_mark`` (Mn, Mc, Me of Unicode 9.0)."""
    return ch in NORMALIZATION_MARK


# --- normalization forms as of Unicode 9.0 ------------------------------------------------------------
#
# A character Unicode 9.0 had not assigned is, to the crate, a starter without decomposition,
# which no mark composes with and canonical ordering never moves a mark across. So cutting the
# text before and after each such character and normalizing the pieces with Python's (newer)
# tables gives the crate's answer: Unicode keeps the decompositions, classes and compositions of
# characters once assigned (its normalization stability policy).

_NOT_IN_9 = regex.compile(NORMALIZATION_ASSIGNED.regex_class(negate=True))


def normalize(form: str, text: str) -> str:
    """NFC/NFD/NFKC/NFKD as unicode-normalization-alignments 0.1.12 (Unicode 9.0) computes them."""
    if text.isascii():
        return text
    out, pos = [], 0
    for m in _NOT_IN_9.finditer(text):
        out.append(unicodedata.normalize(form, text[pos:m.start()]))  # type: ignore[arg-type]
        out.append(m.group())
        pos = m.end()
    out.append(unicodedata.normalize(form, text[pos:]))  # type: ignore[arg-type]
    return "".join(out)


# --- Oniguruma's Unicode 16.0 ----------------------------------------------------------------------
#
# The ``regex`` module's Unicode is newer. A character Oniguruma has not assigned matches what
# any unassigned character matches, so the regexes run on a copy of the text where each such
# character is one unassigned code point (U+40000: plane 4 has no block and no characters); the
# copy has the same length, so spans found in it are spans of the text.

ONIG_STAND_IN = "\U00040000"
_NOT_IN_ONIG = regex.compile(ONIG_ASSIGNED.regex_class(negate=True))


def onig_view(text: str) -> str:
    """``text`` with every character unassigned in Oniguruma's Unicode 16.0 replaced by U+40000."""
    if text.isascii():
        return text
    return _NOT_IN_ONIG.sub(ONIG_STAND_IN, text)


def pattern_needs_own_view(pattern: str) -> bool:
    """A pattern that itself names a character Oniguruma has not assigned must see the real text."""
    return bool(_NOT_IN_ONIG.search(pattern))


# Whitespace's pattern with the Rust regex crate's own \w and \s.
RUST_WORDS = regex.compile(f"{RUST_REGEX_WORD.regex_class()}+|[^{RUST_REGEX_WORD.class_body()}{RUST_REGEX_SPACE.class_body()}]+")
_NUMERIC = regex.compile(r"\p{N}")


def is_numeric(ch: str) -> bool:
    """Rust's ``char::is_numeric`` (Nd, Nl, No; Unicode 17.0 in rustc 1.99)."""
    return _NUMERIC.match(ch) is not None


# --- tokenizers' script table ----------------------------------------------------------------------

_SCRIPT_FIRSTS: list[int] = []
_SCRIPT_LASTS: list[int] = []
_SCRIPT_NAMES: list[str] = []
for _line in data.SCRIPTS.split("\n"):
    if _line.strip():
        _span, _name = _line.split()
        _a, _b = _span.split("-")
        _SCRIPT_FIRSTS.append(int(_a, 16))
        _SCRIPT_LASTS.append(int(_b, 16))
        _SCRIPT_NAMES.append(_name)


@functools.lru_cache(maxsize=65536)
def get_script(ch: str) -> str:
    """tokenizers' ``get_script``: the script its table gives, else ``"Any"``."""
    cp = ord(ch)
    i = bisect.bisect_right(_SCRIPT_FIRSTS, cp) - 1
    return _SCRIPT_NAMES[i] if i >= 0 and cp <= _SCRIPT_LASTS[i] else "Any"
