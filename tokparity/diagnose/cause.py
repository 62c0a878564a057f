"""What a diagnosis names: a ``Cause``, the variants that reproduce one mismatch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    """What reproduces one mismatch: catalogue names ``+``-joined in pipeline order ("" for none)."""

    name: str
    detail: str
    keys: tuple[str, ...] = ()  # the variants that reproduce it ("" causes and stage-level ones: none)
    alternatives: tuple[tuple[str, ...], ...] = ()  # other sets of the same size that reproduce it too

    @property
    def reproduced(self) -> bool:
        return bool(self.keys)


NO_CAUSE = Cause("", "")
