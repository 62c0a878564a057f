"""Which generator gives the next case: more of those that still find what is not explained.

Once a cause is found, the generators whose cases keep showing only that cause have nothing new
to say about the engine, while one bug's thousands of cases can hide a second bug found by
another kind of text (an engine without NFKC fails on every accented word, and its letter-number
bug, ``Ⅻ`` split as letters, shows only in the code points). Each generator's turn comes by
stride scheduling: it waits ``1 / weight`` between turns, and its weight falls with the share of
its recent cases that were only *explained* (every mismatch of a cause found before), down to
``FLOOR``; a case that finds something new gives its generator full weight again. Agreeing cases
leave the weight alone: a generator that finds nothing yet is still worth its turn.

The choice depends only on the outcomes fed back, so a run replayed from its journal (the same
outcomes in the same order) picks the same generators in the same order: ``--resume`` runs the
same cases as an uninterrupted run.

The generators in ``FIRST`` (the Unicode and regex-engine seams: cheap, and where ports go wrong)
run to their end before the others start.
"""

from __future__ import annotations

from collections.abc import Iterator

from tokparity.corpus import Case

AGREED, EXPLAINED, NEW = ".", "x", "n"  # a case's outcome (a journal's ledger keeps one character per case)
OUTCOMES = (AGREED, EXPLAINED, NEW)
FLOOR = 0.05  # the least weight: a generator that only repeats found causes still has a turn in 20
MEMORY = 1 / 16  # how fast a generator's explained share follows its recent cases (an average over ~16)
FIRST = ("unicode-seams",)


class Steering:
    """Interleaves the generators' cases, each taking turns by its weight."""

    def __init__(self, streams: dict[str, Iterator[Case]], every: dict[str, int] | None = None):
        every = every or {}
        self.first = [(name, streams[name]) for name in FIRST if name in streams]
        self.streams = {name: it for name, it in streams.items() if name not in FIRST}
        self.cost = {name: float(every.get(name, 1)) for name in self.streams}  # turns a case costs
        self.explained = dict.fromkeys(self.streams, 0.0)  # recent share of explained-only cases
        self.clock = dict.fromkeys(self.streams, 0.0)  # when each is next due
        self.order = {name: i for i, name in enumerate(self.streams)}

    def weight(self, name: str) -> float:
        return max(FLOOR, 1.0 - self.explained[name])

    def __iter__(self) -> Iterator[Case]:
        for _, stream in self.first:
            yield from stream
        while self.streams:
            name = min(self.streams, key=lambda n: (self.clock[n], self.order[n]))
            try:
                case = next(self.streams[name])
            except StopIteration:
                del self.streams[name]
                continue
            self.clock[name] += self.cost[name] / self.weight(name)
            yield case

    def update(self, generator: str, outcome: str) -> None:
        """What the last case of ``generator`` showed (one of OUTCOMES)."""
        if generator not in self.explained:
            return  # a FIRST generator, or Hypothesis: not steered
        if outcome == NEW:
            self.explained[generator] = 0.0
        elif outcome == EXPLAINED:
            self.explained[generator] += MEMORY * (1.0 - self.explained[generator])
        else:
            self.explained[generator] -= MEMORY * self.explained[generator]


def generator_of(case: Case) -> str:
    """The generator a case came from (``gen:NAME`` corpora), or its corpus."""
    return case.corpus[4:] if case.corpus.startswith("gen:") else case.corpus
