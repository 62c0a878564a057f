"""A model's split regexes as other regex engines read them.

Ports run the same pattern text with the engine of their language, and the engines disagree on
what ``\\s`` means (``\\w``, ``\\d`` and ``\\p{..}`` too, but in the pre-tokenizer regexes of the
zoo only ``\\s`` is written with a class escape whose members differ):

* Oniguruma (tokenizers), Rust ``regex``/``fancy-regex``, PCRE2 with UCP and Python's ``regex``:
  Unicode ``White_Space``, U+0085 (NEL) included.
* ECMAScript (JavaScript, with or without the ``u`` flag): its own list, U+0085 excluded,
  U+FEFF included.
* RE2 and Go: ASCII only, ``[\\t\\n\\f\\r ]`` (no ``\\v``).

``EngineSplitter`` runs a list of regexes (ECMAScript-like syntax, as llama.cpp and
tokenizer.json write them) through Python's ``regex`` module with ``\\s`` rewritten to the
engine's members, cutting text the way llama.cpp's ``unicode_regex_split`` does: matches and
the gaps between them are pieces. With ``engine="unicode"`` nothing is rewritten: the pattern
then reads every class from the ``regex`` module's Unicode tables, which is the
``unicode.tables`` variant for a model whose oracle reads llama.cpp's.
"""

from __future__ import annotations

from functools import lru_cache

import regex

from tokparity.reference import unicode as uc
from tokparity.reference.hf import seconds_left

ECMASCRIPT_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
RE2_SPACE = "\\t\\n\\x0c\\r "

ENGINES = {
    "ecmascript": "the regex run with ECMAScript's \\s (JavaScript: no U+0085, U+FEFF included)",
    "re2": "the regex run with RE2's / Go's \\s (ASCII only, no \\v)",
}
_MEMBERS = {"ecmascript": ECMASCRIPT_SPACE, "re2": RE2_SPACE}


def rewrite(source: str, engine: str) -> str:
    """``source`` with ``\\s`` / ``\\S`` spelled as ``engine`` reads them, and ECMAScript's final
    ``$`` (end of input) as ``\\Z``."""
    members = _MEMBERS.get(engine)
    out: list[str] = []
    inside = False
    i = 0
    while i < len(source):
        c = source[i]
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
    if text.endswith("$") and not text.endswith("\\$"):
        text = text[:-1] + "\\Z"
    return text


class EngineSplitter:
    """Split regexes applied in turn, each through ``engine``'s reading of ``\\s``.

    ``tables="llama.cpp"``: every other class (``\\p{L}``, ``\\p{N}``, …) still reads llama.cpp's
    tables, as the model's own split does, so that only ``\\s`` differs. The ``regex`` module
    reads a newer Unicode (Garay digits, U+10D40, are ``\\p{N}`` to it and unassigned to
    llama.cpp); without this an engine that only reads Unicode 16 tables was reproduced as
    much by the ECMAScript variant as by ``unicode.tables``, and named after the wrong one. Each
    code point the two tables put in different categories is replaced, for the match only, by a
    stand-in of llama.cpp's category."""

    def __init__(self, sources: list[str], engine: str, tables: str = "regex"):
        self.sources = list(sources)
        self.engine = engine
        self.tables = tables
        self.name = f"{engine} engine"
        self.patterns = [regex.compile(rewrite(s, engine)) for s in sources]

    def split(self, text: str) -> list[str]:
        seen = text.translate(_stand_ins(text)) if self.tables == "llama.cpp" else text
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


# llama.cpp's category -> a code point the regex module reads the same way (none is whitespace,
# none ASCII, so no literal of a split regex can match one).
_STAND_IN = {uc.LETTER: "\u00aa", uc.NUMBER: "\u00b2", uc.PUNCTUATION: "\u00a1", uc.SYMBOL: "\u00a6",
             uc.ACCENT_MARK: "\u0300", uc.CONTROL: "\u0080", uc.UNDEFINED: "\u0378"}
_REGEX_CATEGORY = [(uc.LETTER, regex.compile(r"\p{L}")), (uc.NUMBER, regex.compile(r"\p{N}")),
                   (uc.PUNCTUATION, regex.compile(r"\p{P}")), (uc.SYMBOL, regex.compile(r"\p{S}")),
                   (uc.ACCENT_MARK, regex.compile(r"\p{M}")), (uc.SEPARATOR, regex.compile(r"\p{Z}")),
                   (uc.CONTROL, regex.compile(r"\p{Cc}|\p{Cf}")), (uc.UNDEFINED, regex.compile(r"[\s\S]"))]


@lru_cache(maxsize=65536)
def _stand_in(ch: str) -> str | None:
    cp = ord(ch)
    if uc.is_whitespace(cp) or regex.match(r"\s", ch):
        return None  # whitespace is what the engines are compared on: never replaced
    theirs = uc.flags(cp) & uc.CATEGORIES
    ours = next(flag for flag, pattern in _REGEX_CATEGORY if pattern.match(ch))
    return _STAND_IN.get(theirs) if theirs != ours else None


def _stand_ins(text: str) -> dict[int, str]:
    out = {}
    for ch in set(text):
        if ord(ch) > 0x7F:
            replacement = _stand_in(ch)
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
