"""A split regex copied with one part missing or written as another model's regex writes it: the
model's regex with one part left out of each alternative that holds it, or put another way. A port
whose regex was typed from memory often lacks one: Llama 3's `` ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*``
without its ``[\\r\\n]*`` splits ``.\\n`` as ``.``, ``\\n``. Or it mixes two models: Llama 3's
``[^\\r\\n\\p{L}\\p{N}]?\\p{L}+`` written as GPT-2's `` ?\\p{L}+`` splits ``'hui`` as ``'``, ``hui``.
The other ways are those of two alternatives of the known regexes that differ in that one part.

The parts are those of every regex list the reference knows (``REGEXES``). A part is an atom
(a character, an escape, a class, a group) with its quantifier, at the top level of an
alternative that holds another part. Each part is one variant. A variant that leaves the
model's regexes as they are does not apply, so each model keeps only the parts of its own regexes.
Two edits are no variant: a part left out that leaves an alternative matching the empty string
(the split would cut between every two characters), and a look-around left out
(``pretokenizer.regex-engine:no-lookaround`` names an engine without them).
A case tries these variants only where no named cause gives its ids alone (search.Diagnoser).
"""

from __future__ import annotations

from functools import lru_cache, partial

import regex

from tokparity.diagnose import regex_engines
from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants.pretokenizer import resplit, spelled_out, split_sources, splitter_of
from tokparity.diagnose.variants.rules import REGEX_PART
from tokparity.diagnose.variants.variant import Variant
from tokparity.reference.pretokenize import REGEXES

CAUSE = REGEX_PART
LOOK_AROUND = ("(?=", "(?!", "(?<=", "(?<!")
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
    """``source`` with ``part`` left out of each alternative that holds it once, beside another part."""
    return swapped(source, part, "")


def swapped(source: str, part: str, other: str) -> str:
    """``source`` with ``part`` written ``other`` in each alternative that holds it once, beside another part."""
    alts = []
    for alt in alternatives(source):
        atoms = parts(alt)
        if atoms.count(part) == 1 and len(atoms) > 1:
            atoms[atoms.index(part)] = other
        alts.append("".join(atoms))
    return "|".join(alts)


def _matches_nothing(source: str, edited: str) -> bool:
    """Whether an alternative the edit changed matches the empty string."""
    before = set(alternatives(source))
    return any(alt not in before and (_pattern(alt) is None or _pattern(alt).fullmatch("") is not None)  # type: ignore[union-attr]
               for alt in alternatives(edited))


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
    return _edited(c, partial(without, part=part))


def _written_otherwise(part: str, other: str, c: Candidate) -> Candidate | None:
    return _edited(c, partial(swapped, part=part, other=other))


def _edited(c: Candidate, edit) -> Candidate | None:
    """The candidate splitting with its regexes edited, where that changes them into valid regexes
    with no alternative that matches nothing."""
    sources = [spelled_out(s) for s in split_sources(c.pipeline)]
    edited = [edit(s) for s in sources]
    if edited == sources or any(_pattern(e) is None or _matches_nothing(s, e) for s, e in zip(sources, edited)):
        return None
    _ORIGINAL.update(zip(edited, sources))
    return resplit(c, sources=edited)


def _changes(c: Candidate, text: str) -> bool:
    """Whether the edited regexes split ``text`` otherwise than the model's, read alike."""
    split = splitter_of(c.pipeline)
    if not isinstance(split, regex_engines.EngineSplitter):
        return True
    originals = tuple(_ORIGINAL.get(s, s) for s in split.sources)
    return split.split(text) != _original_splitter(originals, split.engine, split.tables, split.caseless).split(text)


@lru_cache(maxsize=64)
def _original_splitter(sources: tuple[str, ...], engine: str, tables: str, caseless: bool) -> regex_engines.EngineSplitter:
    return regex_engines.EngineSplitter(list(sources), engine, tables, caseless)


# Each edited regex, by the regex it was made from: ``_changes`` splits with both.
_ORIGINAL: dict[str, str] = {}


def _parts_known() -> list[str]:
    found: dict[str, None] = {}
    for sources in REGEXES.values():
        for source in map(spelled_out, sources):
            for alt in alternatives(source):
                atoms = parts(alt)
                if len(atoms) > 1:
                    found.update(dict.fromkeys(a for a in atoms if _editable(a)))
    return list(found)


def _editable(atom: str) -> bool:
    """Whether a variant may leave out or rewrite ``atom``: not a letter of a word spelt out (a
    contraction's are pretokenizer.contractions), nor a look-around (regex-engine's)."""
    return not (atom.isalnum() or atom == "'" or atom.startswith(LOOK_AROUND))


def _other_ways() -> list[tuple[str, str]]:
    """Each (part, another way to write it): two alternatives of the known regexes, alike but for
    that one part at the same place (Llama 3's ``[^\\r\\n\\p{L}\\p{N}]?\\p{L}+``, GPT-2's `` ?\\p{L}+``)."""
    models: dict[str, set[str]] = {}  # each alternative -> the regex lists that hold it
    for name, sources in REGEXES.items():
        for source in map(spelled_out, sources):
            for alt in alternatives(source):
                models.setdefault(alt, set()).add(name)
    alts = {alt: parts(alt) for alt in models}
    found: dict[tuple[str, str], None] = {}
    for a, atoms in alts.items():
        for b, others in alts.items():
            differ = [k for k, (x, y) in enumerate(zip(atoms, others)) if x != y]
            # (two alternatives of one model, its letters' and its digits', are not two ways to write one)
            if models[a] & models[b] or len(atoms) != len(others) or len(atoms) < 2 or len(differ) != 1:
                continue
            part, other = atoms[differ[0]], others[differ[0]]
            if _editable(part) and _editable(other) and _some_character_of_both(part, other):
                found[(part, other)] = None
    return list(found)


_SAMPLES = (" ", "\n", "a", "é", "1", ".", "!", "-", "\u0301")
_WORDS = ("a", "é", "1")  # (a letter, a letter beyond ASCII, a digit)


def _some_character_of_both(part: str, other: str) -> bool:
    """Whether two parts are two ways to write one: both match one character of a few kinds, and
    they agree on letters and digits (`` ?`` and ``\\s?`` are; one model's letters and another's
    punctuation, or a class of everything but spaces, are not)."""
    a, b = _pattern(part), _pattern(other)
    return a is not None and b is not None and any(a.fullmatch(ch) and b.fullmatch(ch) for ch in _SAMPLES) \
        and all(bool(a.fullmatch(ch)) == bool(b.fullmatch(ch)) for ch in _WORDS)


def variants() -> list[Variant]:
    """One variant per part of the known regexes, and one per other way to write it (the model's
    own parts are those that apply)."""
    return [*(Variant(f"{CAUSE}:-{shown(part)}", CAUSE,
                      f"the split regex with `{shown(part)}` left out of each alternative that holds it "
                      "(a regex copied with a part missing)", partial(_left_out, part), _changes)
              for part in _parts_known()),
            *(Variant(f"{CAUSE}:{shown(part)}={shown(other)}", CAUSE,
                      f"the split regex with `{shown(part)}` written `{shown(other)}`, as another model's regex "
                      "writes it, in each alternative that holds it", partial(_written_otherwise, part, other), _changes)
              for part, other in _other_ways())]
