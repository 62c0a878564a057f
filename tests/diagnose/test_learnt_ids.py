"""One id decoded as another, or left out, learnt from a case (tokparity.diagnose.learnt_ids)."""

from __future__ import annotations

from tokparity.diagnose import learnt_ids
from tokparity.diagnose.learnt import is_learnt, said_of
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings
from tokparity.vocab import load_vocab


def reference(zoo, name: str) -> RefTokenizer:
    return RefTokenizer(load_vocab(zoo(name).primary[1]))


def test_an_id_written_as_a_special_token_is_learnt_and_said(zoo):
    ref = reference(zoo, "llama-bpe")
    ids = ref.encode("Wow! It works!", add_special=False)
    assert 0 in ids  # ('!' is id 0 of Llama 3)
    got = ref.decode_as([128004 if i == 0 else i for i in ids], AS_FILES_SAY)
    key = learnt_ids.learnt(ref, "decode", ids, 0, AS_FILES_SAY, got)
    assert key == "decode.id-as:[0, 128004]"
    assert is_learnt(key) and said_of(key) == "the ids decoded with id 0 as id 128004"
    assert learnt_ids.run_of(key)(ref, ids, 0, AS_FILES_SAY) == [got]
    assert learnt_ids.run_of(key)(ref, [40, 1], 0, AS_FILES_SAY) == [None]  # (the bug does not show)


def test_an_id_left_out_is_learnt_where_skipped_specials_write_nothing(zoo):
    ref = reference(zoo, "llama-bpe")
    skip = DecodeSettings(skip_special=True)
    ids = ref.encode("Wow! It works!", add_special=False)
    got = ref.decode_as([i for i in ids if i != 0], skip)
    key = learnt_ids.learnt(ref, "decode", ids, 0, skip, got)
    assert key == "decode.id-as:[0, null]" and said_of(key) == "the ids decoded with id 0 left out"


def test_no_pair_is_learnt_where_none_gives_the_answer(zoo):
    ref = reference(zoo, "llama-bpe")
    ids = ref.encode("Wow! It works!", add_special=False)
    assert learnt_ids.learnt(ref, "decode", ids, 0, AS_FILES_SAY, "Wow? It works?") is None
