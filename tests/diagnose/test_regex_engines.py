"""regex_engines' PCRE2 reading (pytorch-tokenizers' fallback): its \\s and its Unicode 16.0 tables."""

from __future__ import annotations

from tokparity.diagnose.regex_engines import TABLES, EngineSplitter, category
from tokparity.reference import unicode as uc

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")


def test_pcre2_space_is_white_space_and_u180e():
    pcre2 = EngineSplitter([LLAMA3], "pcre2", TABLES["pcre2"])
    assert pcre2.split(" \u180ea") == [" ", "\u180ea"]  # U+180E a space: the space stays alone
    assert pcre2.split(" \x85a") == [" ", "\x85a"]  # NEL a space, as Unicode's
    assert pcre2.split(" \ufeffa") == [" \ufeff", "a"]  # U+FEFF none, as Unicode's (not ECMAScript's)
    assert EngineSplitter([LLAMA3], "unicode").split(" \u180ea") == [" \u180e", "a"]


def test_unicode_16_tables():
    assert category("\U00010d40", "16.0") == uc.NUMBER  # Garay digit zero (Unicode 16)
    assert category("\U00011de0", "16.0") == uc.UNDEFINED  # Tolong Siki digit zero (Unicode 17)
    assert category("\U00011de0", "regex") == uc.NUMBER
    assert category("a", "16.0") == uc.LETTER


def test_unicode_17_tables_are_their_own():
    """``17.0`` reads each code point by Unicode 17's own class (generated from unicodedata2 17.0.1),
    whatever regex module is installed: U+088F a letter, U+20C1 a symbol, U+11DE0 a number (all new in
    17), U+208F (a letter of Unicode 18) unassigned; a character of every Unicode as the regex module
    reads it."""
    from tokparity.diagnose import regex_engines as re_
    from tokparity.reference import unicode as uc

    assert [re_.category(ch, "17.0") for ch in "\u088f\u20c1\U00011de0\u208f"] == \
        [uc.LETTER, uc.SYMBOL, uc.NUMBER, uc.UNDEFINED]
    for ch in "a1.$\u0301 \x01\ue000\u0378":
        assert re_.category(ch, "17.0") == re_.category(ch, "regex"), ch
    assert "\u208f" not in re_.UNICODE_17 and "\u088f" in re_.UNICODE_17
