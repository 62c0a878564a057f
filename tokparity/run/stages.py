"""Where two sides of a mismatch part: the first pipeline stage (normalizer, pre-tokenizer) whose
output differs, where both sides expose it; "model" where the stages agree, "unknown" where they
cannot be read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tokparity.backends.base import Backend
from tokparity.diff.classify import Stages


def first_stage(oracle: Backend, backend: Backend, text: str, ask: Callable[[int, Callable], Any] = lambda side, call: call()
                ) -> tuple[str, Stages | None, Stages | None]:
    """The first pipeline stage at which the two sides disagree, where both expose it. ``ask``
    makes each side's call (0: the oracle's, 1: the backend's), and may count its time."""
    a, b = Stages(), Stages()
    try:
        if oracle.supports("normalize") and backend.supports("normalize"):
            a.normalized, b.normalized = ask(0, lambda: oracle.normalize(text)), ask(1, lambda: backend.normalize(text))
            if a.normalized != b.normalized:
                return "normalize", a, b
        if oracle.supports("pre_tokenize"):
            a.pre_tokens = ask(0, lambda: oracle.pre_tokenize(text))
        if a.pre_tokens is not None and backend.supports("pre_tokenize"):
            b.pre_tokens = ask(1, lambda: backend.pre_tokenize(text))
            if a.pre_tokens != b.pre_tokens:
                return "pre_tokenize", a, b
            return "model", a, b
    except Exception:  # a stage the backend offers but fails on: no verdict on stages
        return "unknown", None, None
    return ("model" if a.normalized is not None else "unknown"), a, b
