"""The streamers whose buffer is wrong (tokparity.diagnose.wrong_streamer), on Qwen 3's ids of
a Devanagari word: one id holds a whole character and the first two bytes of the next."""

from __future__ import annotations

import pytest

from tokparity.diagnose import wrong_streamer
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import AS_FILES_SAY
from tokparity.vocab import load_vocab
from tokparity.vocab.model import TokenType

WORD = "नमस्ते 😀"


@pytest.fixture(scope="module")
def qwen3(zoo) -> RefTokenizer:
    return RefTokenizer(load_vocab(str(zoo("qwen3").files["tokenizer_json"])))


def test_a_buffer_flushed_at_n_bytes_cuts_the_character_only_past_n(qwen3):
    ids = qwen3.encode(WORD)
    assert [len(qwen3.piece_bytes([i])[0]) for i in ids][3:5] == [5, 1]  # (्, then a character cut after 2 bytes)
    sent = wrong_streamer.flushed_at_bytes(qwen3, ids, 1, AS_FILES_SAY)
    by_size = dict(zip(wrong_streamer.FLUSH_AT_BYTES, sent))  # (the first streamer's forms, in order)
    cut, whole = "मस्\ufffd\ufffdे 😀", "मस्ते 😀"
    assert [by_size[n] for n in (2, 3, 4, 5)] == [cut] * 4
    assert [by_size[n] for n in (6, 8, 16, 32)] == [whole] * 4


def test_a_stream_without_a_prompt_counts_its_flushes_one_way_only(qwen3):
    """Counted from the prompt or from the first id is the same count when there is no prompt:
    that second form is None, not a second answer."""
    ids = qwen3.encode(WORD)
    with_prompt = wrong_streamer.flushed_every(qwen3, ids, 1, AS_FILES_SAY)
    without = wrong_streamer.flushed_every(qwen3, ids, 0, AS_FILES_SAY)
    assert len(with_prompt) == len(without) and None not in with_prompt
    assert without[1::2] == [None] * (len(without) // 2) and None not in without[::2]


def test_a_long_run_of_byte_tokens_is_not_followed_by_a_streamer_that_reads_runs(zoo):
    """Gemma 3 spells a character it lacks in byte tokens. A streamer that reads runs of them
    would read a run of 1,600 with work that grows with the square: its forms are None there."""
    gemma = RefTokenizer(load_vocab(str(zoo("gemma-3").files["tokenizer_json"])))
    byte_ids = [i for i, t in enumerate(gemma.vocab.token_types or []) if t == TokenType.BYTE]
    ids = [byte_ids[0xE0], byte_ids[0xA4]] * 800  # (0xE0 0xA4 never ends a character)
    sent = wrong_streamer.flushed_every(gemma, ids, 1, AS_FILES_SAY)
    per_streamer = len(sent) // len(wrong_streamer.STREAMERS)
    assert wrong_streamer.STREAMERS[-1].reads_runs and sent[-per_streamer:] == [None] * per_streamer
    assert None not in sent[:per_streamer]
