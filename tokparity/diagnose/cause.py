"""What a diagnosis names: a ``Cause``, the variants that reproduce one mismatch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    """What reproduces one mismatch: catalogue names ``+``-joined in pipeline order ("" for none)."""

    name: str
    detail: str
    keys: tuple[str, ...] = ()  # the variants that reproduce it ("" causes and stage-level ones: none)
    # other sets that reproduce it too (a stage-level cause: the merges missing that do, for the verdict)
    alternatives: tuple[tuple[str, ...], ...] = ()

    @property
    def reproduced(self) -> bool:
        return bool(self.keys)


NO_CAUSE = Cause("", "")
