"""The sentencepiece backend on the .model files of SentencePiece's own test suite."""

from __future__ import annotations

import pytest
import sentencepiece

from tokparity.backends.registry import make_backend
from tokparity.zoo import zoo_text

SPM_MODELS = ["botchan-unigram", "botchan-bpe", "kyoto-ja-unigram"]


@pytest.fixture(scope="session")
def botchan_lines():
    return zoo_text("botchan").read_text("utf-8").split("\n")


def test_hello_world(backend):
    sp = backend("sentencepiece", "botchan-unigram")
    assert sp.encode("Hello world") == [151, 88, 21, 887]
    assert sp.pieces([151, 88, 21, 887]) == ["▁He", "ll", "o", "▁world"]
    assert sp.version == sentencepiece.__version__ == "0.2.3"


@pytest.mark.parametrize("model", [pytest.param(m, id=m) for m in SPM_MODELS])
def test_decode_round_trips_to_the_normalized_text(backend, botchan_lines, model):
    """SentencePiece's promise: Decode(Encode(x)) == Normalize(x), the ▁ back to spaces and the
    dummy prefix dropped, for any text without unknown pieces (those decode as " ⁇ ")."""
    sp = backend("sentencepiece", model)
    unk = sp.sp.unk_id()
    checked, wrong = 0, []
    for line in botchan_lines:
        ids = sp.encode(line)
        if unk in ids:
            continue
        expected = sp.normalize(line).replace("▁", " ").removeprefix(" ")
        checked += 1
        if sp.decode(ids) != expected:
            wrong.append(line)
    assert wrong == [] and checked > 3800


def test_normalize_is_sentencepieces_own(backend):
    assert backend("sentencepiece", "kyoto-ja-unigram").normalize("ＡＢＣ  ｶﾀｶﾅ  x") == "▁ABC▁カタカナ▁x"


def test_add_special_adds_nothing_a_model_file_does_not_ask_for(backend, zoo):
    sp = backend("sentencepiece", "botchan-unigram")
    assert sp.encode("Hi", add_special=True) == sp.encode("Hi") == [4, 165, 25]
    forced = make_backend("sentencepiece", zoo("botchan-unigram"), add_bos=True, add_eos=True)
    assert forced.encode("Hi", add_special=True) == [1, 4, 165, 25, 2]
    assert forced.encode("Hi") == [4, 165, 25]


def test_control_token_text_is_never_parsed(backend):
    sp = backend("sentencepiece", "botchan-unigram")
    assert sp.encode("<s>Hi", parse_special=True) == sp.encode("<s>Hi") == [4, 0, 8, 0, 165, 25]
