"""The ids an engine gives back: cut after a number of ids (a limit on its output it does not say),
or each written in too few bits (``variants``).

The limit is a fixed number, or a number set by the text's length: an engine that sizes its output
buffer from the input (half its bytes plus 16, a quarter of its characters) and never grows it.
The variants are made for a case whose backend ids are the oracle's cut short (``truncations``):
one for the length they were cut at, and one for each rule of the text's length that gives it.
The run's verdict then tries each rule on every case. An engine with one limit is named by it
everywhere, and its shorter cases keep agreeing.

    >>> IdLimit.of_key("bytes/2+16").of("añb"), IdLimit.of_key("bytes/2+16").sentence()
    (18, "the ids cut after half the text's bytes plus 16")
    >>> truncations([1, 2, 3, 4, 5], [1, 2, 3], "ab")[:4]
    ['ids.truncated:3', 'ids.truncated:bytes/1+1', 'ids.truncated:bytes/2+2', 'ids.truncated:bytes/3+3']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants.variant import Variant

# The rules of a text's length tried: its bytes or characters divided by one of these, plus a
# number of at most MOST_ADDED ids (an engine's allowance for its special tokens and a margin).
DIVISORS = (1, 2, 3, 4)
MOST_ADDED = 256
_PARTS = {1: "", 2: "half ", 3: "a third of ", 4: "a quarter of "}
_KEY = re.compile(r"(?:(bytes|chars)/([1-9][0-9]{0,2})\+)?(0|[1-9][0-9]{0,8})", re.ASCII)


@dataclass(frozen=True)
class IdLimit:
    """How many ids an engine gives back at most: ``plus`` alone where ``unit`` is "ids", else the
    text's length in ``unit`` ("bytes" of UTF-8 or "chars") divided by ``per``, plus ``plus``."""

    unit: str
    per: int
    plus: int

    @classmethod
    def of_key(cls, spec: str) -> IdLimit:
        """The limit a variant key spells after ``ids.truncated:``: "512" or "bytes/2+16"."""
        found = _KEY.fullmatch(spec)
        if found is None:
            raise ValueError(f"no such limit of ids: {spec!r}")
        unit, per, plus = found.groups()
        return cls(unit, int(per), int(plus)) if unit else cls("ids", 1, int(plus))

    def key(self) -> str:
        return str(self.plus) if self.unit == "ids" else f"{self.unit}/{self.per}+{self.plus}"

    def of(self, text: str) -> int:
        """The most ids the engine gives back for ``text`` (the text as the engine was given it)."""
        if self.unit == "ids":
            return self.plus
        size = len(text.encode("utf-8", "surrogatepass")) if self.unit == "bytes" else len(text)
        return size // self.per + self.plus

    def sentence(self) -> str:
        if self.unit == "ids":
            return f"the ids cut after the first {self.plus}"
        unit = "bytes" if self.unit == "bytes" else "characters"
        part = _PARTS.get(self.per, f"1/{self.per} of ")
        return f"the ids cut after {part}the text's {unit} plus {self.plus}"


def truncated_variant(spec: str) -> Variant:
    """``ids.truncated``: the ids cut after the limit ``spec`` spells (``IdLimit.of_key``)."""
    limit = IdLimit.of_key(spec)

    def apply(c: Candidate) -> Candidate | None:
        return c.replace(id_limit=limit) if c.id_limit is None else None

    return Variant(f"ids.truncated:{limit.key()}", "ids.truncated", limit.sentence(), apply)


def truncations(oracle: list[int], target: list[int], text: str) -> list[str]:
    """The variant keys of each limit that cuts the oracle's ids to the backend's, where the
    backend's ids are the oracle's cut short: the length itself, then each rule of the text's
    length that gives it."""
    cut = len(target)
    if not (0 < cut < len(oracle) and oracle[:cut] == target):
        return []
    keys = [f"ids.truncated:{cut}"]
    for unit, size in (("bytes", len(text.encode("utf-8", "surrogatepass"))), ("chars", len(text))):
        keys += [f"ids.truncated:{unit}/{per}+{cut - size // per}" for per in DIVISORS
                 if 0 <= cut - size // per <= MOST_ADDED]
    return keys


def _uint16(ids: list[int]) -> list[int]:
    return [i % 65536 for i in ids]


def _int16(ids: list[int]) -> list[int]:
    return [(i + 32768) % 65536 - 32768 for i in ids]


def variants() -> list[Variant]:
    """``ids.wrapped``: each id kept in a 16-bit integer, as a pipeline that stores ids as numpy's
    ``uint16`` or ``int16`` does. An id too large for it wraps around. Only a vocabulary of more
    than 32,768 (or 65,536) tokens can show it: on a smaller one the variant is not tried."""
    def wrapped(kind: str, does: str, width: int, id_map) -> Variant:
        return Variant(f"ids.wrapped:{kind}", "ids.wrapped", does,
                       lambda c: c.replace(id_maps=c.id_maps + (id_map,)),
                       affects=lambda c, text: c.vocab.size > width)

    return [wrapped("uint16", "each id kept in an unsigned 16-bit integer: an id past 65,535 becomes the id "
                              "less 65,536", 65536, _uint16),
            wrapped("int16", "each id kept in a signed 16-bit integer: an id past 32,767 wraps around to a "
                             "negative number", 32768, _int16)]
