"""The input stage: the text as an engine is handed it (cut at a NUL or a line break, stripped, a
blank text looked up whole), before the tokenizer sees it."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants.variant import Variant


def _text_map(text_map: Callable[[str], str], c: Candidate) -> Candidate | None:
    return c.replace(text_maps=c.text_maps + (text_map,))


def cut_at_nul(text: str) -> str:
    """A C string's reading: what comes before the first NUL."""
    return text.split("\0", 1)[0]


_LINE_BREAK = re.compile("[\n\r]")


def first_line(text: str) -> str:
    """A line reader's: what comes before the first line break."""
    return _LINE_BREAK.split(text, 1)[0]


def _whitespace_piece(c: Candidate) -> Candidate | None:
    return c.replace(whitespace_piece=True)


def variants() -> list[Variant]:
    """The input stage's variants, in catalogue order."""
    return [
        Variant("input.cut:nul", "input.cut", "the text read as a C string: cut at its first NUL",
                partial(_text_map, cut_at_nul), lambda c, text: "\0" in text),
        Variant("input.cut:line", "input.cut", "only the text's first line read (cut at its first line break)",
                partial(_text_map, first_line), lambda c, text: _LINE_BREAK.search(text) is not None),
        Variant("input.strip:leading", "input.strip", "whitespace stripped from the start of the text (str.lstrip)",
                partial(_text_map, str.lstrip), lambda c, text: text[:1].isspace()),
        Variant("input.strip:both", "input.strip", "whitespace stripped from both ends of the text (str.strip)",
                partial(_text_map, str.strip), lambda c, text: text[:1].isspace() or text[-1:].isspace()),
        Variant("input.whitespace-piece", "input.whitespace-piece",
                "a blank text (whitespace only) taken as one piece: its id as typed or with the vocabulary's space mark, "
                "else <unk> or nothing", _whitespace_piece, lambda c, text: not text.strip()),
    ]
