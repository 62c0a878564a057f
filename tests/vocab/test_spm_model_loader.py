"""The SentencePiece .model loader against SentencePiece itself."""

from __future__ import annotations

import pytest

from tokparity.vocab import load_vocab
from tokparity.vocab.model import TokenType

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is not installed: pip install 'tokparity[spm]'")

SPM_MODELS = ["botchan-unigram", "botchan-bpe", "kyoto-ja-unigram"]


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in SPM_MODELS])
def test_spm_loader_agrees_with_sentencepiece(name, zoo):
    path = zoo(name).files["spm_model"]
    vocab = load_vocab(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert vocab.size == sp.get_piece_size()
    for i in range(vocab.size):
        assert vocab.tokens[i] == sp.id_to_piece(i)
        assert vocab.scores[i] == sp.get_score(i)
        t = vocab.type_of(i)
        assert sp.is_control(i) == (t == TokenType.CONTROL)
        assert sp.is_unknown(i) == (t == TokenType.UNKNOWN)
        assert sp.is_byte(i) == (t == TokenType.BYTE)
        assert sp.is_unused(i) == (t == TokenType.UNUSED)
    assert vocab.special_ids["unk"] == sp.unk_id()
    assert vocab.special_ids["bos"] == sp.bos_id()
    assert vocab.special_ids["eos"] == sp.eos_id()
    assert ("pad" in vocab.special_ids) == (sp.pad_id() >= 0)


def test_spm_flags_and_charsmap_match_protobuf(zoo):
    """The hand-written wire reader against the protobuf package's own parse."""
    pb2 = pytest.importorskip("sentencepiece.sentencepiece_model_pb2", reason="needs protobuf")
    for name in SPM_MODELS:
        path = zoo(name).files["spm_model"]
        proto = pb2.ModelProto()
        proto.ParseFromString(path.read_bytes())
        vocab = load_vocab(path)
        n = proto.normalizer_spec
        assert vocab.precompiled_charsmap == n.precompiled_charsmap
        assert vocab.flags.add_space_prefix == n.add_dummy_prefix
        assert vocab.flags.remove_extra_whitespaces == n.remove_extra_whitespaces
        assert vocab.flags.escape_whitespaces == n.escape_whitespaces
        assert vocab.flags.byte_fallback == proto.trainer_spec.byte_fallback
        assert vocab.algorithm == {1: "ugm", 2: "spm"}[proto.trainer_spec.model_type]
        assert vocab.extra["normalizer_name"] == n.name
