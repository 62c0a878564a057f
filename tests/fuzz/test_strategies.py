"""Hypothesis strategies: what they draw, and that shrinking ends on a minimal text."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from tokparity.errors import TokparityError
from tokparity.fuzz.strategies import (
    SCRIPTS,
    any_text,
    normalization_texts,
    script_texts,
    special_mixes,
    vocab_texts,
    whitespace_texts,
)
from tokparity.vocab import load_vocab

ENGINES = Path(__file__).resolve().parents[1] / "engines"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "engines"  # the README's demo engines
QUICK = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
FIND = settings(max_examples=2000, deadline=None, database=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def spm_vocab(zoo):
    return load_vocab(zoo("llama-spm").primary[1])


def test_vocab_texts_are_made_of_pieces(spm_vocab):
    pieces = {t for t in (spm_vocab.tokens[i].replace("\u2581", " ") for i in range(spm_vocab.size)) if t}

    @QUICK
    @given(vocab_texts(spm_vocab))
    def check(text):
        assert text
        assert any(p in text for p in pieces)

    check()


def test_whitespace_texts_have_whitespace():
    @QUICK
    @given(whitespace_texts())
    def check(text):
        assert text and any(c.isspace() or c in "\u200b" for c in text) or text.strip()

    check()
    assert find(whitespace_texts(), lambda t: "\t" in t, settings=FIND) == "\t"
    assert find(whitespace_texts(), lambda t: "  " in t and t.strip(), settings=FIND) in ("a  ", "  a")


@pytest.mark.parametrize("script", [pytest.param(s, id=s) for s in ("Cyrl", "Arab", "Deva", "Hani", "Emoji")])
def test_script_texts_use_the_script(script):
    ranges = SCRIPTS[script]

    @QUICK
    @given(script_texts(script))
    def check(text):
        assert text

    check()
    minimal = find(script_texts(script), lambda t: any(a <= ord(c) <= b for c in t for a, b in ranges),
                   settings=FIND)
    assert len(minimal) == 1


def test_script_texts_unknown_script():
    with pytest.raises(TokparityError, match="known: Arab"):
        script_texts("Klingon")


def test_normalization_texts_shrink_to_one_character():
    minimal = find(normalization_texts(), lambda t: unicodedata.normalize("NFKC", t) != t, settings=FIND)
    assert minimal == "½"
    composed = find(normalization_texts(), lambda t: unicodedata.normalize("NFC", t) != t and "\u0301" in t,
                    settings=FIND)
    assert composed == "a\u0301"


def test_special_mixes_hold_a_special_token(spm_vocab):
    @QUICK
    @given(special_mixes(spm_vocab))
    def check(text):
        assert any(s in text for s in ("<s>", "</s>", "<unk>"))

    check()
    # Shrinking strips the words and whitespace around it; whether "</s>" keeps a "<s>" beside it
    # depends on how Hypothesis orders the two choices, so both minimal forms are accepted.
    assert find(special_mixes(spm_vocab), lambda t: "</s>" in t, settings=FIND) in ("</s>", "<s></s>")


def test_any_text_draws_from_every_kind(spm_vocab):
    seen = []

    @settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(any_text(spm_vocab))
    def collect(text):
        seen.append(text)

    collect()
    assert any("<s>" in t or "</s>" in t for t in seen)
    assert any(not t.isascii() for t in seen)


def test_shrinks_the_greedy_bug_to_a_few_characters(spm_vocab, zoo):
    """The Gemma 3 story: greedy longest-match against SentencePiece merges (llama.cpp as the reference)."""
    from tokparity.backends.registry import make_backend

    sys.path.insert(0, str(EXAMPLES))
    try:
        from greedy_engine import GreedyEngine
    finally:
        sys.path.remove(str(EXAMPLES))
    greedy = GreedyEngine(spm_vocab)
    with make_backend("llama.cpp", zoo("llama-spm")) as llama:
        minimal = find(vocab_texts(spm_vocab), lambda t: greedy.encode(t) != llama.encode(t), settings=FIND)
        assert len(minimal) <= 4, minimal
        assert greedy.encode(minimal) != llama.encode(minimal)


def test_strategies_compose_with_user_tests(spm_vocab):
    """What the module docstring promises: a strategy is a plain SearchStrategy of str."""
    assert isinstance(st.one_of(vocab_texts(spm_vocab), whitespace_texts()), st.SearchStrategy)
