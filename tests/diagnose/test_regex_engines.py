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
