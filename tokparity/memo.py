"""A few values kept per live object, for work a run asks of one vocabulary or reference again.

A vocabulary is a mutable record, so it cannot be a dictionary key. ``PerObject`` keys by the
object's identity and holds the key weakly: an object made later at the same address is not taken
for the old one. A value that refers to its object (a pipeline holds its vocabulary) keeps it alive
until the memo lets the value go: the memo holds a few values only.

    >>> from tokparity.vocab.model import Vocab
    >>> kept, made = PerObject(size=2), []
    >>> vocab = Vocab("bpe", ["a"])
    >>> kept.get(vocab, "twice", lambda: made.append(1) or len(made))
    1
    >>> kept.get(vocab, "twice", lambda: made.append(1) or len(made))  # made once
    1
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerObject(Generic[T]):
    """The last ``size`` values made, each for an (object, key) pair; the oldest goes first."""

    def __init__(self, size: int):
        self.size = size
        self._kept: OrderedDict[tuple[int, Hashable], tuple[weakref.ref, T]] = OrderedDict()

    def get(self, obj: object, key: Hashable, make: Callable[[], T]) -> T:
        slot = (id(obj), key)
        found = self._kept.get(slot)
        if found is not None and found[0]() is obj:
            self._kept.move_to_end(slot)
            return found[1]
        value = make()
        self._kept.pop(slot, None)  # (a dead object's slot: the new value goes last, not in its place)
        self._kept[slot] = (weakref.ref(obj), value)
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)
        return value
