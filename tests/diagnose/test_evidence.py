"""The checker of report sentences (evidence.py) finds a false sentence, and passes a true one."""

from __future__ import annotations

from evidence import contradictions, reproducer

from tokparity.diagnose.search import Diagnoser
from tokparity.records import Mismatch
from tokparity.reference import RefTokenizer
from tokparity.vocab import load_vocab


def _mismatch(text, oracle, backend, evidence="", cause_evidence="", variants=()):
    return Mismatch.of("llama-spm", "edge", "x", {}, "golden", "mine", "merge-order", evidence, "model", 0, text,
                       oracle, backend, cause_evidence=cause_evidence, variants=variants)


def test_false_sentences_are_found(zoo):
    tok = RefTokenizer(load_vocab(zoo("llama-spm").primary[1]))
    diagnoser = Diagnoser(tok)
    text = "Hello world"
    oracle = tok.encode(text)
    no_prefix = diagnoser.encode(("space.dummy-prefix",), text)
    check = lambda m: contradictions(m, tok.vocab, reproducer(diagnoser, text))  # noqa: E731

    true = _mismatch(text, oracle, no_prefix, cause_evidence="the reference reproduces the backend's ids exactly with: "
                     "the dummy prefix toggled", variants=("space.dummy-prefix",))
    assert check(true) == []
    wrong_variant = _mismatch(text, oracle, no_prefix, cause_evidence="the reference reproduces the backend's ids "
                              "exactly with: spaces not escaped", variants=("space.escape",))
    assert "reproduce the backend's ids" in check(wrong_variant)[0]
    no_unk = _mismatch(text, oracle, no_prefix, evidence="the backend writes <unk> for 'Hello' where the oracle has …")
    assert check(no_unk) == ["says the backend writes <unk>, its ids have none"]
    counts = _mismatch(text, oracle, [1] + no_prefix, evidence="oracle has id 1 1×, backend 1×")
    assert check(counts) == ["says id 1 is 1× / 1×, the ids have 0× / 1×"]
    equal = _mismatch(text, oracle, oracle)
    assert check(equal) == ["a mismatch whose two id lists are equal"]
