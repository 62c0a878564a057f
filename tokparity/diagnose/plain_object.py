"""A vocabulary kept in a plain JavaScript object: the names every object inherits.

``ranks[piece]`` on an object made by ``{}`` or ``JSON.parse`` finds, for a piece that is no key
of its own, what ``Object.prototype`` holds under that name: ``ranks["toLocaleString"]`` is a
function (``ranks["__proto__"]`` Object.prototype itself), not ``undefined``. An engine that looks
a whole piece up that way (tiktoken's fast path, a BPE cache) takes that member for an id and
fails, or writes it out; one that asks ``Object.hasOwn``, keeps a ``Map``, or makes the object with
``Object.create(null)`` does not. A piece that is a token is the vocabulary's own key and is found
right ("constructor" on cl100k); a cache of pieces made by ``{}`` holds no key of its own before
it is filled, so there every such name finds the inherited member, a token or not
(``"toString" in cache``).

    >>> inherited_piece(["x", ".", "toString", "()"], lambda piece: False)
    'toString'
    >>> inherited_piece(["x", ".", "toString", "()"], {"toString": 6712}.__contains__) is None
    True
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable

# Object.prototype's own properties (ECMAScript 2024, and Annex B's): what `name in {}` is true for
# (tests/diagnose/test_blind_javascript.py checks the list against Node's).
OBJECT_PROTOTYPE = frozenset({
    "constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString", "toString",
    "valueOf", "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
})


def inherited_piece(pieces: Iterable[str], own: Callable[[str], bool]) -> str | None:
    """The first of ``pieces`` (pre-tokens, as the vocabulary spells them) that names a member of
    ``Object.prototype`` and is no key of the object's own (``own``); None where there is none."""
    return next((p for p in pieces if p in OBJECT_PROTOTYPE and not own(p)), None)


def no_key(piece: str) -> bool:
    """A cache made by ``{}``: no key of its own (what the engine caches is found right after, but
    the name is read before anything is stored under it)."""
    return False


def may_hold_one(text: str) -> bool:
    """Whether ``text`` holds one of the names at all, as typed or once NFKC folds it (full-width
    letters): the cheap test before a split."""
    return any(name in text for name in OBJECT_PROTOTYPE) or (
        not text.isascii() and any(name in unicodedata.normalize("NFKC", text) for name in OBJECT_PROTOTYPE))
