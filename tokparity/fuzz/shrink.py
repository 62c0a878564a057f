"""Shrinking a failing text: delta debugging down to the smallest text that still fails the same way."""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Callable

from tokparity.fuzz.generators import char_rank


def _simpler(c: str) -> list[str]:
    """Replacements for ``c`` that read more simply, most desirable first (``É`` → ``é``, ``E``, ``a``)."""
    base = unicodedata.normalize("NFKD", c)[:1]
    candidates = [c.lower(), base.lower(), base, "a", "0", " ", "A", ".", "\n"]
    rank = (char_rank(c), c)
    return [r for r in dict.fromkeys(candidates) if len(r) == 1 and r != c and (char_rank(r), r) < rank]


WINDOWS = (16, 64, 256)  # characters either side of where the ids part, tried before delta debugging


def shrink(text: str, still_fails: Callable[[str], bool], deadline: float | None = None,
           focus: int | None = None) -> tuple[str, int]:
    """The smallest text (and the number of attempts) on which ``still_fails`` holds, from ``text``.

    First, where ``focus`` says at which character the two sides part: the text around it, in
    windows of ``WINDOWS`` characters either side, the first that still fails (a tokenizer's bug
    is local: a 3,000-character text then costs delta debugging a few hundred characters, not
    thousands of attempts, each a tokenization and a diagnosis). Then delta debugging: remove
    chunks of len/2, len/4, … 1 characters wherever the failure survives, then replace each
    character by a simpler one, and repeat until a pass changes nothing or the deadline
    (``time.monotonic()``) passes. ``still_fails(text)`` is assumed true on ``text``.

        >>> shrink("hello world", lambda t: "o w" in t)  # doctest: +ELLIPSIS
        ('o w', ...)
    """
    seen: dict[str, bool] = {text: True}

    def ok(candidate: str) -> bool:
        if candidate not in seen:
            seen[candidate] = bool(still_fails(candidate))
        return seen[candidate]

    def out_of_time() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    best = text
    if focus is not None and len(text) > 2 * WINDOWS[0]:
        for width in WINDOWS:
            window = text[max(0, focus - width):focus + width]
            if len(window) < len(best) and ok(window):
                best = window
                break
    changed = True
    while changed and not out_of_time():
        changed = False
        n = max(1, len(best) // 2)
        while n >= 1 and not out_of_time():
            i = 0
            while i < len(best) and not out_of_time():
                candidate = best[:i] + best[i + n:]
                if ok(candidate):
                    best, changed = candidate, True
                else:
                    i += n
            n //= 2
        for i in range(len(best)):
            if out_of_time():
                break
            for r in _simpler(best[i]):
                candidate = best[:i] + r + best[i + 1:]
                if ok(candidate):
                    best, changed = candidate, True
                    break
    return best, len(seen) - 1
