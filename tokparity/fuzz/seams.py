r"""Unicode and regex-engine seams: the code points on which the engines tokenizers are ported to
disagree, each in the contexts a pre-tokenizer regex tells apart (the ``unicode-seams`` generator).

A port runs the model's split regex with its own language's engine, and the engines answer
``\s``, ``\d``, ``\w``, ``\p{..}`` and case-insensitive matching from different lists and
different Unicode versions:

* Python ``regex``, Oniguruma (tokenizers), Rust ``regex``/``fancy-regex``, PCRE2 with UCP:
  Unicode properties (``\s`` is White_Space, U+0085 included), each of its own Unicode version;
* ECMAScript (JavaScript, with or without ``u``): ``\s`` is its own list (no U+0085, U+FEFF
  included); ``\d`` and ``\w`` ASCII; ``\p{..}`` only with ``u``;
* RE2 / Go: ``\s`` is ``[\t\n\f\r ]`` (not even ``\v``); ``\d``, ``\w`` ASCII; PCRE2 without
  UCP, Java and C's ``isspace``: ASCII, ``\v`` included;
* Python's ``re`` and ``str.isspace``: U+001C..U+001F are spaces;
* llama.cpp: its own tables (``tokparity.reference.unicode``), Python's ``unicodedata``
  (Unicode 14 on 3.11), the ``regex`` module (newer): three Unicode versions.

A *seam* is one such disagreement and the code points on it (``seams()``, in the order tried: the
most often ported wrong first). Each code point ``X`` is placed in the contexts of ``CONTEXTS``:
``" Xa"`` (after a space and before a letter: where GPT-2's ``\s+(?!\S)`` leaves the space
alone or not, the context that shows U+0085 in JavaScript ports), ``"X"``, ``"aXb"``, ``"1X2"``,
``".Xa"``, ``"XXX"``, between newlines, after an apostrophe (``(?i:'s)`` and ``ſ``), ….

Where a seam is small every member is kept (the ``\s`` lists, the case-folding oddities).
Where it is large (ECMAScript's ASCII ``\w`` against Unicode's: every letter of every script)
the members are *representatives*, taken deterministically: the first code point of each
(general category, first word of the character's name) group, which is roughly one per
category and script or block (``LATIN``, ``CYRILLIC``, ``MATHEMATICAL``, ``FULLWIDTH``); for
code points too new for ``unicodedata`` to name, the first of each 128-code-point block. Those
seams are tried in ``CLASS_CONTEXTS`` only (the five contexts where a change of class changes
the split). The generator ignores the vocabulary and the seed: the same texts, in the same
order, for every model (about 4,650 of them).

    >>> [c.text for c in unicode_seams(None)][:3]
    [' \x85a', ' \ufeffa', ' \u180ea']
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from unicodedata import ucd_3_2_0

import regex

from tokparity.corpus import Case
from tokparity.reference import unicode as llama_tables
from tokparity.run.results import SeamCovered

NAME = "unicode-seams"

# (name, template): where each code point is placed, the most revealing first.
CONTEXTS: tuple[tuple[str, str], ...] = (
    ("space-before-letter", " {0}a"),
    ("alone", "{0}"),
    ("between-letters", "a{0}b"),
    ("after-space", " {0}"),
    ("between-digits", "1{0}2"),
    ("after-digit", "1{0}"),
    ("punctuation-before-letter", ".{0}a"),
    ("after-punctuation", ".{0}"),
    ("before-space", "a{0} b"),
    ("repeated", "{0}{0}{0}"),
    ("between-newlines", "\n{0}\n"),
    ("after-spaces", "a  {0}b"),
    ("after-apostrophe", "a'{0}"),
)
ALL_CONTEXTS = tuple(name for name, _ in CONTEXTS)
# Where a code point read as another class (a letter, a digit, a mark, punctuation) is split differently.
CLASS_CONTEXTS = ("space-before-letter", "alone", "between-letters", "between-digits", "punctuation-before-letter")
_TEMPLATES = dict(CONTEXTS)


@dataclass(frozen=True)
class Seam:
    name: str  # "\\s:ecmascript": the class, then who reads it differently
    about: str  # one line: which engines disagree, and how
    members: tuple[int, ...]  # the code points tried
    of: int  # the code points on the seam in all (more than ``members`` when representatives were taken)
    contexts: tuple[str, ...] = ALL_CONTEXTS

    @property
    def texts(self) -> int:
        return len(self.members) * len(self.contexts)

    @property
    def sampled(self) -> bool:
        return self.of > len(self.members)


# -- the tables, read once -------------------------------------------------------------------------

_LAST = 0x110000


@cache
def _every_code_point() -> str:
    """All code points as one string, index = code point (lone surrogates included: ``regex`` reads them as Cs)."""
    return "".join(map(chr, range(_LAST)))


def _matching(pattern: str) -> list[int]:
    """The code points ``pattern`` (one character) matches, by the ``regex`` module's tables."""
    return [m.start() for m in regex.finditer(pattern, _every_code_point())]


def _first_word(cp: int) -> str:
    return unicodedata.name(chr(cp), "").split(" ")[0].split("-")[0]


def _script(cp: int) -> object:
    """A grouping by script only (the first word of the name): "LATIN", "CYRILLIC", "MATHEMATICAL"."""
    return _first_word(cp) or cp >> 7


def _representatives(cps: Iterable[int], key: Callable[[int], object] | None = None, per: int = 1) -> list[int]:
    """The first ``per`` code points of each group (default key: general category and first word
    of the name, or the 128-code-point block of a character ``unicodedata`` cannot name)."""
    def default_key(cp: int) -> object:
        word = _first_word(cp)
        return (unicodedata.category(chr(cp)), word) if word else ("new", cp >> 7)
    key = key or default_key
    taken: dict[object, int] = {}
    out = []
    for cp in cps:
        k = key(cp)
        if taken.get(k, 0) < per:
            taken[k] = taken.get(k, 0) + 1
            out.append(cp)
    return out


# General categories as one byte each (index in this tuple); "n" marks an unassigned code point below.
_CATEGORIES = ("Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi",
               "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co")
_CATEGORY_BYTE = {cat: i for i, cat in enumerate(_CATEGORIES)}
# Each category byte -> its major class letter ("n": unassigned).
_TO_MAJOR = bytes(ord("n" if cat == "Cn" else cat[0]) for cat in _CATEGORIES).ljust(256, b"n")


@cache
def _categories(table: object = unicodedata) -> bytes:
    """Every code point's general category (one byte, ``_CATEGORIES``) by a ``unicodedata`` table."""
    return bytes(map(_CATEGORY_BYTE.__getitem__, map(table.category, _every_code_point())))  # type: ignore[attr-defined]


def _fill(out: bytearray, pattern: str, value: bytes) -> None:
    for m in regex.finditer(pattern, _every_code_point()):
        out[m.start():m.end()] = value * (m.end() - m.start())


# llama.cpp's category flag (one bit of a code point's flags) -> its major class letter.
_LLAMA_FLAG = {llama_tables.NUMBER: "N", llama_tables.LETTER: "L", llama_tables.ACCENT_MARK: "M",
               llama_tables.SEPARATOR: "Z", llama_tables.PUNCTUATION: "P", llama_tables.SYMBOL: "S",
               llama_tables.CONTROL: "C"}
_MAJORS = "NLMZPSC"


@cache
def _readings() -> tuple[bytes, bytes, bytes]:
    """Each code point's major class (a letter, ``n`` unassigned) by llama.cpp's tables, the
    ``regex`` module's and ``unicodedata``'s."""
    low_bytes = memoryview(llama_tables.flag_table()).cast("B")[0::2]  # the category flags are in the low byte
    to_letter = bytearray(b"n" * 256)
    for flag, letter in _LLAMA_FLAG.items():
        to_letter[flag] = ord(letter)
    llama = bytes(low_bytes).translate(to_letter)
    newest = bytearray(b"n" * _LAST)
    for major in _MAJORS:
        _fill(newest, rf"\p{{{major}}}+", major.encode())
    _fill(newest, r"\p{Cn}+", b"n")
    return llama, bytes(newest), _categories().translate(_TO_MAJOR)


def _differing(a: bytes, b: bytes, c: bytes | None = None) -> Iterator[int]:
    """The positions where the byte strings differ (compared a block at a time: most blocks agree)."""
    c = b if c is None else c
    step = 1024
    for start in range(0, _LAST, step):
        end = start + step
        if a[start:end] == b[start:end] == c[start:end]:
            continue
        yield from (cp for cp in range(start, end) if not a[cp] == b[cp] == c[cp])


@cache
def _version_disputes() -> dict[str, list[int]]:
    """Code points the three tables put in different major classes, by the newest table's class."""
    llama, newest, python = _readings()
    out: dict[str, list[int]] = {}
    for cp in _differing(llama, newest, python):
        out.setdefault(chr(newest[cp]), []).append(cp)
    return out


def _undisputed(cps: Iterable[int]) -> list[int]:
    """``cps`` without those whose class depends on the Unicode version and those of the short
    lists (they have seams of their own, the short lists in every context)."""
    skip = {cp for cps in _version_disputes().values() for cp in cps} | set(_CASE)
    return [cp for cp in cps if cp not in skip]


# -- the seams, in the order tried ------------------------------------------------------------------

_S_ECMASCRIPT = (0x85, 0xFEFF, 0x180E)
_S_ASCII = (0x0B, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000)
_S_PYTHON_RE = (0x1C, 0x1D, 0x1E, 0x1F)
_S_HAND_WRITTEN = (0x200B, 0x2060)
# Every code point some engine takes for a space and another does not (a trim, a \s, an isspace).
SPACE_SEAMS = (*_S_ECMASCRIPT, *_S_ASCII, *_S_PYTHON_RE, *_S_HAND_WRITTEN)
# Case: dotted and dotless i, sharp s, the Kelvin and Angstrom signs, long s, sigma (final ς after
# a letter), micro, titlecase ǅ, ligatures and letters whose upper case is two or three letters,
# Greek symbol variants that fold to letters.
_CASE = (0x130, 0x131, 0x1E9E, 0xDF, 0x212A, 0x212B, 0x2126, 0x17F, 0x3A3, 0x3C2, 0xB5, 0x1C5, 0xFB01, 0x149,
         0x390, 0x1E9B, 0x3D0, 0x3D1, 0x3D5, 0x3D6, 0x3F0, 0x3F1, 0x3F5, 0x1FB3, 0x1E96)


def _seam_specs() -> Iterator[tuple[str, str, list[int], int, tuple[str, ...]]]:
    """``(name, about, members, of, contexts)`` of each seam, before code points are deduplicated."""
    yield ("\\s:ecmascript", "ECMAScript's \\s (JavaScript, with or without u) lacks U+0085 and has U+FEFF; "
           "Unicode White_Space (Oniguruma, Rust, Python regex, PCRE2 UCP) the other way round; U+180E left "
           "White_Space in Unicode 6.3", list(_S_ECMASCRIPT), len(_S_ECMASCRIPT), ALL_CONTEXTS)
    yield ("\\s:re2", "RE2 / Go's \\s is [\\t\\n\\f\\r ] (no \\v); PCRE2 without UCP, Java and C isspace: ASCII "
           "only; Unicode White_Space has these", list(_S_ASCII), len(_S_ASCII), ALL_CONTEXTS)
    yield ("\\s:python-re", "Python's re and str.isspace read U+001C..U+001F as spaces; White_Space does not",
           list(_S_PYTHON_RE), len(_S_PYTHON_RE), ALL_CONTEXTS)
    yield ("\\s:hand-written", "zero-width spaces that hand-written space lists include (U+200B was a space "
           "before Unicode 4.0.1)", list(_S_HAND_WRITTEN), len(_S_HAND_WRITTEN), ALL_CONTEXTS)
    letter_numbers = [0x216B] + _matching(r"\p{Nl}")  # Ⅻ first: the letter numbers a real port split as letters
    yield ("\\p{N}:letter-numbers", "letter numbers (Nl: Ⅻ, 〇, ᛮ) are \\p{N}, not \\p{L}, and not \\d; ports "
           "that test 'is a letter' by name or Alphabetic read them as letters",
           _representatives(_undisputed(letter_numbers), per=2), len(set(letter_numbers)), ALL_CONTEXTS)
    digits = _undisputed(cp for cp in _matching(r"\p{Nd}") if cp > 0x7F)
    yield ("\\d:ascii", "decimal digits outside ASCII: \\d in Python regex, Oniguruma and Rust; not in "
           "ECMAScript, RE2, PCRE2 without UCP", _representatives(digits), len(digits), CLASS_CONTEXTS)
    others = _undisputed(_matching(r"\p{No}"))
    yield ("\\p{N}:other-numbers", "other numbers (No: ², ½, ①) are \\p{N} but not \\d; Python's str.isdigit "
           "says yes to ², no to ½", _representatives(others), len(others), CLASS_CONTEXTS)
    numeric = [cp for cp in _matching(r"(?V1)[[\p{nt=nu}\p{nt=di}\p{nt=de}]--\p{N}]")
               if unicodedata.numeric(chr(cp), None) is not None]
    yield ("\\p{N}:numeric-letters", "letters with a numeric value (一, 兆): str.isnumeric says yes, \\p{N} no",
           _representatives(numeric, per=3), len(numeric), CLASS_CONTEXTS)
    word = _undisputed(cp for cp in _matching(r"(?V1)[\w--\p{M}--\p{Nd}]") if cp > 0x7F)
    yield ("\\w:ascii", "\\w outside ASCII (letters, connector punctuation, joiners): Unicode in Python regex, "
           "Oniguruma, Rust; ASCII in ECMAScript, RE2, PCRE2 without UCP", _representatives(word, _script), len(word),
           CLASS_CONTEXTS)
    alphabetic = _undisputed(_matching(r"(?V1)[\p{Alphabetic}--\p{L}--\p{N}]"))
    yield ("\\p{L}:alphabetic", "Alphabetic but not \\p{L} (vowel signs, circled letters): letters to ports "
           "that use an isalpha-like Alphabetic, not to \\p{L}", _representatives(alphabetic, _script),
           len(alphabetic),
           CLASS_CONTEXTS)
    marks = _undisputed(_matching(r"\p{M}"))
    yield ("\\p{M}:marks", "combining marks: \\p{M} (Qwen 3.5's words take them); \\w takes them in Unicode "
           "engines, ECMAScript without u has no \\p{..}", _representatives(marks), len(marks), CLASS_CONTEXTS)
    case = _undisputed(cp for cp in _matching(r"[\p{Cased}\p{CWCM}]") if _case_odd(cp))
    yield ("lower:casefold", "case: llama.cpp lowers one code point to one (İ -> i), Python and Rust to "
           "several (İ -> i̇) with final sigma; Python regex's (?i:'s) matches 'ſ (case folding), llama.cpp's not",
           list(_CASE) + _representatives(case), len(set(case) | set(_CASE)), ALL_CONTEXTS)
    disputes = _version_disputes()
    llama, _, python = _readings()

    def by_tables(cp: int) -> object:  # how the older tables read it, and where (1,024-code-point blocks)
        return llama[cp], python[cp], cp >> 10
    for major in _MAJORS:
        if disputes.get(major):
            yield (f"\\p{{{major}}}:unicode-versions", f"\\p{{{major}}} in one Unicode version, unassigned or "
                   f"another class in another (llama.cpp's tables, regex {regex.__version__}, Python's "
                   f"unicodedata {unicodedata.unidata_version})", _representatives(disputes[major], by_tables),
                   len(disputes[major]), CLASS_CONTEXTS)
    old, now = _categories(ucd_3_2_0), _categories()
    changed = [cp for cp in _differing(old, now) if old[cp] != _CATEGORY_BYTE["Cn"]]
    yield ("category:since-3.2", "assigned in Unicode 3.2 with another general category than today's (ZWSP was "
           "a space, modifier letters were symbols)", _representatives(changed), len(changed), CLASS_CONTEXTS)
    may_change = [cp for cp in _matching(r"\P{NFKC_QC=Y}") if cp > 0x7F and now[cp] != _CATEGORY_BYTE["Cn"]]
    nfkc = [cp for cp in may_change if _nfkc_odd(cp)]
    yield ("nfkc:compatibility", "NFKC changes the character's class or length (ﬁ -> fi, ² -> 2, ㈠ -> (一)): "
           "NFKC normalizers against none", _representatives(nfkc), len(nfkc), CLASS_CONTEXTS)
    nfkc_new = [cp for cp in may_change
                if unicodedata.normalize("NFKC", chr(cp)) != ucd_3_2_0.normalize("NFKC", chr(cp))]
    yield ("nfkc:unicode-versions", f"NFKC by Unicode 3.2's tables (IDNA) against {unicodedata.unidata_version}'s",
           _representatives(nfkc_new), len(nfkc_new), CLASS_CONTEXTS)


def _case_odd(cp: int) -> bool:
    """Lowering or folding that is not one code point to one, or that differs between tables."""
    c = chr(cp)
    low = c.lower()
    return len(low) != 1 or c.casefold() != low or len(c.upper()) != 1 or ord(low) != llama_tables.to_lower(cp)


def _nfkc_odd(cp: int) -> bool:
    c = chr(cp)
    n = unicodedata.normalize("NFKC", c)
    return n != c and (len(n) != 1 or unicodedata.category(n)[0] != unicodedata.category(c)[0])


def _iter_seams() -> Iterator[Seam]:
    """The seams one at a time (the first ones need no table: the generator starts at once);
    a code point belongs to the first seam that names it."""
    seen: set[int] = set()
    for name, about, members, of, contexts in _seam_specs():
        kept = tuple(cp for cp in dict.fromkeys(members) if cp not in seen)
        seen.update(kept)
        if kept:
            yield Seam(name, about, kept, of, contexts)


@cache
def seams() -> tuple[Seam, ...]:
    """Every seam, in the order tried (reading the tables takes about a second, once)."""
    return tuple(_iter_seams())


# -- the generator -------------------------------------------------------------------------------


def seam_texts(compact: bool = False) -> Iterator[tuple[str, dict]]:
    """``(text, tags)`` of every seam: one context at a time over all of a seam's code points, so
    the first contexts of every member come before the later ones (``compact``: the ``seams``
    corpus's, ``compact_contexts`` and ``compact_members``)."""
    for seam in seams() if compact else _iter_seams():
        for context in compact_contexts(seam) if compact else seam.contexts:
            for cp in compact_members(seam) if compact else seam.members:
                yield _TEMPLATES[context].format(chr(cp)), {
                    "kind": "seam", "seam": seam.name, "context": context,
                    "codepoint": f"U+{cp:04X}"}  # (fuzz rates no per-case tag: tokparity.fuzz.loop PER_CASE_TAGS)


# The committed corpus ``seams`` (corpora/seams.jsonl, written by corpora/_build_seams.py), which
# ``compare`` runs by default: every seam, in fewer contexts and with at most ``COMPACT_MEMBERS``
# of a large seam's code points (a Unicode-version seam whole), so that it costs a default run
# seconds, not the generator's ~4,650 texts. The contexts are those where real ports' bugs showed (JavaScript ports' U+0085 after a
# space before a letter, or after two spaces; older and newer Unicode tables and letter numbers
# read as letters after a space; another class between letters or digits).
COMPACT_MEMBERS = 40
_COMPACT_CONTEXTS = {
    "\\s": ("space-before-letter", "after-spaces", "after-space", "alone", "between-letters", "between-newlines"),
    "lower": ("between-letters", "after-apostrophe", "alone"),
}
_COMPACT_CLASS_CONTEXTS = ("space-before-letter", "between-letters", "between-digits")


def compact_contexts(seam: Seam) -> tuple[str, ...]:
    """The contexts the ``seams`` corpus places ``seam``'s code points in."""
    return _COMPACT_CONTEXTS.get(seam.name.split(":")[0], _COMPACT_CLASS_CONTEXTS)


def compact_members(seam: Seam) -> tuple[int, ...]:
    """``seam``'s code points: all of a Unicode-version seam's (each may be the one an engine's
    tables lack), at most ``COMPACT_MEMBERS`` of another's, spread evenly over its list (which
    goes by category and script), the first always kept."""
    members = seam.members
    if len(members) <= COMPACT_MEMBERS or seam.name.endswith(":unicode-versions"):
        return members
    step = len(members) / COMPACT_MEMBERS
    return tuple(members[int(i * step)] for i in range(COMPACT_MEMBERS))


def unicode_seams(vocab: object = None, seed: int = 0) -> Iterator[Case]:
    """The ``gen:unicode-seams`` cases: finite, the same for every vocabulary and seed."""
    for n, (text, tags) in enumerate(seam_texts()):
        yield Case(f"{NAME}-{n:06d}", text, f"gen:{NAME}", {"generator": NAME, **tags})


# -- what a run covered ------------------------------------------------------------------------------


def seams_covered(cases_per_seam: Mapping[str, int]) -> list[SeamCovered]:
    """Which seams a run tried, from the count of ``gen:unicode-seams`` cases judged per ``seam`` tag,
    in the order of ``seams()`` (``of``: the seam's texts; ``of_code_points``: its code points in
    all, of which ``code_points`` were tried as representatives when fewer)."""
    out = []
    for seam in seams():
        run = int(cases_per_seam.get(seam.name, 0))
        out.append(SeamCovered(seam.name, seam.about, run, seam.texts, len(seam.members), seam.of, run >= seam.texts))
    return out


def coverage_line(cases_per_seam: Mapping[str, int]) -> str:
    """One line for a report: ``seams covered: \\s:ecmascript, \\s:re2, …; partly: …; not reached: …``."""
    covered = seams_covered(cases_per_seam)
    full = [c.seam for c in covered if c.complete]
    part = [f"{c.seam} ({c.cases}/{c.of})" for c in covered if 0 < c.cases < c.of]
    none = [c.seam for c in covered if c.cases == 0]
    parts = [f"seams covered: {', '.join(full) or 'none'}"]
    if part:
        parts.append(f"partly: {', '.join(part)}")
    if none:
        parts.append(f"not reached: {', '.join(none)}")
    return "; ".join(parts)
