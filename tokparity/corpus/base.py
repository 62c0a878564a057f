"""What every corpus module shares: a ``Case``, ``BadCorpus``, the named corpora."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

COMMITTED = ("multilingual", "emoji", "edge", "seams")
NAMES = COMMITTED + ("llama.cpp-tests",)
CHATS = "chats"  # the committed conversations (compare --ops chat), not among the texts of "all"


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    corpus: str
    tags: dict = field(default_factory=dict, compare=False, hash=False)
    # A line not read: longer than any text of the cap can be (``load_corpus(max_chars=...)``).
    # Its length in bytes; ``text`` is empty and ``id`` is the line's default id.
    unread_bytes: int = field(default=0, compare=False)

    @cached_property
    def rate_keys(self) -> tuple[str, ...]:
        """The keys the case counts under in the report's rate table: its tags and its corpus
        (worked out once: a run judges the same cases on every model)."""
        return (*(f"{k}={v}" for k, v in self.tags.items() if isinstance(v, (str, int))), f"corpus={self.corpus}")


