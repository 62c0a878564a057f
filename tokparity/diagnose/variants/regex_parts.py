"""A split regex copied with one part missing: the model's regex, less one part of one of its
alternatives. A port whose regex was typed from memory often lacks one: Llama 3's
`` ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*`` without its ``[\\r\\n]*`` splits ``.\\n`` as ``.``, ``\\n``.

The parts are those of every regex list the reference knows (``REGEXES``). A part is an atom
(a character, an escape, a class, a group) with its quantifier, at the top level of an
alternative that holds another part. Each part is one variant: left out of every alternative of
the model's regexes that holds it. A variant that leaves the model's regexes as they are does
not apply, so each model keeps only the parts of its own regexes.
"""

from __future__ import annotations

from functools import lru_cache, partial

import regex

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants.pretokenizer import _resplit, _spelled_out, _split_sources
from tokparity.diagnose.variants.variant import Variant
from tokparity.reference.pretokenize import REGEXES

CAUSE = "pretokenizer.regex-part"
_QUANTIFIER = regex.compile(r"(?:[?*+]|\{\d*(?:,\d*)?\})[?+]?")


def _closing(source: str, i: int) -> int:
    """The index after the atom that starts at ``source[i]``."""
    ch = source[i]
    if ch == "\\":
        if source[i + 1:i + 2] in ("p", "P", "x") and source[i + 2:i + 3] == "{":
            return source.index("}", i) + 1
        return i + 2
    if ch == "[":
        j = i + 1
        if source[j:j + 1] == "^":
            j += 1
        if source[j:j + 1] == "]":  # (a ] first in a class is the character)
            j += 1
        while source[j] != "]":
            j = _closing(source, j) if source[j] == "\\" else j + 1
        return j + 1
    if ch == "(":
        depth, j = 1, i + 1
        while depth:
            if source[j] == "\\":
                j += 2
                continue
            if source[j] == "[":
                j = _closing(source, j)
                continue
            depth += {"(": 1, ")": -1}.get(source[j], 0)
            j += 1
        return j
    return i + 1


def alternatives(source: str) -> list[str]:
    """The top-level alternatives of a regex."""
    out, start, i = [], 0, 0
    while i < len(source):
        if source[i] == "|":
            out.append(source[start:i])
            start = i + 1
            i += 1
        else:
            i = _closing(source, i)
    return out + [source[start:]]


def parts(alternative: str) -> list[str]:
    """The atoms of an alternative, each with its quantifier."""
    out, i = [], 0
    while i < len(alternative):
        j = _closing(alternative, i)
        q = _QUANTIFIER.match(alternative, j)
        end = q.end() if q else j
        out.append(alternative[i:end])
        i = end
    return out


def without(source: str, part: str) -> str:
    """``source`` with ``part`` left out of each alternative that holds it beside another part."""
    alts = []
    for alt in alternatives(source):
        atoms = parts(alt)
        if part in atoms and len(atoms) > 1:
            atoms = [a for a in atoms if a != part]
        alts.append("".join(atoms))
    return "|".join(alts)


def shown(part: str) -> str:
    """A part as its regex writes it: a line break as ``\\n``."""
    return part.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")


@lru_cache(maxsize=256)
def _pattern(source: str) -> regex.Pattern | None:
    try:
        return regex.compile(source)
    except regex.error:
        return None


def _left_out(part: str, c: Candidate) -> Candidate | None:
    sources = [_spelled_out(s) for s in _split_sources(c.pipeline)]
    edited = [without(s, part) for s in sources]
    if edited == sources or any(_pattern(s) is None for s in edited):
        return None
    _ORIGINAL.update({(part, e): s for s, e in zip(sources, edited) if e != s})
    return _resplit(c, sources=edited)


def _changes(part: str, c: Candidate, text: str) -> bool:
    """Whether the regex less ``part`` splits ``text`` otherwise: each edited regex against its own."""
    for source in (_spelled_out(s) for s in _split_sources(c.pipeline)):
        original = _ORIGINAL.get((part, source))
        if original is not None and _pattern(source).findall(text) != _pattern(original).findall(text):  # type: ignore[union-attr]
            return True
    return False


# Each edited regex, by the part left out and the regex it was made from: ``_changes`` compares them.
_ORIGINAL: dict[tuple[str, str], str] = {}


def _parts_known() -> list[str]:
    found: dict[str, None] = {}
    for sources in REGEXES.values():
        for source in map(_spelled_out, sources):
            for alt in alternatives(source):
                atoms = parts(alt)
                if len(atoms) > 1:  # (not a letter of a word spelt out: a contraction's are pretokenizer.contractions)
                    found.update(dict.fromkeys(a for a in atoms if not (a.isalnum() or a == "'")))
    return list(found)


def variants() -> list[Variant]:
    """One variant per part of the known regexes (the model's own parts are those that apply)."""
    return [Variant(f"{CAUSE}:-{shown(part)}", CAUSE,
                    f"the split regex with `{shown(part)}` left out of its alternative (a regex copied with a part missing)",
                    partial(_left_out, part), partial(_changes, part))
            for part in _parts_known()]
