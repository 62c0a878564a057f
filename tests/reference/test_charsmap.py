"""The precompiled_charsmap reader: real blobs, and broken ones (a clear TokparityError,
never an IndexError)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokparity.errors import TokparityError
from tokparity.reference.charsmap import CharsMap
from tokparity.vocab import load_vocab
from tokparity.zoo import resolve_model


@pytest.fixture(scope="module")
def blob() -> bytes:
    return load_vocab(resolve_model("botchan-unigram").files["spm_model"]).precompiled_charsmap


def test_nfkc_examples(blob):
    cm = CharsMap(blob)
    assert cm.longest_match("ﬁx".encode()) == (3, b"fi")  # the ligature, 3 bytes
    assert cm.longest_match("½".encode()) == (2, "1⁄2".encode())
    assert cm.longest_match("ｱ".encode()) == (3, "ア".encode())
    assert cm.longest_match(b"a") is None  # plain ASCII is not in the table


@pytest.mark.parametrize("cut", [0, 1, 3, 4, 5, 100, 1028, -1])
def test_truncated_blob_is_a_clear_error(blob, cut):
    with pytest.raises(TokparityError, match="precompiled_charsmap|trie|NUL"):
        cm = CharsMap(blob[:cut])
        for text in ("ﬁx", "½", "ｱ", "a", "\u3000"):
            cm.longest_match(text.encode())


def test_trie_size_past_the_end():
    with pytest.raises(TokparityError, match="does not fit"):
        CharsMap(struct.pack("<I", 4096) + b"\0" * 16)


def test_index_outside_the_array_is_reported():
    # root BASE points far outside a one-unit array
    unit = (1000 << 10)
    cm = CharsMap(struct.pack("<I", 4) + struct.pack("<I", unit) + b"x\0")
    with pytest.raises(TokparityError, match="outside"):
        cm.longest_match(b"a")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(min_size=0, max_size=64), st.text(max_size=8))
def test_garbage_never_raises_anything_else(data, text):
    try:
        cm = CharsMap(data)
        cm.longest_match(text.encode())
        cm.can_extend(text.encode()[:3])
    except TokparityError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=2000), st.binary(min_size=1, max_size=8))
def test_corrupted_real_blob_never_raises_anything_else(blob, pos, junk):
    data = bytearray(blob)
    data[4 + pos:4 + pos + len(junk)] = junk
    try:
        cm = CharsMap(bytes(data))
        for text in ("ﬁx", "½ｱ", "abc", "\u3000Ａ"):
            cm.longest_match(text.encode())
    except TokparityError:
        pass
