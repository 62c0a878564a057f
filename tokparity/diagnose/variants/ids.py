"""The ids an engine gives back: cut after a number of ids (a limit on its output it does not say).

The variant is made for a case whose backend ids are the oracle's cut short (``truncated_variant``),
with the length they were cut at. The run's verdict then tries that one length on every case: an
engine with one limit is named by it everywhere, and its shorter cases keep agreeing.
"""

from __future__ import annotations

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants.variant import Variant


def truncated_variant(length: int) -> Variant:
    """``ids.truncated``: the ids cut after the first ``length``."""

    def apply(c: Candidate) -> Candidate | None:
        return c.replace(max_ids=length) if c.max_ids is None else None

    return Variant(f"ids.truncated:{length}", "ids.truncated", f"the ids cut after the first {length}", apply)


def truncation_of(oracle: list[int], target: list[int]) -> int | None:
    """The length the backend's ids were cut at, where they are the oracle's cut short."""
    if 0 < len(target) < len(oracle) and oracle[:len(target)] == target:
        return len(target)
    return None
