"""stream.stalls-after-change (tokparity/diagnose/wrong_edits.py): a streamer that goes silent once
its text no longer starts with what it sent, by code point or by user-perceived character."""

from __future__ import annotations

import pytest

from tokparity.diagnose.wrong_edits import _starts


@pytest.mark.parametrize("text,sent,by_cluster,starts", [
    ("ex", "e", True, True),
    ("e\u0301x", "e", False, True),  # (by code point an accent added to a letter sent is new text)
    ("e\u0301x", "e", True, False),  # (by character, as Swift's hasPrefix: the letter sent is another)
    ("\U0001F469\u200d\U0001F4BB", "\U0001F469", True, False),  # a ZWJ sequence grown
    ("\ufffd", "\ufffd", True, True),
    ("中", "\ufffd", False, False),  # a U+FFFD sent, the character that took its place
])
def test_a_text_starts_with_what_was_sent(text, sent, by_cluster, starts):
    assert _starts(text, sent, by_cluster) is starts

