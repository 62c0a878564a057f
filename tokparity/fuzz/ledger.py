"""A fuzz run's journal, kept small: cases are counted, and only the telling ones stored.

A fuzz run judges thousands of cases a second, nearly all agreeing or showing a cause already
found; one line per case made a two-minute run's folder 135–280 MB. The ledger writes:

- a mismatching case in full (a case record with its mismatches) while its finding key has fewer
  than ``STORED_PER_KEY`` cases stored: the first cases of each cause are there to read;
- every other case counted, every few seconds, in a ``counted`` note: the positions it covers
  (``from``/``to``, every position in between that has no record of its own), each case's outcome
  as one character (what steering needs to choose the same generators on a resume), and
  ``shapes``: the distinct (corpus, oracle, tags, verdicts, causes) of those cases, each with its
  number of cases; a shape is a case record without its case, checked as one on resume.

A resume replays the records and the shapes through ``Tally.apply`` (the same code that
counted them the first time) and skips every covered position: no case is run twice, and the
reports are those of an uninterrupted run. Cases judged after the last note and not stored are
run again (they were not counted: a kill loses at most FLUSH_SECONDS of them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from tokparity.errors import Damaged
from tokparity.fuzz.findings import keys_of
from tokparity.fuzz.steering import OUTCOMES
from tokparity.records import CaseRecord, Verdict
from tokparity.run.journal import Journal
from tokparity.run.journal.format import read_record, record_json

STORED_PER_KEY = 100  # mismatching cases stored in full per (backend, finding key); the rest counted
FLUSH_SECONDS = 3.0  # a kill loses at most this much counting (those cases are run again)


@dataclass
class Counted:
    """What a ``counted`` note holds: positions ``first`` to ``last`` not stored on their own."""

    first: int = -1
    last: int = -1
    outcomes: list[str] = field(default_factory=list)  # per position first..last (stored ones too)
    shapes: dict[tuple, tuple[CaseRecord, dict[str, str], int]] = field(default_factory=dict)  # key -> its cases

    def add(self, record: CaseRecord, causes: dict[str, str]) -> None:
        # (a key of plain values, not JSON: thousands of cases a second go through here)
        key = (record.model, record.corpus, record.oracle, tuple(record.tally),
               tuple(record.verdicts.items()),
               tuple(causes.items()))
        _, _, count = self.shapes.get(key, (record, causes, 0))
        self.shapes[key] = (record, causes, count + 1)

    def to_json(self) -> dict:
        return {"from": self.first, "to": self.last + 1, "outcomes": "".join(self.outcomes),
                "shapes": [_shape(record, causes, count) for record, causes, count in self.shapes.values()]}


def _shape(record: CaseRecord, causes: dict[str, str], count: int) -> dict:
    """A case record without its case (``case_id`` "", ``n`` 0), with its causes and number of cases."""
    d = record_json(record, with_mismatches=False)
    d["case_id"], d["n"], d["count"] = "", 0, count
    d.pop("causes", None)
    if causes:
        d["causes"] = causes
    return d


class Ledger:
    """Writes a fuzz run's cases to its journal: records for the telling ones, notes for the rest."""

    def __init__(self, journal: Journal):
        self.journal = journal
        self.pending = Counted()
        self.stored: dict[tuple[str, str], int] = {}  # (backend, key) -> cases stored in full

    def add(self, n: int, record: CaseRecord, outcome: str, keys: dict[str, list[str]],
            causes: dict[str, str]) -> None:
        """Case ``n``, judged: ``keys`` are each mismatching backend's finding keys, ``causes`` its cause."""
        telling = [(b, k) for b, ks in keys.items() for k in ks if self.stored.get((b, k), 0) < STORED_PER_KEY]
        if self.pending.first >= 0 and n != self.pending.last + 1:
            self.flush({})  # a resume runs again what a kill lost, between positions already done
        p = self.pending
        if p.first < 0:
            p.first = n
        p.outcomes.append(outcome)
        p.last = n
        if telling:
            for pair in telling:
                self.stored[pair] = self.stored.get(pair, 0) + 1
            self.journal.write(record)
        else:
            p.add(record, causes)

    def restored(self, verdicts: Mapping[str, Verdict], causes: Mapping[str, str]) -> None:
        """A stored case of the interrupted run, read back: it counts towards its keys' stored cases."""
        for backend, verdict in verdicts.items():
            if verdict.mismatch:
                for key in keys_of(verdict.cls, verdict.known, causes.get(backend, "")):
                    self.stored[(backend, key)] = self.stored.get((backend, key), 0) + 1

    def flush(self, note: dict) -> None:
        """The counted cases so far, in one note with ``note``'s fields (the time used)."""
        if self.pending.first >= 0:
            note = {**note, "counted": self.pending.to_json()}
            self.pending = Counted()
        self.journal.note(note)


def read_counted(note: dict) -> Iterator[tuple[int, str, CaseRecord | None, dict[str, str], int]]:
    """Check one ``counted`` note and yield ``(position, outcome, None, {}, 0)`` per position, then
    ``(-1, "", record, causes, count)`` per shape (``Damaged`` when anything is off)."""
    c = note["counted"]
    if not isinstance(c, dict) or set(c) != {"from", "to", "outcomes", "shapes"}:
        raise Damaged("a 'counted' note that is not {from, to, outcomes, shapes}")
    first, end, outcomes, shapes = c["from"], c["to"], c["outcomes"], c["shapes"]
    if not (type(first) is int and type(end) is int and 0 <= first < end < 2**63):
        raise Damaged(f"a 'counted' note whose positions {first!r}..{end!r} are not a range")
    if not (isinstance(outcomes, str) and len(outcomes) == end - first and set(outcomes) <= set(OUTCOMES)):
        raise Damaged("a 'counted' note whose outcomes are not one of '.xn' per position")
    if not isinstance(shapes, list):
        raise Damaged("a 'counted' note whose shapes are not a list")
    for i, outcome in enumerate(outcomes):
        yield first + i, outcome, None, {}, 0
    for shape in shapes:
        if not isinstance(shape, dict):
            raise Damaged("a 'counted' note with a shape that is not an object")
        shape = dict(shape)
        count, causes = shape.pop("count", None), shape.pop("causes", {})
        if not (type(count) is int and 0 < count <= end - first):
            raise Damaged(f"a shape counted {count!r} times in a note of {end - first} positions")
        if not (isinstance(causes, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in causes.items())):
            raise Damaged("a shape whose causes are not {backend: cause}")
        yield -1, "", read_record(shape), causes, count
