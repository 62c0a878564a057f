"""A streamer that decodes all it holds at each step (transformers' TextStreamer) is emulated by
decoding every prefix of the ids. A seventh hostile campaign's text of 12,000 characters took
384 s of diagnosis that way. ``prefix_decoder`` decodes a prefix by joining bytes where that is
the reference's decode, and gives up past a bound of work."""

from __future__ import annotations

import pytest

from tokparity.diagnose import wrong_decoders as wrong
from tokparity.diagnose import wrong_streamer
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import AS_FILES_SAY
from tokparity.vocab import load_vocab

TEXT = "Hello , world ! I 'm here .\nNew line , 北京 😀 don 't\n\n end ."


@pytest.mark.parametrize("name", ["llama-bpe", "gpt-2", "llama-spm", "bert-bge", "botchan-unigram"])
def test_every_prefix_is_the_references_decode(zoo, name):
    model = zoo(name)
    ref = RefTokenizer(load_vocab(model.primary[1]))
    ids = ref.encode(TEXT * 3, add_special=True)
    upto = wrong_streamer.prefix_decoder(ref, ids, AS_FILES_SAY)
    assert upto is not None
    assert [upto(k) for k in range(len(ids) + 1)] == [wrong.decoded(ref, ids[:k], AS_FILES_SAY) for k in range(len(ids) + 1)]


def test_too_much_work_is_not_tried(zoo):
    ref = RefTokenizer(load_vocab(zoo("llama-bpe").primary[1]))
    ids = ref.encode("word , " * 5000, add_special=False)
    assert len(ids) * (len(ids) + 1) // 2 > wrong_streamer.SLOW_WORK
    assert wrong_streamer.prefix_decoder(ref, ids, AS_FILES_SAY) is None  # (llama.cpp cleans spaces up: no joined bytes)
    assert wrong_streamer.offset_into_cleaned_text(ref, ids, 0, AS_FILES_SAY) == []
