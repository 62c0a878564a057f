"""Which class a code point belongs to, by each Unicode table a tokenizer may be using.

A byte-level BPE pre-tokenizer splits text with ``\\p{L}``, ``\\p{N}``, ``\\s`` and friends, and
each implementation answers those from its own tables: llama.cpp from the ``unicode-data.cpp``
it ships (one Unicode version, the reference reads the same table), Hugging Face tokenizers
from its regex engine's (usually a newer Unicode), a Python engine from ``unicodedata`` (the
interpreter's Unicode, 14.0 on Python 3.11) or the ``regex`` module (its own, newer). A code
point assigned after the oldest of them is unassigned on one side and a digit or a letter on
the other, and the split at it differs: the ``unicode-categories`` bug class. Real case
(llama-bpe, 2026-11): the Garay digits U+10D40..U+10D49 (Unicode 16.0) are ``\\p{N}`` to
tokenizers and unassigned to llama.cpp, so ``" \\U00010D40"`` is one pre-token on one side and
two on the other.
"""

from __future__ import annotations

import unicodedata
from functools import cache

import regex

from tokparity.reference import unicode as llama_tables

# The major classes a pre-tokenizer regex asks about, and llama.cpp's flag for each.
_MAJOR = (("N", llama_tables.NUMBER), ("L", llama_tables.LETTER), ("Z", llama_tables.SEPARATOR),
          ("M", llama_tables.ACCENT_MARK), ("P", llama_tables.PUNCTUATION), ("S", llama_tables.SYMBOL),
          ("C", llama_tables.CONTROL))
_NAMES = {"N": r"\p{N}", "L": r"\p{L}", "Z": r"\p{Z}", "M": r"\p{M}", "P": r"\p{P}", "S": r"\p{S}",
          "C": r"\p{C}", "Cn": "unassigned"}


@cache
def _regex_patterns() -> tuple[regex.Pattern, regex.Pattern, dict[str, regex.Pattern]]:
    return regex.compile(r"\p{Cn}"), regex.compile(r"\s"), {k: regex.compile(rf"\p{{{k}}}") for k, _ in _MAJOR}


def _llama_cpp(ch: str) -> tuple[str, bool]:
    flags = llama_tables.flags(ord(ch))
    return next((k for k, bit in _MAJOR if flags & bit), "Cn"), bool(flags & llama_tables.WHITESPACE)


def _regex_module(ch: str) -> tuple[str, bool]:
    unassigned, space, majors = _regex_patterns()
    major = "Cn" if unassigned.match(ch) else next((k for k, p in majors.items() if p.match(ch)), "Cn")
    return major, bool(space.match(ch))


def _python(ch: str) -> tuple[str, bool]:
    category = unicodedata.category(ch)
    return ("Cn" if category == "Cn" else category[0]), ch.isspace()


def _describe(reading: tuple[str, bool]) -> str:
    major, space = reading
    return _NAMES[major] + (r" and \s" if space else "")


def disputed(ch: str) -> str | None:
    """How the tables disagree on ``ch`` (``None`` when they all read it the same way)."""
    readings = {"llama.cpp's unicode-data.cpp": _llama_cpp(ch),
                f"the regex module's (regex {regex.__version__})": _regex_module(ch),
                f"Python's unicodedata (Unicode {unicodedata.unidata_version})": _python(ch)}
    if len(set(readings.values())) == 1:
        return None
    said = "; ".join(f"{_describe(r)} to {who}" for who, r in readings.items())
    name = unicodedata.name(ch, "")
    # (the character itself only where it shows: the case's text writes any other as <U+…> already)
    shown = f" {ch!r}" if ch.isprintable() and not ch.isspace() else ""
    return f"U+{ord(ch):04X}{' ' + name if name else ''}{shown}, which is {said}"


def chars_around(text: str, byte_span: tuple[int, int]) -> str:
    """The characters of ``text`` whose UTF-8 bytes overlap ``byte_span``, with one more on each
    side (the class of the next character decides where a pre-tokenizer ends a piece)."""
    start, end = byte_span
    pos, first, last = 0, None, None
    for i, ch in enumerate(text):
        size = len(ch.encode("utf-8", "surrogatepass"))
        if pos + size > start and first is None:
            first = i
        if pos < max(end, start + 1):
            last = i
        pos += size
    if first is None:
        return ""
    return text[max(0, first - 1):(last if last is not None else first) + 2]
