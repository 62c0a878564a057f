"""The tokenizer.json's own regexes (Replace, Split), each under a time limit per text.

Python's ``regex`` module stands in for tokenizers' Oniguruma: same syntax for these patterns
(``\\p{L}``, ``(?i:...)``). Their Unicode versions differ (Oniguruma 6.9.10 has 16.0, ``regex``
is newer), so the patterns run on ``hf_unicode.onig_view`` of the text, where the characters
Oniguruma has not assigned are one unassigned stand-in.
The file's regexes are its author's, so they run under a time limit per text (``time_limit``):
one that backtracks for ever (``(a|a)+$`` on ``"aaa…a!"``) raises ``RegexTimeout`` for that text.
"""

from __future__ import annotations

import contextlib
import time
from contextvars import ContextVar

import regex

from tokparity.errors import BadModelFile, RegexTimeout
from tokparity.reference import hf_unicode
from tokparity.textview import clipped

# --- the file's regexes, under a time limit ---------------------------------------------------------
#
# Every regex call made for one text shares one deadline: a few seconds, more for a long text
# (the GPT-2 regex cuts a million characters in about 0.3 s), so an honest regex never meets it.

REGEX_SECONDS = 5.0  # per text, plus:
REGEX_SECONDS_PER_CHAR = 1e-5
_deadline: ContextVar[float | None] = ContextVar("tokparity_hf_regex_deadline", default=None)


@contextlib.contextmanager
def time_limit(text: str, factor: float = 1.0):
    """The deadline for every regex call made on ``text`` (an enclosing one is kept); ``factor``:
    that many texts' worth (a diagnosis encodes one text under dozens of variants)."""
    if _deadline.get() is not None:
        yield
        return
    token = _deadline.set(time.monotonic() + factor * (REGEX_SECONDS + len(text) * REGEX_SECONDS_PER_CHAR))
    try:
        yield
    finally:
        _deadline.reset(token)


def seconds_left() -> float:
    deadline = _deadline.get()
    if deadline is None:  # a call outside any text's limit (a test, a diagnosis): one text's worth
        return REGEX_SECONDS
    return max(deadline - time.monotonic(), 0.001)


class TimedRegex:
    """One of the file's regexes; ``where`` names it in messages ("pre_tokenizer Split")."""

    def __init__(self, source: str, is_regex: bool, where: str, path: str):
        self.where = where
        self.source = source
        # A literal finds in the view what it finds in the text: the view changes only unassigned
        # characters, and a literal that holds one sees the text itself. So str.replace is exact.
        self.literal = source if not is_regex and source else None
        try:
            self.rx = regex.compile(source if is_regex else regex.escape(source))
        except (regex.error, OverflowError, RecursionError, ValueError) as e:
            raise BadModelFile(path, f"{where} regex {clipped(source, 60)} does not compile ({e}); fix or remove it") \
                from None
        # a pattern naming a character Oniguruma does not know (rare) must meet it in the text
        self.view = (lambda s: s) if hf_unicode.pattern_needs_own_view(source) else hf_unicode.onig_view

    def _timed_out(self, text: str) -> RegexTimeout:
        return RegexTimeout(f"{self.where} regex {clipped(self.source, 60)} ran out of time on a {len(text)}-character "
                            "text (catastrophic backtracking?)")

    def finditer(self, text: str) -> list:
        try:
            return list(self.rx.finditer(self.view(text), timeout=seconds_left()))
        except TimeoutError:
            raise self._timed_out(text) from None

    def sub(self, content: str, text: str) -> str:
        """Each match replaced by ``content`` (matched on the view, cut from ``text``)."""
        if self.literal is not None:
            return text.replace(self.literal, content)
        out, pos = [], 0
        for m in self.finditer(text):
            out += [text[pos:m.start()], content]
            pos = m.end()
        out.append(text[pos:])
        return "".join(out)
