r"""A split regex's English contractions as a port spells them.

The byte-level BPE models split ``'s``, ``'t``, ``'re``, ``'ve``, ``'m``, ``'ll`` and ``'d`` off
the word before them. GPT-2 wrote them in lower case (``'s|'t|…``); cl100k, Llama 3, Qwen and
o200k wrote them case-insensitive (``(?i:'s|'t|…)``), and llama.cpp spells that out as
``(?:'[sS]|'[tT]|'[rR][eE]|…)``. A port whose regex engine has no inline ``(?i:…)`` (JavaScript
before ES2025, Go's RE2 syntax generators) writes the case forms out by hand, or drops the
``(?i:``, and a form can go missing or be misspelt: @microsoft/tiktokenizer's list has ``'eR``
where ``'rE`` belongs, so ``"'rEx"`` is one piece to it and ``'rE`` + ``x`` to tiktoken.

``edit`` finds the group wherever a split regex has it (o200k has it twice, after each kind of
word) and writes each back changed: forms left out (a negative lookahead before the model's own
group, so everything else it matches stays as it was), forms added after it, or the group read in
lower case only.

    >>> source = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|\\p{L}+"
    >>> once = edit(source, lambda group: group.without("'rE"))
    >>> once
    "(?:(?!'rE)(?i:'s|'t|'re|'ve|'m|'ll|'d))|\\p{L}+"
    >>> edit(once, lambda group: group.adding("'eR"))
    "(?:(?!'rE)(?i:'s|'t|'re|'ve|'m|'ll|'d)|'eR)|\\p{L}+"
    >>> sorted(form_keys("THEY'rEx he'eRy it's"))
    ["+'eR", "-'rE", "-'s"]
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

LETTERS = ("s", "t", "re", "ve", "m", "ll", "d")
LOWER_CASE = "(?:" + "|".join("'" + f for f in LETTERS) + ")"
# The model's group as the zoo's regexes write it: case-insensitive, llama.cpp's spelling of that,
# and GPT-2's lower-case alternatives (bare, at the head of its regex).
CASE_INSENSITIVE = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)", "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])")
BARE = "'s|'t|'re|'ve|'m|'ll|'d"

# Every case form of every contraction ("'s", "'S", "'rE", …): what a case-insensitive group matches.
ALL_CASES = tuple("'" + "".join(chars) for f in LETTERS for chars in itertools.product(*((c, c.upper()) for c in f)))
_LOWER_FORMS = tuple("'" + f for f in LETTERS)
_FORM = "'[A-Za-z]+"
_GROUP = "|".join(map(re.escape, (*CASE_INSENSITIVE, LOWER_CASE)))
# A group an edit wrote (first: it holds a spelling of the model's), or the model's own.
_ANY = re.compile(rf"\(\?:(?:\(\?!(?P<removed>{_FORM}(?:\|{_FORM})*)\))?(?P<group>{_GROUP})(?P<added>(?:\|{_FORM})*)\)"
                  rf"|(?P<own>{_GROUP}|{re.escape(BARE)})")
# At an apostrophe: two letters, then one (the longer form first, as the regexes try them).
_AT_APOSTROPHE = re.compile("'(?=([A-Za-z]{1,2}))")
# Misspelt forms looked for in a text: a two-letter contraction's letters transposed ('eR for 'rE).
_TRANSPOSED = frozenset(f[::-1] for f in LETTERS if len(f) == 2 and f != f[::-1])
# What a lower-case list does not match and the model's group does: a form with a capital, and 'ſ
# (long s), which a case-insensitive group matches by its case fold.
_NOT_LOWER_CASE = re.compile("|".join(re.escape(f) for f in ALL_CASES if not f.islower()) + "|'\u017f")


@dataclass(frozen=True)
class Contractions:
    """One contraction group of a split regex: its spelling (the model's, or lower case), the
    forms an edit left out and those it added."""

    group: str
    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()

    @property
    def forms(self) -> tuple[str, ...]:
        """The forms the group matches (its ASCII ones: a case-insensitive group also matches
        ``'ſ``, long s, which no port's list spells)."""
        return (ALL_CASES if self.group in CASE_INSENSITIVE else _LOWER_FORMS) + self.added

    def without(self, form: str) -> Contractions | None:
        return replace(self, removed=self.removed + (form,)) \
            if form in self.forms and form not in self.removed + self.added else None

    def adding(self, form: str) -> Contractions | None:
        return replace(self, added=self.added + (form,)) if form not in self.forms else None

    def lower_case(self) -> Contractions | None:
        if self.group not in CASE_INSENSITIVE:
            return None
        return Contractions(LOWER_CASE, tuple(f for f in self.removed if f in _LOWER_FORMS), self.added)

    def ascii_case(self) -> Contractions | None:
        """The case-insensitive group spelt letter by letter in ASCII (llama.cpp's spelling), which
        loses the forms only case folding knows ('ſ)."""
        if self.group != CASE_INSENSITIVE[0]:
            return None
        return Contractions(CASE_INSENSITIVE[1], self.removed, self.added)

    def spelt(self) -> str:
        lookahead = f"(?!{'|'.join(self.removed)})" if self.removed else ""
        return f"(?:{lookahead}{self.group}{''.join('|' + f for f in self.added)})"


def edit(source: str, change: Callable[[Contractions], Contractions | None]) -> str | None:
    """``source`` with every contraction group ``change``d, or None where it changed none."""
    out: list[str] = []
    pos = 0
    for m in _ANY.finditer(source):
        if m["own"] is not None:
            group = Contractions(LOWER_CASE if m["own"] == BARE else m["own"])
        else:
            group = Contractions(m["group"], _forms(m["removed"] or ""), _forms(m["added"].lstrip("|")))
        changed = change(group)
        if changed is not None:
            out += [source[pos:m.start()], changed.spelt()]
            pos = m.end()
    return "".join(out) + source[pos:] if out else None


def case_insensitive(source: str) -> bool:
    """Whether ``source`` holds a case-insensitive contraction group (one a port without inline
    ``(?i:…)`` must rewrite)."""
    return any((m["own"] or m["group"]) in CASE_INSENSITIVE for m in _ANY.finditer(source))


def _forms(alternatives: str) -> tuple[str, ...]:
    return tuple(alternatives.split("|")) if alternatives else ()


def form_keys(text: str) -> list[str]:
    """The per-case edits worth trying on ``text``: ``-F`` for each contraction form ``F`` it holds
    (case as written), ``+G`` for each misspelt form ``G`` (a two-letter contraction's letters
    transposed) it holds before a letter (in the regexes that take an apostrophe into the word
    after it, only there does the form change the split). The rare ones first (misspelt forms,
    forms with a capital), then the everyday lower-case ones ('s, 't), which a sentence holds
    many of: a search that tries only the first few tries the telling ones."""
    out = []
    for m in _AT_APOSTROPHE.finditer(text):
        letters = m[1]
        for form in ("'" + letters, "'" + letters[:1]):
            if form in ALL_CASES:
                out.append("-" + form)
                break
        else:
            after = text[m.end() + 2:m.end() + 3]
            if len(letters) == 2 and letters.lower() in _TRANSPOSED and after.isalpha():
                out.append("+'" + letters)
    return sorted(dict.fromkeys(out), key=lambda key: (key[0] == "-", key[1:].islower()))


def beyond_lower_case(text: str) -> bool:
    """Whether ``text`` holds a contraction a lower-case list does not match (``'S``, ``'Re``, …,
    ``'ſ``)."""
    return _NOT_LOWER_CASE.search(text) is not None
