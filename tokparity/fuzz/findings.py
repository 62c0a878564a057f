"""A finding is one distinct cause of mismatches on one backend, not one bug class.

A mismatch's diagnosis names its root cause by reproducing it (``tokparity.diagnose``); the cause
is what a user fixes, so it is what a fuzz run counts. One engine's normalizer bug shows up as
seven classes (merge order, whitespace, a split word, …) and is one finding; two bugs that meet
in one text (``normalizer.none+pretokenizer.regex-engine``) are two findings, each shrunk to a
text that shows it. What no variant reproduces is keyed by its class (nothing better is known of
it); a reviewed known divergence by its entry's id, and not shrunk (it is intended behaviour).

    >>> keys_of("merge-order", known="", cause="normalizer.none+space.escape")
    ['normalizer.none', 'space.escape']
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tokparity.corpus import Case, read_jsonl
from tokparity.diagnose.info import parts
from tokparity.errors import Damaged
from tokparity.records import TIE, Mismatch
from tokparity.run.journal.format import check_mismatch, journaled_fields, read_mismatch
from tokparity.run.results import FoundCause

FINDINGS_FILE = "fuzz-findings.jsonl"  # a run's findings, a corpus
UNEXPLAINED = "unexplained:"  # + class: a mismatch no variant of the reference reproduces
KNOWN = "known:"  # + entry id: a reviewed known divergence (--known, the shipped list)





def keys_of(cls: str, known: str, cause: str) -> list[str]:
    """What a mismatch counts under: its known divergence, else its cause's parts, else its class."""
    if known:
        return [KNOWN + known]
    if cause:
        return parts(cause)
    return [UNEXPLAINED + cls]


def finding_keys(m: Mismatch) -> list[str]:
    return keys_of(m.cls, m.known, m.cause)


def readings(m: Mismatch) -> list[list[str]]:
    """The cause parts of every variant set that reproduces ``m``'s ids, its named cause first.

    The diagnosis names one of them per case (a case of a greedy engine may be reproduced by
    merges taken by rank as well); a later case, or the same bug found first under the other
    name, must not make it a second finding."""
    first = finding_keys(m)
    if not m.cause or m.known:
        return [first]
    others = [sorted({key.split(":")[0] for key in alt}) for alt in m.alternatives]
    return [first] + [o for o in others if o != first]


def attribute(m: Mismatch, found: set[str]) -> list[str]:
    """The keys ``m`` counts under: the first of its readings whose parts are all found already,
    else its named cause's (then new)."""
    every = readings(m)
    return next((r for r in every if all(k in found for k in r)), every[0])


def shows(m: Mismatch | None, key: str) -> bool:
    """Whether ``m`` is a case of ``key`` (under any of its readings): what shrinking keeps."""
    return m is not None and any(key in r for r in readings(m))


def key_label(key: str) -> str:
    """A key as a report shows it: the cause itself, or what stands in for one."""
    if key.startswith(UNEXPLAINED):
        return f"no cause reproduced ({key[len(UNEXPLAINED):]})"
    if key.startswith(KNOWN):
        return f"known divergence {key[len(KNOWN):]}"
    return key


@dataclass
class Finding:
    """One (backend, cause): the smallest text that still shows it, the case that first did, and
    how many cases of the run it accounts for."""

    id: str
    model: str
    backend: str
    oracle: str
    cls: str
    text: str
    original: Case
    mismatch: Mismatch  # on the minimal text
    found_after: float  # seconds from the start of the run to the case that first showed it
    shrink_seconds: float
    probes: int
    key: str = ""  # a cause (catalogue name), or UNEXPLAINED + class, or KNOWN + entry id
    n: int = -1  # the position of the case that first showed it (a resume replays up to there)
    count: int = 1  # cases of the run it accounts for

    @property
    def known(self) -> bool:
        return self.key.startswith(KNOWN) or bool(self.mismatch.known)

    @property
    def failing(self) -> bool:
        """A bug to fix: not a reviewed known divergence, not a tie of equal score."""
        return not self.known and self.key != TIE

    def to_json(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("original", "mismatch")}
        o = self.original
        d["original"] = {"id": o.id, "text": o.text, "corpus": o.corpus, "tags": o.tags}
        d["mismatch"] = journaled_fields(self.mismatch)
        return d

    @classmethod
    def from_json(cls, d: dict) -> Finding:
        o = d["original"]
        return cls(**{**d, "original": Case(o["id"], o["text"], o["corpus"], o["tags"]),
                      "mismatch": read_mismatch(d["mismatch"])})

    @classmethod
    def checked(cls, d: object) -> Finding:
        """``from_json`` of a journal's note, each field checked first (``Damaged`` if one is wrong)."""
        if not isinstance(d, dict) or not _REQUIRED <= set(d) <= _KEYS:
            raise Damaged("a finding that is not one tokparity wrote (not an object of its keys)")
        o = d["original"]
        if not (isinstance(o, dict) and all(isinstance(o.get(k), str) for k in ("id", "text", "corpus"))
                and isinstance(o.get("tags"), dict)):
            raise Damaged("a finding whose 'original' case is not {id, text, corpus, tags}")
        check_mismatch(d["mismatch"], "a finding's mismatch")
        texts = ("id", "model", "backend", "oracle", "cls", "text", "key")
        if not all(isinstance(d.get(k, ""), str) for k in texts) or not all(
                type(d[k]) in (int, float) and math.isfinite(d[k]) for k in ("found_after", "shrink_seconds")) \
                or not all(type(d.get(k, 0)) is int for k in ("probes", "n", "count")):
            raise Damaged("a finding with a field of the wrong type")
        return cls.from_json(d)

    def record(self, seed: int) -> dict:
        """The corpus record of the finding, with its root cause (``""``: none reproduced)."""
        return {"id": self.id, "text": self.text, "cause": self.mismatch.cause,
                "tags": {"kind": "fuzz", "class": self.cls, "backend": self.backend, "model": self.model,
                         "oracle": self.oracle, "found_by": self.original.corpus, "seed": seed}}

    def summary(self) -> FoundCause:
        """The finding as summary.json lists it (and the report renders it)."""
        m = self.mismatch
        return FoundCause(self.id, self.backend, self.oracle, m.cause, self.key, key_label(self.key), self.cls,
                          self.text, self.count, round(self.found_after, 3), round(self.shrink_seconds, 3), m.known,
                          self.original.text, m.oracle_ids, m.backend_ids, m.oracle_pieces, m.backend_pieces)


_KEYS = {f.name for f in dataclasses.fields(Finding)}
_REQUIRED = _KEYS - {"key", "n", "count"}  # (a journal of tokparity 0.1 has findings without them)


def read_findings(path: str | Path) -> Iterator[Case]:
    """The findings of an earlier run, as cases (the same reader as any JSONL corpus)."""
    return read_jsonl(path, "fuzz")
