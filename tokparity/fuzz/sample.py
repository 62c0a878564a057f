"""The cases a fuzz run of texts keeps, at random, to weigh each backend's verdict on at the end
(tokparity.fuzz.loop). A long run judges too many cases to weigh them all, as a compare does."""

from __future__ import annotations

import random

from tokparity.records import Mismatch

MISMATCHES = 5000  # kept per backend
AGREEMENTS = 2000  # texts kept per backend that it agreed on


class Sample:
    """At most ``size`` items of the ``seen`` ones added, each as likely to be kept as another.
    ``skipped`` counts those its owner chose not to add."""

    def __init__(self, size: int, rng: random.Random):
        self.size, self.rng = size, rng
        self.items: list = []
        self.seen = self.skipped = 0

    def add(self, item: object) -> None:
        self.seen += 1
        if len(self.items) < self.size:
            self.items.append(item)
        elif (k := self.rng.randrange(self.seen)) < self.size:
            self.items[k] = item


class VerdictCases:
    """Per backend, its mismatches and the texts it agreed on, each kept in a Sample with a
    generator of its own: the same seed keeps the same cases, whatever other backends run beside.
    A mismatch that the library of the engine's own file gives too is counted, not kept: it is
    that library's, not the engine's."""

    def __init__(self, seed: int):
        self.seed = seed
        self.mismatches: dict[str, Sample] = {}
        self.agreements: dict[str, Sample] = {}

    def agreed(self, backend: str, text: str) -> None:
        self._of(self.agreements, backend, AGREEMENTS, "agreements").add(text)

    def differed(self, m: Mismatch) -> None:
        kept = self._of(self.mismatches, m.backend, MISMATCHES, "mismatches")
        if m.given_too_by:
            kept.skipped += 1
        else:
            kept.add(m)

    def agreeing(self, backend: str) -> list[str]:
        return self.agreements[backend].items if backend in self.agreements else []

    def _of(self, samples: dict[str, Sample], backend: str, size: int, kind: str) -> Sample:
        if backend not in samples:
            samples[backend] = Sample(size, random.Random(f"verdict:{self.seed}:{backend}:{kind}"))
        return samples[backend]
