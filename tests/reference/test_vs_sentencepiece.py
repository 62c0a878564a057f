"""ref == SentencePiece on the .model files of the zoo (unigram and BPE, English and Japanese),
and on nomic-bert-moe's unigram vocabulary rebuilt as a SentencePiece model (its GGUF carries
the tokens, scores, types and charsmap): llama.cpp and SentencePiece agree there too."""

from __future__ import annotations

import pytest
from reference_fixtures import llama, ref  # noqa: F401  (pytest fixtures)
from reference_texts import NASTY, botchan_lines, corpus_texts, pooled_texts

from tokparity.zoo import resolve_model

SPM_MODELS = ["botchan-unigram", "botchan-bpe", "kyoto-ja-unigram"]

# (model, text) -> why SentencePiece itself disagrees with another original. None so far.
KNOWN: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module")
def sentencepiece():
    spm = pytest.importorskip("sentencepiece")
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = spm.SentencePieceProcessor(model_file=str(resolve_model(name).files["spm_model"]))
        return cache[name]

    return get


@pytest.mark.parametrize("model", SPM_MODELS)
def test_ref_equals_sentencepiece(ref, sentencepiece, model):
    tok, sp = ref(model), sentencepiece(model)
    texts = pooled_texts() + corpus_texts() + botchan_lines()
    mismatches = {(model, t): (sp.encode(t), tok.encode(t)) for t in texts if sp.encode(t) != tok.encode(t)}
    unexplained = {k: v for k, v in mismatches.items() if k not in KNOWN}
    assert not unexplained, f"{len(unexplained)} of {len(texts)} differ; first: {next(iter(unexplained.items()))}"


@pytest.mark.parametrize("model", SPM_MODELS)
def test_normalizer_equals_sentencepiece(ref, sentencepiece, model):
    tok, sp = ref(model), sentencepiece(model)
    for text in NASTY + pooled_texts():
        assert tok.normalize(text) == sp.normalize(text), text


@pytest.mark.parametrize("model", SPM_MODELS)
def test_decode_equals_sentencepiece(ref, sentencepiece, model):
    tok, sp = ref(model), sentencepiece(model)
    for text in NASTY + pooled_texts()[:200]:
        ids = sp.encode(text)
        assert tok.decode(ids) == sp.decode(ids), text


@pytest.fixture(scope="module")
def nomic_as_sentencepiece(tmp_path_factory):
    """nomic-bert-moe's GGUF vocabulary written as a SentencePiece unigram ModelProto."""
    spm = pytest.importorskip("sentencepiece")
    pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
    from tokparity.vocab import load_vocab

    vocab = load_vocab(resolve_model("nomic-bert-moe").files["gguf"])
    proto = pb.ModelProto()
    for text, score, ttype in zip(vocab.tokens, vocab.scores, vocab.token_types):
        piece = proto.pieces.add()
        piece.piece, piece.score, piece.type = text, score, ttype
    proto.trainer_spec.model_type = 1
    proto.trainer_spec.unk_id = vocab.special_ids["unk"]
    proto.trainer_spec.bos_id = vocab.special_ids["bos"]
    proto.trainer_spec.eos_id = vocab.special_ids["eos"]
    proto.trainer_spec.pad_id = vocab.special_ids["pad"]
    proto.normalizer_spec.precompiled_charsmap = vocab.precompiled_charsmap
    proto.normalizer_spec.add_dummy_prefix = True
    proto.normalizer_spec.remove_extra_whitespaces = True
    path = tmp_path_factory.mktemp("nomic") / "nomic.model"
    path.write_bytes(proto.SerializeToString())
    return spm.SentencePieceProcessor(model_file=str(path))


def test_nomic_unigram_three_ways(ref, llama, nomic_as_sentencepiece):
    """The same unigram vocabulary through SentencePiece, llama.cpp and the reference."""
    tok, lc, sp = ref("nomic-bert-moe"), llama("nomic-bert-moe"), nomic_as_sentencepiece
    for text in pooled_texts() + corpus_texts()[:150] + botchan_lines()[:50]:
        expected = sp.encode(text)
        assert lc.encode(text) == expected, f"llama.cpp and SentencePiece disagree on {text!r}"
        assert tok.encode(text) == expected, text
