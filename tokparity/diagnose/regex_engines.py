"""A model's split regexes as other regex engines read them.

Ports run the same pattern text with the engine of their language, and the engines disagree on
what ``\\s`` means (``\\w``, ``\\d`` and ``\\p{..}`` too, but in the pre-tokenizer regexes of the
zoo only ``\\s`` is written with a class escape whose members differ):

* Oniguruma (tokenizers), Rust ``regex``/``fancy-regex`` and Python's ``regex``:
  Unicode ``White_Space``, U+0085 (NEL) included.
* ECMAScript (JavaScript, with or without the ``u`` flag): its own list, U+0085 excluded,
  U+FEFF included.
* RE2 and Go: ASCII only, ``[\\t\\n\\f\\r ]`` (no ``\\v``).
* PCRE2 with ``PCRE2_UCP`` (``pcre2``): Unicode ``White_Space`` and U+180E (MONGOLIAN VOWEL
  SEPARATOR, a format character since Unicode 6.3, still in PCRE2's ``\\h`` list), with PCRE2's
  own Unicode tables (16.0.0 in the 10.46-DEV pytorch-tokenizers vendors: ``16.0``, the regex
  module's less what Unicode 17 and later assigned).
* JavaScript in a current runtime (``javascript``): ECMAScript's ``\\s`` with the runtime's own,
  newer Unicode tables for every other class.
* ``std::regex`` over a text's UTF-8 bytes in the "C" locale (``c-bytes``), the pattern's classes
  written as POSIX ones: a letter is A-Z and a-z, a digit 0-9, punctuation ASCII's, ``\\s`` the six
  ASCII spaces. A byte past 0x7F is in no class, so only a negated class takes it.
* An engine without look-around (``no-lookaround``: Rust's ``regex`` crate; ``re2-no-lookaround``:
  RE2 and Go, with their ASCII ``\\s``): a port leaves out each alternative that holds one, such as
  ``\\s+(?!\\S)``.

``EngineSplitter`` runs a list of regexes (ECMAScript-like syntax, as llama.cpp and
tokenizer.json write them) through Python's ``regex`` module with ``\\s`` rewritten to the
engine's members, cutting text the way llama.cpp's ``unicode_regex_split`` does: matches and
the gaps between them are pieces. With ``engine="unicode"`` nothing is rewritten. Its ``tables``
say where every other class is read from: the ``regex`` module's Unicode (the default),
``llama.cpp``'s generated tables (a GGUF's split), Unicode 16.0's (``16.0``: Oniguruma's, a
tokenizer.json's split; PCRE2's), Unicode 17.0's (``17.0``: ICU4X 2.1's), Python's ``unicodedata``
(``python``) or Unicode 3.2's (``3.2``),
any of them with ``+alphabetic`` (a letter is Unicode's Alphabetic property, among the characters
those tables assign): the ``unicode.tables`` and ``unicode.alphabetic`` variants.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any
from unicodedata import ucd_3_2_0

import regex

from tokparity.diagnose import _unicode_assigned
from tokparity.reference import unicode as uc
from tokparity.reference.hf import seconds_left
from tokparity.reference.hf_unicode import ONIG_ASSIGNED, RangeSet

ECMASCRIPT_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
RE2_SPACE = "\\t\\n\\x0c\\r "
# PCRE2 (src/pcre2_match.c, PT_SPACE): HSPACE_LIST and VSPACE_LIST (src/pcre2_internal.h), then
# every code point of general category Z.
PCRE2_SPACE = "\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u180e\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"

ENGINES = {
    "ecmascript": "the regex run with ECMAScript's \\s (JavaScript: no U+0085, U+FEFF included)",
    "javascript": ("the regex run as a current JavaScript engine runs it: ECMAScript's \\s (no U+0085, U+FEFF "
                   f"included) and its own, newer Unicode tables (here those of the regex module {regex.__version__})"),
    "re2": "the regex run with RE2's / Go's \\s (ASCII only, no \\v)",
    "pcre2": ("the regex run as PCRE2 with PCRE2_UCP runs it: \\s is Unicode White_Space and U+180E (its \\h "
              "list), every other class read from its Unicode 16.0 tables"),
    "no-lookaround": ("the regex run by an engine without look-around (Rust's regex crate): each alternative with "
                      "one, such as \\s+(?!\\S), left out, so a run of spaces no longer leaves its last space to the next word"),
    "re2-no-lookaround": ("the regex run as RE2 and Go run it: \\s ASCII only, and each alternative with a "
                          "look-around, such as \\s+(?!\\S), left out"),
    "c-bytes": ("the regex run over the text's UTF-8 bytes with POSIX classes in the C locale (std::regex on a "
                "std::string): \\p{L} is A-Z and a-z, \\p{N} 0-9, \\s the six ASCII spaces; a byte past 0x7F is in no "
                "class, so only a negated class such as [^\\s\\p{L}\\p{N}] takes it"),
    "lookaround-cut": ("the regex run by an engine without look-around (Rust's regex crate), each look-around cut "
                       "out of its alternative: \\s+(?!\\S) read as \\s+, so a run of spaces no longer leaves its "
                       "last space to the next word"),
}
C_SPACE = "\\t\\n\\x0b\\x0c\\r "  # C's isspace() in the "C" locale
_MEMBERS = {"ecmascript": ECMASCRIPT_SPACE, "javascript": ECMASCRIPT_SPACE, "re2": RE2_SPACE, "pcre2": PCRE2_SPACE,
            "re2-no-lookaround": RE2_SPACE, "c-bytes": C_SPACE}
# The classes of a "C" locale (``c-bytes``): ASCII's letters, digits, punctuation and symbols; any
# other class holds no byte (U+0100, which no byte of the text is, stands in for none).
_C_CLASSES = {"L": "A-Za-z", "Lu": "A-Z", "Ll": "a-z", "N": "0-9", "Nd": "0-9",
              "P": regex.escape("".join(c for c in map(chr, range(128)) if unicodedata.category(c).startswith("P"))),
              "S": regex.escape("".join(c for c in map(chr, range(128)) if unicodedata.category(c).startswith("S")))}
_C_CLASS = regex.compile(r"\\p\{(\w+)\}")
# The engines that cannot compile a look-around: a port leaves out the alternatives that hold one.
NO_LOOKAROUND = ("no-lookaround", "re2-no-lookaround")
# The tables an engine reads every other class from, where it is not the model's own.
TABLES = {"javascript": "regex", "pcre2": "16.0"}
# An engine that is another one's \s and nothing else where its tables are the model's own (no
# variant of its own there).
TWIN = {"javascript": "ecmascript"}


def rewrite(source: str, engine: str) -> str:
    """``source`` with ``\\s`` / ``\\S`` spelled as ``engine`` reads them, and ECMAScript's final
    ``$`` (end of input) as ``\\Z``."""
    members = _MEMBERS.get(engine)
    out: list[str] = []
    inside = False
    i = 0
    while i < len(source):
        c = source[i]
        if c == "\\" and engine == "c-bytes" and (found := _C_CLASS.match(source, i)):
            held = _C_CLASSES.get(found.group(1), "\\u0100")
            out.append(held if inside else f"[{held}]")
            i = found.end()
            continue
        if c == "\\" and i + 1 < len(source):
            esc = source[i:i + 2]
            if members is not None and esc == "\\s":
                out.append(members if inside else f"[{members}]")
            elif members is not None and esc == "\\S" and not inside:
                out.append(f"[^{members}]")
            else:
                out.append(esc)
            i += 2
            continue
        if c == "[" and not inside:
            inside = True
        elif c == "]" and inside:
            inside = False
        out.append(c)
        i += 1
    text = "".join(out)
    if engine in NO_LOOKAROUND:
        text = without_lookaround(text)
    elif engine == "lookaround-cut":
        text = lookarounds_cut(text)
    if text.endswith("$") and not text.endswith("\\$"):
        text = text[:-1] + "\\Z"
    return text


def without_lookaround(source: str) -> str:
    """``source`` less each top-level alternative that holds a look-around, as a port to an engine
    without them writes it.

    >>> without_lookaround(r"'s|\\s+(?!\\S)|\\s+")
    "'s|\\\\s+"
    """
    alternatives, depth, inside, start, i = [], 0, False, 0, 0
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if c == "[" and not inside:
            inside = True
        elif c == "]" and inside:
            inside = False
        elif not inside and c == "(":
            depth += 1
        elif not inside and c == ")":
            depth -= 1
        elif not inside and depth == 0 and c == "|":
            alternatives.append(source[start:i])
            start = i + 1
        i += 1
    alternatives.append(source[start:])
    kept = [a for a in alternatives if not any(mark in a for mark in ("(?=", "(?!", "(?<=", "(?<!"))]
    return "|".join(kept) if kept else source


def lookarounds_cut(source: str) -> str:
    """``source`` with each look-around group cut out and its alternative kept, as a port to an
    engine without them may write it. llama.cpp's GPT-2 split has no ``|\\s+`` after
    ``\\s+(?!\\S)``, so cutting the look-around differs from leaving the alternative out there.

    >>> lookarounds_cut(r"'s| ?\\p{L}+|\\s+(?!\\S)")
    "'s| ?\\\\p{L}+|\\\\s+"
    """
    out, inside, i = [], False, 0
    while i < len(source):
        c = source[i]
        if c == "\\":
            out.append(source[i:i + 2])
            i += 2
            continue
        if not inside and source.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            depth, j = 0, i  # (skip to the group's closing parenthesis)
            while j < len(source):
                if source[j] == "\\":
                    j += 2
                    continue
                depth += {"(": 1, ")": -1}.get(source[j], 0)
                j += 1
                if depth == 0:
                    break
            i = j
            continue
        if c == "[" and not inside:
            inside = True
        elif c == "]" and inside:
            inside = False
        out.append(c)
        i += 1
    return "".join(out)


class EngineSplitter:
    """Split regexes applied in turn, each through ``engine``'s reading of ``\\s``, every other
    class (``\\p{L}``, ``\\p{N}``, …) read from ``tables`` (``category``).

    ``tables="llama.cpp"`` keeps a GGUF's own reading, so that only ``\\s`` differs: the ``regex``
    module reads a newer Unicode (Garay digits, U+10D40, are ``\\p{N}`` to it and unassigned to
    llama.cpp), and without this an engine that only reads Unicode 16 tables was reproduced as
    much by the ECMAScript variant as by ``unicode.tables``, and named after the wrong one. Each
    code point that ``tables`` and the ``regex`` module put in different categories is replaced,
    for the match only, by a stand-in of the category ``tables`` gives it."""

    def __init__(self, sources: list[str], engine: str, tables: str = "regex", caseless: bool = False):
        self.sources = list(sources)
        self.engine = engine
        self.tables = tables
        # The whole regex case-insensitive, as JavaScript's ``i`` flag with ``u`` reads it: a
        # character matches where its simple case fold does (U+0345 is a letter by its fold, ι),
        # and a cased class takes every case (``\p{Lu}`` a lower-case letter too).
        self.caseless = caseless
        self.name = f"{engine} engine"
        flags = (regex.IGNORECASE if caseless else 0) | (regex.ASCII if engine == "c-bytes" else 0)
        self.patterns = [regex.compile(rewrite(s, engine), flags) for s in sources]

    def split(self, text: str) -> list[str]:
        if self.engine == "c-bytes":  # (each byte one character: a piece is bytes, read back as UTF-8)
            raw = text.encode("utf-8", "surrogatepass").decode("latin-1")
            return [piece.encode("latin-1").decode("utf-8", "surrogatepass") for piece in self._split(raw, raw)]
        seen = text if self.tables == "regex" else text.translate(_stand_ins(text, self.tables))
        if self.caseless:
            seen = seen.translate(_simple_folds(seen))
        return self._split(text, seen)

    def _split(self, text: str, seen: str) -> list[str]:
        spans = [(0, len(text))] if text else []
        for pattern in self.patterns:
            out = []
            for start, end in spans:
                pos = start
                for m in pattern.finditer(seen, start, end, timeout=seconds_left()):
                    if m.start() > pos:
                        out.append((pos, m.start()))
                    if m.end() > m.start():
                        out.append((m.start(), m.end()))
                    pos = m.end()
                if pos < end:
                    out.append((pos, end))
            spans = out
        return [text[a:b] for a, b in spans]


# llama.cpp's category -> a code point the regex module reads the same way (none ASCII, so no
# literal of a split regex can match one; only the separator's is whitespace: U+200B was a space
# separator in Unicode 3.2, and an engine of those tables reads it as \s).
_STAND_IN = {uc.LETTER: "\u00aa", uc.NUMBER: "\u00b2", uc.PUNCTUATION: "\u00a1", uc.SYMBOL: "\u00a6",
             uc.ACCENT_MARK: "\u0300", uc.CONTROL: "\u0080", uc.UNDEFINED: "\u0378", uc.SEPARATOR: "\u2000"}
_REGEX_CATEGORY = [(uc.LETTER, regex.compile(r"\p{L}")), (uc.NUMBER, regex.compile(r"\p{N}")),
                   (uc.PUNCTUATION, regex.compile(r"\p{P}")), (uc.SYMBOL, regex.compile(r"\p{S}")),
                   (uc.ACCENT_MARK, regex.compile(r"\p{M}")), (uc.SEPARATOR, regex.compile(r"\p{Z}")),
                   (uc.CONTROL, regex.compile(r"\p{Cc}|\p{Cf}")), (uc.UNDEFINED, regex.compile(r"[\s\S]"))]


# The tables an engine may read its classes from, besides the regex module's own: llama.cpp's
# (generated, tokparity.reference.unicode), and the Unicode versions of Python's unicodedata
# (an engine that asks ``unicodedata.category``) and of Unicode 3.2 (``ucd_3_2_0``, the tables
# IDNA froze, which an engine generated long ago or built on them reads).
UNICODEDATA: dict[str, Any] = {"python": unicodedata, "3.2": ucd_3_2_0}


class UnicodeVersion(RangeSet):
    """One Unicode version's major class of each code point it assigns (``_unicode_assigned``,
    generated from unicodedata2 of that version, ``first-last:X`` words), as a llama.cpp flag."""

    _FLAGS = {"L": uc.LETTER, "N": uc.NUMBER, "P": uc.PUNCTUATION, "S": uc.SYMBOL, "M": uc.ACCENT_MARK,
              "Z": uc.SEPARATOR, "C": uc.CONTROL, "U": uc.UNDEFINED}

    def __init__(self, text: str):
        spans, majors = zip(*(word.split(":") for word in text.split()))
        super().__init__(" ".join(spans))
        self.flags = [self._FLAGS[major] for major in majors]

    def category(self, ch: str) -> int:
        i = self.index(ch)
        return self.flags[i] if i >= 0 else uc.UNDEFINED


# And the versions between Oniguruma's and the regex module's: ``16.0``, what the reference's own
# split of a tokenizer.json reads (Oniguruma's data: the code points it assigns, read as the regex
# module reads them; regexr's in splintr-rs 0.22.0 too); ``17.0``, ICU4X 2.1's (snaptokens), Rust's in
# tokie 0.1.4 and quicktok-v1's (the regex module 2026.5.9's), each code point by that version's own
# class, whatever regex module is installed.
UNICODE_17 = UnicodeVersion(_unicode_assigned.ASSIGNED_17_0)
ASSIGNED: dict[str, RangeSet] = {"16.0": ONIG_ASSIGNED, "17.0": UNICODE_17}

_MAJOR_FLAG = {"L": uc.LETTER, "N": uc.NUMBER, "P": uc.PUNCTUATION, "S": uc.SYMBOL, "M": uc.ACCENT_MARK,
               "Z": uc.SEPARATOR, "Cc": uc.CONTROL, "Cf": uc.CONTROL}


# "+alphabetic" after a table's name: what is a letter is Unicode's Alphabetic property (Rust's
# char::is_alphabetic, ICU's u_isUAlphabetic), not \p{L}: letter numbers (Ⅻ, Nl), vowel signs and
# circled letters are letters too.
ALPHABETIC = regex.compile(r"\p{Alphabetic}")


def _regex_category(ch: str) -> int:
    return next(flag for flag, pattern in _REGEX_CATEGORY if pattern.match(ch))


def category(ch: str, tables: str) -> int:
    """``ch``'s category as a llama.cpp flag, by ``tables``: ``llama.cpp``, ``regex``, an ``ASSIGNED`` or
    ``UNICODEDATA`` key, optionally followed by ``+alphabetic``. ``16.0`` is Oniguruma 6.9.10's Unicode
    (tokenizers reads a tokenizer.json's regexes with it) and PCRE2 10.46-DEV's (src/pcre2_ucd.c
    ``unicode_version``): the regex module's, less what a later Unicode assigned, read from the data
    the reference's own split of a tokenizer.json uses (``hf_unicode.ONIG_ASSIGNED``), so the two
    cannot drift apart when the regex module's Unicode moves on. ``17.0`` is read wholly from its own
    table (``UNICODE_17``), the regex module's only for ``+alphabetic``."""
    base, _, letters = tables.partition("+")
    assigned = ASSIGNED.get(base)
    if assigned is not None and ch not in assigned:  # (not even a letter by Alphabetic: unknown to these tables)
        return uc.UNDEFINED
    if letters == "alphabetic" and ALPHABETIC.match(ch):
        return uc.LETTER
    if base == "llama.cpp":
        return uc.flags(ord(ch)) & uc.CATEGORIES
    if isinstance(assigned, UnicodeVersion):  # (a version with classes of its own)
        return assigned.category(ch)
    if base == "regex" or assigned is not None:
        return _regex_category(ch)
    cat = UNICODEDATA[base].category(ch)
    return _MAJOR_FLAG.get(cat, _MAJOR_FLAG.get(cat[0], uc.UNDEFINED))  # Cn, Co, Cs: undefined


@lru_cache(maxsize=65536)
def _stand_in(ch: str, tables: str) -> str | None:
    cp = ord(ch)
    if uc.is_whitespace(cp) or regex.match(r"\s", ch):
        return None  # whitespace is what the engines are compared on: never replaced
    theirs = category(ch, tables)
    return _STAND_IN.get(theirs) if theirs != _regex_category(ch) else None


def _simple_folds(text: str) -> dict[int, str]:
    """Each character of ``text`` whose simple case fold is another one, to that fold (one code
    point for one, so the text's positions stay: where the full fold is longer, ß's "ss", the
    simple one is the lower case)."""
    out = {}
    for ch in set(text):
        folded = ch.casefold()
        if len(folded) != 1:
            folded = ch.lower() if len(ch.lower()) == 1 else ch
        if folded != ch:
            out[ord(ch)] = folded
    return out


def _stand_ins(text: str, tables: str) -> dict[int, str]:
    out = {}
    for ch in set(text):
        if ord(ch) > 0x7F:
            replacement = _stand_in(ch, tables)
            if replacement is not None:
                out[ord(ch)] = replacement
    return out


def hf_split_sources(config) -> list[str]:
    """The split regexes of a tokenizer.json byte-level pre-tokenizer (typed, tokparity.components),
    when they cut as llama.cpp's list does (``Split`` with ``Isolated``, ``ByteLevel``'s own GPT-2
    regex); else ``[]``."""
    from tokparity.components import pre_tokenizers as pt
    from tokparity.reference.hf import GPT2_HF

    sources: list[str] = []
    for c in pt.flatten(config):
        if isinstance(c, pt.Split):
            if not c.is_regex or c.behavior != "Isolated" or c.invert:
                return []
            sources.append(c.pattern)
        elif isinstance(c, pt.ByteLevel):
            if c.use_regex:
                sources.append(GPT2_HF)
        else:
            return []
    return sources
