"""A variant learnt from a case, which the catalogue does not name: an edit of the text
(``variants/text_edit.py``), a text put around it (``variants/text_affix.py``), a law of slices
(``variants/slices.py``), a WordPiece engine's character table (``variants/char_table.py``),
one id decoded as another (``learnt_ids.py``), the text cut at a length (``learnt_cut.py``),
a piece's bytes written as text (``learnt_bytes.py``) or pieces written as one text by a rule on
the token's text (``learnt_replaced.py``).
Its key holds what was learnt. These say whether a key is one, and what it does in words."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=4096)  # (asked of every variant a verdict weighs, per mismatch)
def is_learnt(key: str) -> bool:
    from tokparity.diagnose.learnt_bytes import is_notation
    from tokparity.diagnose.learnt_cut import is_cut
    from tokparity.diagnose.learnt_ids import is_swap
    from tokparity.diagnose.learnt_replaced import is_replacing
    from tokparity.diagnose.variants.char_table import is_table
    from tokparity.diagnose.variants.slices import is_slicing
    from tokparity.diagnose.variants.text_affix import is_affix
    from tokparity.diagnose.variants.text_edit import is_edit

    return is_edit(key) or is_swap(key) or is_cut(key) or is_notation(key) or is_replacing(key) or is_table(key) or is_affix(key) or is_slicing(key)


def said_of(key: str) -> str:
    """A learnt key in words: ``the text read with U+0009 as ' '``, ``the ids decoded with id 0 left out``."""
    from tokparity.diagnose import learnt_bytes, learnt_cut, learnt_ids, learnt_replaced
    from tokparity.diagnose.variants import char_table, slices, text_affix, text_edit

    if char_table.is_table(key):
        return char_table.said_of(key)
    if text_affix.is_affix(key):
        return text_affix.said_of(key)
    if slices.is_slicing(key):
        return slices.said_of(key)
    if learnt_cut.is_cut(key):
        return learnt_cut.said_of(key)
    if learnt_bytes.is_notation(key):
        return learnt_bytes.said_of(key)
    if learnt_replaced.is_replacing(key):
        return learnt_replaced.said_of(key)
    return learnt_ids.said_of(key) if learnt_ids.is_swap(key) else text_edit.said_of(key)


def does(key: str) -> str:
    """What a decoder with the learnt key does, as a mismatch's evidence says it."""
    from tokparity.diagnose import learnt_bytes, learnt_cut, learnt_edits, learnt_ids, learnt_replaced

    if learnt_cut.is_cut(key):
        return learnt_cut.does(key)
    if learnt_bytes.is_notation(key):
        return learnt_bytes.does(key)
    if learnt_replaced.is_replacing(key):
        return learnt_replaced.does(key)
    return learnt_ids.does(key) if learnt_ids.is_swap(key) else learnt_edits.does(key)
