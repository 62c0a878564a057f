"""A decoder that never strips the space its tokenizer put before the text (codecai 0.4.1's
``detokenize``, seventh survey) was named ``decode.space-dropped-after-bos``. ``prefix_kept``
gave no answer where the text leads with a space of its own after a first token ``▁`` that the
decoder takes whole (``' !'``: ``▁``, ``▁!``). The other cause, which joins the ids' bytes, was
the only one left to reproduce those texts."""

from __future__ import annotations

from tokparity.diagnose import wrong_decoders as wrong
from tokparity.diagnose import wrong_edits
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import AS_FILES_SAY
from tokparity.vocab import load_vocab


def test_the_first_space_kept_where_the_text_leads_with_another(zoo):
    ref = RefTokenizer(load_vocab(zoo("llama-spm").primary[1]))
    ids = [ref.vocab.tokens.index("▁"), ref.vocab.tokens.index("▁!")]
    assert wrong.decoded(ref, ids, AS_FILES_SAY) == " !"  # (SentencePiece strips the first ▁ only)
    assert "  !" in wrong.prefix_kept(ref, ids, 0, AS_FILES_SAY)
    assert "  !" in wrong_edits.space_dropped_after_bos(ref, ids, 0, AS_FILES_SAY)  # (the two tie without a BOS)


def test_nothing_is_kept_where_the_decoder_strips_nothing(zoo):
    ref = RefTokenizer(load_vocab(zoo("gemma-3").primary[1]))  # (no dummy prefix: its decoder strips no ▁)
    ids = ref.encode(" Hello", add_special=False)
    assert ref.vocab.tokens[ids[0]].startswith("▁") and wrong.decoded(ref, ids, AS_FILES_SAY) == " Hello"
    assert wrong.prefix_kept(ref, ids, 0, AS_FILES_SAY) == []
