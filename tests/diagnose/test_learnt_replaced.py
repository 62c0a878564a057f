"""pieces.replaced-where (tokparity/diagnose/learnt_replaced.py): pieces written as one text by a
rule on the token, learnt from one case, on real vocabularies. A rule on the model's own special
tokens is read first as their roles (outlines-core 0.2.14 leaves the EOS out of its table); a rule
on the token's text otherwise (llama-rs's converter emptied every token holding ``s>``)."""

from __future__ import annotations

from tokparity.diagnose import learnt_replaced
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings
from tokparity.vocab import load_vocab


def _ref(zoo, model: str) -> RefTokenizer:
    return RefTokenizer(load_vocab(str(zoo(model).primary[1])))


def test_the_eos_left_out_is_read_as_the_models_eos_first(zoo):
    ref = _ref(zoo, "llama-spm")
    eos = ref.vocab.special_tokens()["eos"][0]
    ids = [eos, *range(300, 340)]
    got = [b"" if i == eos else p for i, p in zip(ids, ref.piece_bytes(ids))]
    keys = learnt_replaced.learnt(ref, ids, got)
    assert keys[0] == learnt_replaced.key_of("eos", b"", True)
    assert learnt_replaced.said_of(keys[0]) == "the piece of the model's EOS written as nothing"
    assert learnt_replaced.run_of(keys[0])(ref, ids, 0, DecodeSettings())[0] == got
    # (the text the EOS holds is read too, after the role: the run's verdict weighs both)
    assert len(keys) > 1 and not any(learnt_replaced.parse(k)[2] for k in keys[1:])
    assert all(learnt_replaced.run_of(k)(ref, ids, 0, DecodeSettings())[0] == got for k in keys)


def test_tokens_that_are_not_the_models_special_ones_are_read_by_their_text(zoo):
    ref = _ref(zoo, "gemma-3")
    tokens = ref.vocab.tokens
    emptied = [i for i in range(len(tokens)) if "s>" in tokens[i]]
    kept = [i for i in range(1000, 1100) if "s>" not in tokens[i]]
    ids = emptied + kept
    got = [b"" if i in emptied else p for i, p in zip(ids, ref.piece_bytes(ids))]
    keys = learnt_replaced.learnt(ref, ids, got)
    assert learnt_replaced.key_of("s>", b"") in keys
    assert not any(learnt_replaced.parse(k)[2] for k in keys)  # (<s> and </s> are no roles of Gemma 3's)
    # (a piece changed to two texts is no rule)
    assert learnt_replaced.learnt(ref, ids, [b"x" if i == emptied[0] else g for i, g in zip(ids, got)]) == []
